// SPDX-License-Identifier: GPL-2.0-only
/*
 * Unit tests of the flame graph writer (src/svg.c, src/flame.c) and of the
 * line splitting it shares with pprof and diff (src/recline.c): totals and
 * shares in the document, XML escaping, idle threads, labels that fit,
 * --tag-leaf, a diff graph's colours, and the time strip (its columns'
 * sums, its long blocks, svg.js's data). The document is checked to be
 * well-formed XML with python3 (a test dependency).
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "flame.h"
#include "recline.h"
#include "svg.h"
#include "unit.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* Add "frames WEIGHT" lines to a new folded (caller frees). */
static struct folded *lines_of(const char *const *lines, size_t n)
{
	struct folded *f = folded__new();

	for (size_t i = 0; f && i < n; i++) {
		char buf[512], *frames[64], *p, *sp;
		size_t nr = 0;

		snprintf(buf, sizeof(buf), "%s", lines[i]);
		sp = strrchr(buf, ' ');
		*sp = '\0';
		for (p = buf; nr < 64; p++) {
			frames[nr++] = p;
			p = strchr(p, ';');
			if (!p)
				break;
			*p = '\0';
		}
		if (folded__add(f, (const char *const *)frames, nr, strtoull(sp + 1, NULL, 10)))
			return NULL;
	}
	return f;
}

/* Two threads of process 100: 101 "work" is busy, 102 "pool" sleeps all the time. */
static void make_profile(struct profile *p, struct thread_acct th[2])
{
	memset(p, 0, sizeof(*p));
	memset(th, 0, 2 * sizeof(*th));
	th[0] = (struct thread_acct){ .pid = 100, .tid = 101, .comm = "work", .pcomm = "app",
				      .on_ns = 320000, .selected = true };
	th[0].off_ns[WPROF_OFF_SLEEP] = 600000;
	th[0].off_ns[WPROF_OFF_RUNQ] = 50000;
	th[0].off_ns[WPROF_OFF_DISK] = 40000;
	th[0].wall_ns = 1010000;
	th[1] = (struct thread_acct){ .pid = 100, .tid = 102, .comm = "pool", .pcomm = "app",
				      .wall_ns = 2000000, .selected = true };
	th[1].off_ns[WPROF_OFF_SLEEP] = 2000000;
	p->threads = th;
	p->nr_threads = 2;
	p->window_ns = 2000000;
	p->period_ns = 10101010;
}

static char *render(const char *const *lines, size_t n, bool tag_leaf)
{
	struct recording r = { .tag_leaf = tag_leaf, .ids = true,
			       .info = { .target = "pid 100 (app)", .window_ns = 2000000,
					 .freq_hz = 99 } };
	struct thread_acct th[2];
	struct folded *f = lines_of(lines, n);
	char *text = NULL;
	size_t size = 0;
	FILE *out = open_memstream(&text, &size);
	int err;

	make_profile(&r.prof, th);
	r.lines = f;
	err = f && out ? svg__write_recording(&r, out) : -ENOMEM;
	if (out)
		fclose(out);
	folded__free(f);
	CHECK_EQ_S64(err, 0, "svg__write_recording() of %zu lines%s", n,
		     tag_leaf ? " (tag at the leaf)" : "");
	return text;
}

/* The decimal value of attribute @name in the first element that has @context before it. */
static long long attr(const char *svg, const char *context, const char *name)
{
	const char *p = context ? strstr(svg, context) : svg;
	char key[64];

	if (!p)
		return -1;
	snprintf(key, sizeof(key), " %s=\"", name);
	p = strstr(p, key);
	return p ? strtoll(p + strlen(key), NULL, 10) : -1;
}

/* Well-formed XML, by python3's parser; a skip without python3. */
static void check_xml(const char *svg, const char *what)
{
	char path[] = "/tmp/wprof-test-svg.XXXXXX", cmd[256];
	int fd, rc;

	if (system("command -v python3 >/dev/null 2>&1")) {
		printf("skip check_xml: %s: no python3 to parse the document\n", what);
		return;
	}
	fd = mkstemp(path);
	if (fd < 0 || write(fd, svg, strlen(svg)) != (ssize_t)strlen(svg)) {
		CHECK(false, "%s: write a temporary file", what);
		return;
	}
	close(fd);
	snprintf(cmd, sizeof(cmd), "python3 -c 'import sys, xml.dom.minidom as m; "
		 "m.parse(sys.argv[1])' %s", path);
	rc = system(cmd);
	CHECK_EQ_S64(rc, 0, "%s: well-formed XML (python3 xml.dom.minidom)", what);
	unlink(path);
}

/* Every frame's label fits its rectangle at the width svg.c assumes a character takes. */
static void check_labels(const char *svg, const char *what)
{
	const char *p = svg;
	size_t frames = 0, bad = 0, cut = 0;

	while ((p = strstr(p, "<g class=\"f\""))) {
		const char *r = strstr(p, "<rect "), *t = strstr(p, "<text "), *end;
		double w = 0;
		size_t chars = 0;

		frames++;
		if (!r || !t || sscanf(strstr(r, "width=\"") + 7, "%lf", &w) != 1)
			break;
		t = strchr(t, '>') + 1;
		end = strstr(t, "</text>");
		for (const char *c = t; c < end; c++) {
			if (*c == '&')
				c = strchr(c, ';'); /* one character */
			chars += ((unsigned char)*c & 0xc0) != 0x80;
		}
		if (chars && chars * 7.25 + 6 > w + 0.01)
			bad++;
		cut += end - t >= 2 && !strncmp(end - 2, "..", 2);
		p = end;
	}
	CHECK(frames > 0 && bad == 0, "%s: all %zu labels fit their frames (%zu do not)", what,
	      frames, bad);
	CHECK(cut > 0, "%s: a long name in a narrow frame is cut with '..' (%zu cut)", what, cut);
}

static const char *const lines[] = {
	"on-cpu;100;101;work;main;burn 300",
	"on-cpu;100;101;work;main;a<b>&\"'c 10",
	"on-cpu;100;101;work;main;bad\xff\xfe" "byte 10",
	"on-cpu;100;101;work;main;tiny 0",
	"off-cpu:sleep;100;101;work;main;nap;clock_nanosleep_with_a_name_too_long_for_its_frame_[k] 600",
	"off-cpu:runqueue;100;101;work;main;burn 50",
	"off-cpu:disk;100;101;work;main;sync 40",
	"off-cpu:sleep;100;102;pool;wait 2000",
};

static void test_totals(void)
{
	char *svg = render(lines, ARRAY_SIZE(lines), false);

	if (!svg)
		return;
	CHECK_EQ_S64(attr(svg, "<svg", "data-total-us"), 3010, "data-total-us: every line's weight");
	CHECK_EQ_S64(attr(svg, "data-kind=\"on-cpu\"", "data-us"), 320, "on-CPU total in the legend");
	CHECK_EQ_S64(attr(svg, "data-kind=\"off-cpu:sleep\"", "data-us"), 2600, "sleep total");
	CHECK_EQ_S64(attr(svg, "data-kind=\"off-cpu:runqueue\"", "data-us"), 50, "runqueue total");
	CHECK_EQ_S64(attr(svg, "data-kind=\"off-cpu:disk\"", "data-us"), 40, "disk total");
	CHECK(strstr(svg, "on-CPU 320 \xc2\xb5s (10.6%)"), "legend: on-CPU time and share");
	CHECK_EQ_S64(attr(svg, "class=\"legend\" data-idle", "data-idle-us"), 2000, "idle threads' total");
	CHECK_EQ_S64(attr(svg, "class=\"legend\" data-idle", "data-idle-threads"), 1, "one idle thread");
	CHECK(strstr(svg, "<title>pool (2.000 ms, 66.45%) [idle thread]</title>"),
	      "the idle thread's frame says so, with its time and share");
	CHECK(strstr(svg, "hsl(210,10%,") != NULL, "idle frames are grey");
	CHECK(strstr(svg, "<title>work (") && !strstr(svg, "work (1.010 ms, 33.55%) [idle"),
	      "the busy thread is not idle");
	CHECK(strstr(svg, "data-n=\"a&lt;b&gt;&amp;&quot;&apos;c\""), "names are XML-escaped");
	CHECK(strstr(svg, "data-n=\"bad\\xff\\xfebyte\""),
	      "bytes that are not UTF-8 are shown as \\xNN");
	CHECK(!strstr(svg, "data-n=\"tiny\""), "a frame of weight 0 is not drawn");
	CHECK(strstr(svg, "frames narrower than 0.1 px not drawn"), "and that is said");
	CHECK(strstr(svg, "wprof: wall-clock time of pid 100 (app)"), "the title says what was recorded");
	CHECK(strstr(svg, "<script type=\"text/ecmascript\"><![CDATA[") &&
	      strstr(svg, "window.wprof"), "the script is embedded");
	CHECK(strstr(svg, "]]>") == strrchr(strstr(svg, "<![CDATA["), ']') - 1 &&
	      !strstr(strstr(svg, "]]>") + 3, "]]>"), "the script does not end its CDATA early");
	CHECK(!strstr(svg, "http://") || !strstr(svg, "src=\"http"), "nothing is loaded from the network");
	CHECK(!strstr(svg, "<g id=\"strip\"") && !strstr(svg, "<script type=\"application/json\""),
	      "no time strip without slices");
	check_xml(svg, "recording");
	check_labels(svg, "recording");
	free(svg);
}

static void test_tag_leaf(void)
{
	static const char *const leaf[] = {
		"100;101;work;main;burn;on-cpu 300",
		"100;101;work;main;burn;off-cpu:runqueue 50",
		"100;102;pool;wait;off-cpu:sleep 2000",
	};
	char *svg = render(leaf, ARRAY_SIZE(leaf), true);

	if (!svg)
		return;
	CHECK_EQ_S64(attr(svg, "<svg", "data-total-us"), 2350, "tag at the leaf: total");
	CHECK_EQ_S64(attr(svg, "data-kind=\"on-cpu\"", "data-us"), 300, "tag at the leaf: on-CPU");
	CHECK_EQ_S64(attr(svg, "data-kind=\"off-cpu:runqueue\"", "data-us"), 50,
		     "tag at the leaf: runqueue");
	CHECK(strstr(svg, "<title>burn (350 \xc2\xb5s, 14.89%: on-CPU 300 \xc2\xb5s, runqueue 50 "
			  "\xc2\xb5s)</title>"), "burn holds both kinds, on-CPU the larger");
	CHECK_EQ_S64(attr(svg, "class=\"legend\" data-idle", "data-idle-us"), 2000, "tag at the leaf: idle");
	check_xml(svg, "tag at the leaf");
	free(svg);
}

static void test_diff_colours(void)
{
	struct flame *fl = flame__new();
	struct svg_opts so = { .title = "d", .diff = true };
	char *svg = NULL;
	size_t size = 0;
	FILE *out;

	if (!CHECK(fl != NULL, "flame__new()"))
		return;
	CHECK_EQ_S64(flame__add(fl, "on-cpu;a;grew", 13, REC_ON_CPU, SIZE_MAX, 60, 30, 0), 0,
		     "add");
	flame__add(fl, "on-cpu;a;same", 13, REC_ON_CPU, SIZE_MAX, 40, 40, 0);
	flame__add(fl, "on-cpu;a;gone", 13, REC_ON_CPU, SIZE_MAX, 0, 30, 30);
	CHECK_EQ_S64(flame__add(fl, "on-cpu;;x", 9, REC_ON_CPU, SIZE_MAX, 1, 1, 0), -EINVAL,
		     "an empty frame is refused");
	flame__finish(fl);
	out = open_memstream(&svg, &size);
	CHECK_EQ_S64(svg__write(fl, &so, out), 0, "svg__write() of a diff");
	fclose(out);
	CHECK(strstr(svg, "data-n=\"grew\"") && strstr(svg, "hsl(0,85%,52%)"),
	      "the frame that grew most is the deepest red");
	CHECK(strstr(svg, "<title>grew (30.00% \xe2\x86\x92 60.00%, +30.00 points; 60 \xc2\xb5s in "
			  "AFTER)</title>"), "its tooltip: share before and after, points");
	CHECK(strstr(svg, "fill=\"url(#gone)\""), "what only BEFORE had is striped");
	CHECK(strstr(svg, "[only in BEFORE]"), "and says so");
	CHECK_EQ_S64(attr(svg, "data-n=\"gone\"", "data-w"), 30, "drawn as wide as it was");
	CHECK_EQ_S64(attr(svg, "<svg", "data-total-us"), 100, "total: AFTER's");
	CHECK(strstr(svg, "data-n=\"same\"") && strstr(svg, "hsl(0,0%,94%)"),
	      "an unchanged frame is neutral");
	check_xml(svg, "diff");
	free(svg);
	flame__free(fl);
}

/*
 * A tree as deep as the input makes it (flame.c has no limit of its own):
 * drawn without recursion, whatever its depth. 100000 frames, each as wide
 * as the graph, all drawn, the root's callees after the deepest frame.
 */
static void test_deep_tree(void)
{
	size_t n = 100000, len = 0;
	char *frames = malloc(n * 8 + 16), *svg = NULL;
	struct flame *fl = flame__new();
	size_t size = 0;
	FILE *f;
	int err;

	for (size_t i = 0; i < n; i++)
		len += sprintf(frames + len, "%sf%zu", i ? ";" : "", i);
	err = flame__add(fl, frames, len, REC_ON_CPU, SIZE_MAX, 10, 0, 0);
	err = err ?: flame__add(fl, "g", 1, REC_SLEEP, SIZE_MAX, 10, 0, 0);
	err = err ?: flame__finish(fl);
	CHECK_EQ_S64(err, 0, "a stack of %zu frames added", n);
	CHECK_EQ_U64(fl->max_depth, n, "as deep as its frames");
	f = open_memstream(&svg, &size);
	CHECK_EQ_S64(f ? svg__write(fl, &(struct svg_opts){ .title = "deep" }, f) : -ENOMEM, 0,
		     "written");
	if (f)
		fclose(f);
	CHECK(svg && strstr(svg, "data-n=\"f99999\" data-x=\"0\" data-w=\"10\" data-d=\"100000\"") &&
	      strstr(svg, "data-n=\"g\" data-x=\"10\" data-w=\"10\" data-d=\"1\"") &&
	      strstr(svg, "data-n=\"f99999\"") < strstr(svg, "data-n=\"g\""),
	      "every frame drawn, callers first, then the next callee of the root, to its right");
	free(svg);
	free(frames);
	flame__free(fl);
}

/*
 * Stacks that share no frame past the root: the tree stops growing at its
 * cap (some 262144 frames), what follows is merged into "[truncated]"
 * frames, and every total stays exact.
 */
static void test_node_cap(void)
{
	size_t lines = 300, depth = 1000, len, truncated = 0;
	char *frames = malloc(depth * 16);
	struct flame *fl = flame__new();
	__u64 sum = 0;
	int err = frames && fl ? 0 : -ENOMEM;

	for (size_t l = 0; l < lines && !err; l++) {
		len = 0;
		for (size_t i = 0; i < depth; i++)
			len += sprintf(frames + len, "%s%zu_%zu", i ? ";" : "", l, i);
		err = flame__add(fl, frames, len, l % 2 ? REC_ON_CPU : REC_SLEEP, SIZE_MAX, 3, 0, 0);
	}
	err = err ?: flame__finish(fl);
	CHECK_EQ_S64(err, 0, "%zu stacks of %zu frames that share none added", lines, depth);
	if (err)
		goto out;
	CHECK(fl->nr <= 262144 + lines, "the tree holds at most its cap and one frame per stack "
	      "past it (%zu frames)", fl->nr);
	for (size_t i = 1; i < fl->nr; i++) {
		if (!strcmp(fl->nodes[i].name, "[truncated]"))
			truncated += fl->nodes[i].total / 3;
		if (fl->nodes[i].parent == 0)
			sum += fl->nodes[i].total;
	}
	CHECK(truncated > 0 && truncated < lines, "the stacks past the cap drawn in part as "
	      "\"[truncated]\" (%zu)", truncated);
	CHECK_EQ_U64(sum, 3 * lines, "the root's children weigh every stack");
	CHECK_EQ_U64(fl->nodes[0].total, 3 * lines, "the root's total is exact");
	CHECK_EQ_U64(fl->kind_total[REC_ON_CPU], 3 * lines / 2, "on-CPU total exact");
	CHECK_EQ_U64(fl->kind_total[REC_SLEEP], 3 * lines / 2, "sleep total exact");
out:
	free(frames);
	flame__free(fl);
}

static void test_fmt_us(void)
{
	char buf[32];

	svg__fmt_us(buf, sizeof(buf), 999);
	CHECK_STREQ(buf, "999 \xc2\xb5s", "under 1 ms in us");
	svg__fmt_us(buf, sizeof(buf), 1000);
	CHECK_STREQ(buf, "1.000 ms", "1 ms");
	svg__fmt_us(buf, sizeof(buf), 1500000);
	CHECK_STREQ(buf, "1.500 s", "1.5 s");
}

static void test_split(void)
{
	struct rec_line rl;

	CHECK_EQ_S64(rec_line__split("off-cpu:disk;7;8;cc1;main;f", false, true, &rl), 0, "split");
	CHECK(rl.kind == REC_DISK && rl.pid == 7 && rl.tid == 8 && rl.comm.len == 3 &&
	      !strncmp(rl.body.s, "main;f", rl.body.len) && rl.body.len == 6,
	      "tag, ids, comm, body");
	CHECK_EQ_S64(rec_line__split("7;8;cc1;main;on-cpu", true, true, &rl), 0, "split, tag at leaf");
	CHECK(rl.kind == REC_ON_CPU && rl.tid == 8 && rl.body.len == 4, "tag at the leaf");
	CHECK_EQ_S64(rec_line__split("off-cpu;x;8;cc1", false, true, &rl), -EINVAL,
		     "a pid that is not a number is refused");
	CHECK_EQ_S64(rec_line__split("on-cpu;7;8", false, true, &rl), -EINVAL,
		     "a line without a comm is refused");
	CHECK_EQ_S64(rec_line__split("java;main;run", false, false, &rl), 0, "a line without a tag");
	CHECK(rl.kind == REC_OTHER && rl.comm.len == 4 && rl.body.len == 8, "is kind other");
	CHECK(rec_kind__of("off-cpu", 7) == REC_OFF && rec_kind__of("off-cpu:", 8) == REC_OTHER,
	      "--no-states' tag, and what is no tag");
}

static int collect(const char *line, __u64 weight, __u64 count, __u64 max, void *ctx)
{
	char *out = ctx;

	snprintf(out + strlen(out), 512 - strlen(out), "%s %llu/%llu/%llu|", line,
		 (unsigned long long)weight, (unsigned long long)count, (unsigned long long)max);
	return 0;
}

static void test_strip_ids(void)
{
	static const char *const in[] = {
		"on-cpu;1;2;t;f 5", "on-cpu;1;3;t;f 7", "off-cpu:sleep;1;3;t;g 1",
	};
	static const char *const leaf[] = { "1;2;t;f;on-cpu 5", "1;3;t;f;on-cpu 7" };
	struct folded *f = lines_of(in, ARRAY_SIZE(in)), *out = folded__new();
	char got[512] = "";

	CHECK_EQ_S64(rec_line__strip_ids(f, false, out), 0, "strip the ids");
	folded__for_each(out, collect, got);
	CHECK_STREQ(got, "off-cpu:sleep;t;g 1/1/1|on-cpu;t;f 12/2/7|",
		    "two threads' lines merge: weights and counts add, the max is the larger");
	folded__free(f);
	folded__free(out);
	f = lines_of(leaf, ARRAY_SIZE(leaf));
	out = folded__new();
	got[0] = '\0';
	CHECK_EQ_S64(rec_line__strip_ids(f, true, out), 0, "strip the ids, tag at the leaf");
	folded__for_each(out, collect, got);
	CHECK_STREQ(got, "t;f;on-cpu 12/2/7|", "tag at the leaf: ids are the first two frames");
	folded__free(f);
	folded__free(out);
}

/* Add @line ("frames" joined by ';') with its pieces @p[0..@n). */
static int add_pieces(struct folded *f, const char *line, const struct folded_piece *p, size_t n)
{
	char buf[512], *frames[64], *s = buf;
	size_t nr = 0;
	int err = 0;

	snprintf(buf, sizeof(buf), "%s", line);
	while (nr < 64 && (frames[nr++] = strsep(&s, ";")))
		;
	for (size_t i = 0; i < n && !err; i++)
		err = folded__add_piece(f, (const char *const *)frames, nr - 1, &p[i]);
	return err;
}

/* data-us of the band @k in column @c of the strip; 0 when it has none. */
static long long band_us(const char *svg, int c, const char *k)
{
	char col[64], key[64];
	const char *p, *end;

	snprintf(col, sizeof(col), "<g class=\"col\" data-c=\"%d\">", c);
	snprintf(key, sizeof(key), "data-k=\"%s\" data-us=\"", k);
	p = strstr(svg, col);
	if (!p)
		return -1;
	end = strstr(p, "</g>");
	p = strstr(p, key);
	return p && p < end ? strtoll(p + strlen(key), NULL, 10) : 0;
}

/*
 * The sum of the weights in svg.js's data ("p": [[frame, kind, col, span,
 * weight, col, span, weight...], ...]), and whether every byte of it is one
 * that needs no escaping in XML; -1 when it is not there.
 */
static long long data_sum(const char *svg, bool *plain)
{
	const char *start = strstr(svg, "id=\"wprof-data\">"), *end, *p;
	long long sum = 0;

	if (!start || !(end = strstr(start, "</script>")) || !(p = strstr(start, "\"p\":[")))
		return -1;
	*plain = strspn(start + 16, "0123456789,.:[]{}\"abcdefghijklmnopqrstuvwxyzCPU_-") ==
		 (size_t)(end - start - 16);
	for (p += 5; p < end && *p == '['; p = strchr(p, ']') + 2) {
		long long v[256];
		int n = 0;

		for (const char *q = p + 1; *q != ']' && n < 256; n++)
			v[n] = strtoll(q, (char **)&q, 10), q += *q == ',';
		for (int i = 4; i < n; i += 3)
			sum += v[i];
	}
	return sum;
}

/*
 * A recording of 3.5 s in 1 s slices: pieces of one slice, of three (their
 * weight spread as floor(W * k / n) - floor(W * (k - 1) / n)), of the idle
 * thread's four, one not known in time, one past the window (in its last
 * slice); and a long block. Each column's bands are exactly those sums.
 */
static void test_strip(void)
{
	static const struct {
		const char *line;
		struct folded_piece p[2];
		size_t n;
	} in[] = {
		{ "on-cpu;100;101;work;main;burn",
		  { { 0, 1, 300, 1, 300 }, { 2, 1, 200, 1, 200 } }, 2 },
		{ "off-cpu:sleep;100;101;work;main;nap", { { 0, 3, 1000, 1, 1000 } }, 1 },
		{ "off-cpu:disk;100;101;work;main;a<b>&\"]]></script>", { { 3, 1, 40, 1, 40 } }, 1 },
		{ "off-cpu:sleep;100;102;pool;wait", { { 0, 4, 2000, 1, 2000 } }, 1 },
		{ "on-cpu;100;101;work;main;when", { { 0, 0, 70, 1, 70 }, { 9, 1, 5, 1, 5 } }, 2 },
	};
	static const long long want[4][4] = {
		/* on-cpu, sleep, disk, idle */
		{ 300, 333, 0, 500 },
		{ 0, 333, 0, 500 },
		{ 200, 334, 0, 500 },
		{ 5, 0, 40, 500 },
	};
	static const char *const bands[] = { "on-cpu", "off-cpu:sleep", "off-cpu:disk", "idle" };
	struct rec_block blk = {
		.pid = 100, .tid = 101, .comm = "work", .state = WPROF_OFF_DISK,
		.offset_ns = 1500000000, .blocked_ns = 600000000, .runq_ns = 10000000,
		.stack = (char *)"main;a<b>&c;io_schedule_[k]",
	};
	struct recording r = { .ids = true, .slice_ns = 1000000000, .blocks = &blk, .nr_blocks = 1,
			       .info = { .target = "pid 100 (app)", .window_ns = 3500000000,
					 .freq_hz = 99 } };
	struct thread_acct th[2];
	char *svg = NULL, want_title[160];
	size_t size = 0;
	FILE *out;
	bool plain = false;
	int err = 0;

	make_profile(&r.prof, th);
	r.prof.window_ns = 3500000000;
	r.lines = folded__new();
	for (size_t i = 0; i < ARRAY_SIZE(in) && r.lines && !err; i++)
		err = add_pieces(r.lines, in[i].line, in[i].p, in[i].n);
	out = open_memstream(&svg, &size);
	CHECK_EQ_S64(!err && r.lines && out ? svg__write_recording(&r, out) : -ENOMEM, 0,
		     "svg__write_recording() of a recording with slices");
	if (out)
		fclose(out);
	folded__free(r.lines);
	if (!svg)
		return;
	CHECK_EQ_S64(attr(svg, "<g id=\"strip\"", "data-cols"), 4,
		     "a column per slice, the last short");
	for (int c = 0; c < 4; c++)
		for (int k = 0; k < 4; k++)
			CHECK_EQ_S64(band_us(svg, c, bands[k]), want[c][k], "column %d, %s", c,
				     bands[k]);
	CHECK(strstr(svg, "<title>0-1 s: on-CPU 300 \xc2\xb5s, sleep 333 \xc2\xb5s, idle threads "
			  "500 \xc2\xb5s"), "a column's tooltip: its time by band");
	CHECK(strstr(svg, "(full height: 0.00113)"),
	      "the strip's scale: the most threads a column has");
	snprintf(want_title, sizeof(want_title), "<title>work 101: disk 610.000 ms at 1.5 s, in "
		 "a&lt;b&gt;&amp;c</title><rect x=\"%.2f\"", 10 + 1180 * 1.5 / 3.5);
	CHECK(strstr(svg, want_title), "the long block: its thread, state, length, instant and "
	      "leaf user frame (escaped), at its instant");
	CHECK_EQ_S64(attr(svg, "class=\"blk\"", "data-ns"), 610000000, "and its length");
	CHECK_EQ_S64(data_sum(svg, &plain), 300 + 200 + 1000 + 40 + 2000 + 5,
		     "svg.js's data holds the time placed in slices, every piece once");
	CHECK(plain, "svg.js's data is numbers and the kinds' names: nothing to escape");
	CHECK(strstr(svg, "\"cols\":4,\"col_ns\":1000000000,\"window_ns\":3500000000"),
	      "svg.js's data: the columns and the window");
	CHECK_EQ_S64(attr(svg, "<foreignObject", "y"), 186, "the graph moved down under the strip");
	check_xml(svg, "recording with slices");
	free(svg);
}

/*
 * A window of 1200 slices: columns of 3 slices each (at most 590 columns). A
 * piece over slices 1-5 has 2/5 of its time in column 0 (slices 1, 2) and
 * 3/5 in column 1 (3-5); one over slices 6-14, whole columns, stays as it is.
 */
static void test_strip_columns(void)
{
	struct folded_piece a = { 1, 5, 500, 1, 500 }, b = { 6, 9, 900, 1, 900 };
	struct recording r = { .ids = true, .slice_ns = 1000000000,
			       .info = { .target = "pid 100 (app)", .window_ns = 1200000000000,
					 .freq_hz = 99 } };
	struct thread_acct th[2];
	char *svg = NULL;
	size_t size = 0;
	FILE *out;
	int err;

	make_profile(&r.prof, th);
	r.prof.window_ns = 1200000000000;
	r.lines = folded__new();
	err = r.lines ? add_pieces(r.lines, "on-cpu;100;101;work;main;burn", &a, 1) : -ENOMEM;
	err = err ?: add_pieces(r.lines, "off-cpu:sleep;100;101;work;main;nap", &b, 1);
	out = open_memstream(&svg, &size);
	CHECK_EQ_S64(!err && out ? svg__write_recording(&r, out) : -ENOMEM, 0,
		     "svg__write_recording() of 1200 slices");
	if (out)
		fclose(out);
	folded__free(r.lines);
	if (!svg)
		return;
	CHECK_EQ_S64(attr(svg, "<g id=\"strip\"", "data-cols"), 400, "400 columns");
	CHECK_EQ_S64(attr(svg, "<g id=\"strip\"", "data-col-ns"), 3000000000LL, "of 3 s each");
	CHECK_EQ_S64(band_us(svg, 0, "on-cpu"), 200, "column 0: slices 1 and 2 of 1-5");
	CHECK_EQ_S64(band_us(svg, 1, "on-cpu"), 300, "column 1: slices 3-5");
	for (int c = 2; c < 5; c++)
		CHECK_EQ_S64(band_us(svg, c, "off-cpu:sleep"), 300, "column %d: a third of 6-14", c);
	CHECK(strstr(svg, ",2,3,900]"), "svg.js's data: the piece of whole columns as one");
	check_xml(svg, "1200 slices");
	free(svg);
}

int main(void)
{
	test_split();
	test_strip_ids();
	test_fmt_us();
	test_totals();
	test_tag_leaf();
	test_diff_colours();
	test_deep_tree();
	test_node_cap();
	test_strip();
	test_strip_columns();
	return unit_done();
}
