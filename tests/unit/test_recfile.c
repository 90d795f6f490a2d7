// SPDX-License-Identifier: GPL-2.0-only
/*
 * The saved recording (recfile.c): a recording saved and read back writes
 * every format byte for byte as the original does, and saves to the same
 * bytes; a file cut at every length, with any one bit flipped, or with its
 * uncompressed content cut or flipped (which the gzip checksum would
 * otherwise catch first), is refused or read, never a crash (run it under
 * make check-sanitize); foreign files and newer versions are named so.
 * recording__filter() keeps what the same selection at record time keeps.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gzip.h"
#include "output.h"
#include "recfile.h"
#include "recline.h"
#include "report.h"
#include "statnames.h"
#include "timeline.h"
#include "unit.h"
#include "util.h"

static const char *const lines[] = {
	"on-cpu;100;101;work;main;run;burn",
	"on-cpu;100;102;pool;start;idle_loop",
	"off-cpu:sleep;100;102;pool;start;wait;futex_wait_[k]",
	"off-cpu:runqueue;100;101;work;main;run",
	"off-cpu:sleep;200;200;other;main;poll;do_sys_poll_[k]",
};

static void make(struct recording *r)
{
	static const struct thread_acct th[] = {
		{ .pid = 100, .tid = 101, .comm = "work", .pcomm = "app", .wall_ns = 2000000,
		  .on_ns = 1500000, .wall_us = 2000, .on_us = 1500, .samples = 3, .blocks = 1,
		  .max_block_ns = 500000, .selected = true },
		{ .pid = 100, .tid = 102, .comm = "pool", .pcomm = "app", .wall_ns = 2000000,
		  .on_ns = 10000, .wall_us = 2000, .on_us = 10, .samples = 1, .blocks = 4,
		  .max_block_ns = 1900000, .selected = true },
		{ .pid = 200, .tid = 200, .comm = "other", .pcomm = "other", .wall_ns = 2000000,
		  .wall_us = 2000, .blocks = 1, .max_block_ns = 2000000, .idle = true,
		  .selected = true },
	};

	memset(r, 0, sizeof(*r));
	snprintf(r->info.target, sizeof(r->info.target), "pid 100 (app), pid 200 (other)");
	snprintf(r->info.program, sizeof(r->info.program), "app");
	r->info.start_ns = 1700000000123456789ULL;
	r->info.window_ns = r->prof.window_ns = 2000000;
	r->info.period_ns = r->prof.period_ns = 10101010;
	r->info.freq_hz = 99;
	r->cmdline = strdup("wprof record -p 100,200 -o x.wprof");
	r->notes = strdup("wprof: frames without symbol names, by file: libx.so 3\n");
	r->ids = true;
	r->procs = calloc(2, sizeof(*r->procs));
	r->procs[0] = (struct rec_proc){ .pid = 100, .cmdline = strdup("/usr/bin/app --serve") };
	r->procs[1] = (struct rec_proc){ .pid = 200, .cmdline = strdup("other -x") };
	r->nr_procs = 2;
	r->prof.threads = malloc(sizeof(th));
	memcpy(r->prof.threads, th, sizeof(th));
	r->prof.threads[0].off_ns[WPROF_OFF_RUNQ] = 500000;
	r->prof.threads[0].off_us[WPROF_OFF_RUNQ] = 500;
	r->prof.threads[1].off_ns[WPROF_OFF_SLEEP] = 1990000;
	r->prof.threads[1].off_us[WPROF_OFF_SLEEP] = 1990;
	r->prof.threads[2].off_ns[WPROF_OFF_SLEEP] = 2000000;
	r->prof.threads[2].off_us[WPROF_OFF_SLEEP] = 2000;
	r->prof.nr_threads = ARRAY_SIZE(th);
	r->prof.hists = calloc(1, sizeof(*r->prof.hists));
	r->prof.hists[0].pid = 100;
	r->prof.hists[0].slots[9] = 4;
	r->prof.nr_hists = 1;
	r->prof.frames_total = 17;
	r->prof.frames_unnamed = 3;
	r->prof.unw.rows = 1234;
	r->stats[WPROF_STAT_SAMPLES] = 4;
	r->stats[WPROF_STAT_SWITCHES] = 9;
	r->drain.drains = 2;
	r->drain.max_fill_pct = 7;
	r->sym.files_failed = 1;
	/* where frames came from: pprof's mappings */
	origins__add(&r->prof.origins, "/usr/bin/app", "ab12");
	origins__add(&r->prof.origins, "/lib/libc.so.6", "");
	origins__add(&r->prof.origins, "[kernel.kallsyms]", "cd34");
	origins__note(&r->prof.origins, 100, "main", 4, 0);
	origins__note(&r->prof.origins, 100, "run", 3, 0);
	origins__note(&r->prof.origins, 100, "wait", 4, 1);
	origins__note(&r->prof.origins, 200, "main", 4, 1); /* main, any process's: two files */
	origins__note(&r->prof.origins, ORIGIN_ANY_PID, "futex_wait_[k]", 14, 2);
	/* two long blocks: one with a waker, one still going at the end */
	r->long_block_ns = 100000000;
	r->blocks = calloc(2, sizeof(*r->blocks));
	r->blocks[0] = (struct rec_block){ .pid = 100, .tid = 102, .comm = "pool",
		.state = WPROF_OFF_SLEEP, .start_ns = 1700000000223456789ULL,
		.offset_ns = 100000000, .blocked_ns = 150000000, .runq_ns = 20000,
		.stack = strdup("start;wait;futex_wait_[k]"), .waker = strdup("wake_up_[k];post;work") };
	r->blocks[1] = (struct rec_block){ .pid = 200, .tid = 200, .comm = "other",
		.state = WPROF_OFF_DISK, .open = true, .start_ns = 1700000000323456789ULL,
		.offset_ns = 200000000, .blocked_ns = 1800000000, .stack = strdup("main;read") };
	r->nr_blocks = 2;
	/* one process in a cgroup with a CPU limit */
	r->cgroups = calloc(1, sizeof(*r->cgroups));
	r->cgroups[0] = (struct cg_limit){ .pid = 100, .path = "/lim \"x\"", .quota_us = 20000,
		.period_us = 100000, .start = { 10, 5, 1000000000 },
		.end = { 40, 34, 3400000000ULL }, .read_end = true };
	r->nr_cgroups = 1;
	/* who ran instead while work waited: pool's time in two pieces, added into one */
	r->ran = calloc(4, sizeof(*r->ran));
	r->ran[0] = (struct ran_entry){ 100, 101, 0, 100, 102, "pool", 100000 };
	r->ran[1] = (struct ran_entry){ 100, 101, 0, 300, 301, "hog", 300000 };
	r->ran[2] = (struct ran_entry){ 100, 101, 0, 0, WPROF_RAN_NOT_KNOWN, "", 20000 };
	r->ran[3] = (struct ran_entry){ 100, 101, 0, 100, 102, "pool", 50000 };
	r->nr_ran = raninst__sort(r->ran, 4);
	r->ran_recorded = true;
	r->lines = folded__new();
	for (size_t i = 0; i < ARRAY_SIZE(lines); i++) {
		struct rec_splitter sp = {};

		rec_splitter__add(&sp, r->lines, lines[i], strlen(lines[i]), 0, 0, 100 * (i + 1),
				  i + 1, 50);
		rec_splitter__free(&sp);
	}
}

/*
 * Slices of 1 ms over the 2 ms window: the pool thread's sleep line (300 us)
 * has 100 us in slice 0 and 200 us in slice 1, where its one interval ended;
 * the other thread's sleep (500 us), 250 us in each of slices 0 and 1, one
 * piece spread over both.
 */
static void add_pieces(struct recording *r)
{
	static const struct folded_piece pool[] = {
		{ .slice = 0, .span = 1, .weight = 100 },
		{ .slice = 1, .span = 1, .weight = 200, .count = 3, .max = 250 },
	};
	static const struct folded_piece other[] = {
		{ .slice = 0, .span = 2, .weight = 500, .count = 5, .max = 300 },
	};
	const char *a = lines[2], *b = lines[4];

	static const __u64 t0[WPROF_STATE_CNT] = { [WPROF_ON_CPU] = 100000,
						    [WPROF_OFF_SLEEP] = 400000 };
	static const __u64 t1[WPROF_STATE_CNT] = { [WPROF_ON_CPU] = 100000,
						    [WPROF_OFF_SLEEP] = 900000 };

	r->slice_ns = 1000000;
	/* the pool thread's exact times: its lines in a range are weighed to them */
	threadtimes__add(&r->prof.times, 100, 102, 0, 0, 1, t0);
	threadtimes__add(&r->prof.times, 100, 102, 0, 1, 1, t1);
	CHECK_EQ_S64(folded__put_pieces(r->lines, a, strlen(a), pool, 2), 0, "pool's pieces");
	CHECK_EQ_S64(folded__put_pieces(r->lines, b, strlen(b), other, 1), 0, "other's piece");
}

/* What @r writes in @format (or the summary for -1), malloc'd. */
static char *written(struct recording *r, int format, size_t *len)
{
	char *buf = NULL;
	FILE *f = open_memstream(&buf, len);
	int err;

	if (!f)
		return NULL;
	if (format < 0) {
		report__summary(r, f, true);
		err = 0;
	} else {
		err = output__write(r, format, f);
	}
	fclose(f);
	if (err) {
		free(buf);
		return NULL;
	}
	return buf;
}

static void test_roundtrip(void)
{
	static const struct {
		int format;
		const char *name;
	} formats[] = {
		{ FORMAT_FOLDED, "folded" }, { FORMAT_JSON, "json" }, { FORMAT_THREADS, "threads" },
		{ FORMAT_SVG, "svg" },       { FORMAT_PPROF, "pprof" }, { FORMAT_WPROF, "wprof" },
		{ -1, "summary" },
	};
	struct recording a, b;
	char why[256], *file;
	size_t len;
	int err;

	make(&a);
	add_pieces(&a);
	file = written(&a, FORMAT_WPROF, &len);
	CHECK(file && len > 2, "saved (%zu bytes)", len);
	if (!file)
		return;
	err = recfile__parse(file, len, &b, why, sizeof(why));
	CHECK_EQ_S64(err, 0, "read back (%s)", err ? why : "ok");
	if (err)
		goto out;
	for (size_t i = 0; i < ARRAY_SIZE(formats); i++) {
		size_t la = 0, lb = 0;
		char *x = written(&a, formats[i].format, &la), *y = written(&b, formats[i].format, &lb);

		CHECK(x && y && la == lb && !memcmp(x, y, la),
		      "%s: the read recording writes what the saved one did (%zu, %zu bytes)",
		      formats[i].name, la, lb);
		free(x);
		free(y);
	}
	CHECK_STREQ(b.cmdline, a.cmdline, "wprof's command line kept");
	CHECK(b.nr_blocks == 2 && b.long_block_ns == a.long_block_ns &&
	      b.blocks[1].open && b.blocks[1].state == WPROF_OFF_DISK &&
	      b.blocks[0].runq_ns == 20000 && b.blocks[0].start_ns == a.blocks[0].start_ns &&
	      !strcmp(b.blocks[0].waker ?: "", "wake_up_[k];post;work") && !b.blocks[1].waker,
	      "the long blocks kept, field by field");
	CHECK_STREQ(recording__cmdline(&b, 200) ?: "", "other -x", "a process's command line kept");
	CHECK(b.nr_cgroups == 1 && b.cgroups[0].pid == 100 && b.cgroups[0].read_end &&
	      !b.cgroups[0].v2 && !strcmp(b.cgroups[0].path, "/lim \"x\"") &&
	      b.cgroups[0].quota_us == 20000 && b.cgroups[0].period_us == 100000 &&
	      b.cgroups[0].start.throttled_ns == 1000000000 &&
	      b.cgroups[0].end.throttled_periods == 34, "the cgroup's limit and counts kept");
	CHECK(b.ran_recorded && b.nr_ran == 3 && b.ran[0].runner_tid == 301 &&
	      b.ran[1].runner_tid == 102 && b.ran[1].ns == 150000 &&
	      !strcmp(b.ran[1].comm, "pool"), "who ran instead kept, a pair's pieces added");
	{
		size_t n;
		char *js = written(&b, FORMAT_JSON, &n), *tb = written(&b, FORMAT_THREADS, &n);

		CHECK(js && strstr(js, "\"ran_instead\": [{\"pid\": 300, \"tid\": 301, \"comm\": "
				       "\"hog\", \"us\": 300}, {\"pid\": 100, \"tid\": 102, "
				       "\"comm\": \"pool\", \"us\": 150}, {\"comm\": \"[not known]\", "
				       "\"us\": 50}]"),
		      "json: ran_instead by time, the rest of runqueue_us not known");
		CHECK(tb && strstr(tb, " RAN_INSTEAD\n") && strstr(tb, " hog/301:60%,pool/102:30%\n"),
		      "-f threads: RAN_INSTEAD, shares of the runqueue time");
		free(js);
		free(tb);
	}
	recording__free(&b);
out:
	recording__free(&a);
	free(file);
}

/*
 * The bits to flip: every bit of the first 64 bytes (magic, version, the
 * first section headers), then one bit a byte, in turn: 8 times fewer
 * parses, where a file of a few hundred bytes has few kinds of field.
 */
static size_t next_bit(size_t i)
{
	return i < 64 * 8 ? i + 1 : i + 9;
}

/* Never a crash; a failure always says why. */
static bool tolerated(const void *buf, size_t len, bool *ok)
{
	struct recording r;
	char why[256] = "";
	int err = recfile__parse(buf, len, &r, why, sizeof(why));

	*ok = !err;
	if (!err) {
		size_t n = 0;
		/* what the writers take apart was checked: they must not trip on it */
		char *out = written(&r, FORMAT_JSON, &n);

		free(out);
		out = written(&r, FORMAT_PPROF, &n);
		free(out);
		recording__free(&r);
		return true;
	}
	return why[0] && strcmp(why, "?") && r.lines == NULL && r.prof.threads == NULL;
}

static void test_cut_and_flipped(void)
{
	struct recording a;
	size_t len, bad = 0, loaded = 0;
	char *file;
	bool ok;

	make(&a);
	file = written(&a, FORMAT_WPROF, &len);
	recording__free(&a);
	if (!CHECK(file, "saved"))
		return;
	for (size_t n = 0; n < len; n++) {
		bad += !tolerated(file, n, &ok);
		loaded += ok;
	}
	CHECK_EQ_U64(bad, 0, "cut at each of %zu lengths: refused with a reason", len);
	CHECK_EQ_U64(loaded, 0, "no cut file is read as whole");
	bad = 0;
	for (size_t i = 0; i < len * 8; i = next_bit(i)) {
		file[i / 8] ^= 1 << (i % 8);
		bad += !tolerated(file, len, &ok);
		file[i / 8] ^= 1 << (i % 8);
	}
	CHECK_EQ_U64(bad, 0, "bits of %zu bytes flipped: read or refused with a reason", len);
	free(file);
}

/* The same on the uncompressed content, compressed again: past the gzip checksum. */
static void test_content_cut_and_flipped(void)
{
	struct recording a;
	size_t len, raw_len, bad = 0, loaded = 0;
	char *file, *gz;
	void *raw;
	bool ok;

	make(&a);
	file = written(&a, FORMAT_WPROF, &len);
	recording__free(&a);
	if (!CHECK(file && !gzip__read(file, len, 1 << 20, &raw, &raw_len), "saved and inflated"))
		return;
	for (size_t n = 0; n < raw_len; n++) {
		size_t gl = 0;
		FILE *f = open_memstream(&gz, &gl);

		gzip__write(raw, n, f);
		fclose(f);
		bad += !tolerated(gz, gl, &ok);
		loaded += ok;
		free(gz);
	}
	CHECK_EQ_U64(bad, 0, "content cut at each of %zu lengths: refused with a reason", raw_len);
	CHECK_EQ_U64(loaded, 0, "no cut content is read as whole");
	bad = 0;
	for (size_t i = 0; i < raw_len * 8; i = next_bit(i)) {
		size_t gl = 0;
		FILE *f = open_memstream(&gz, &gl);

		((char *)raw)[i / 8] ^= 1 << (i % 8);
		gzip__write(raw, raw_len, f);
		fclose(f);
		((char *)raw)[i / 8] ^= 1 << (i % 8);
		bad += !tolerated(gz, gl, &ok);
		free(gz);
	}
	CHECK_EQ_U64(bad, 0, "content of %zu bytes, bits flipped: read or refused", raw_len);
	free(raw);
	free(file);
}

/* parse @content (gzip'd here) and return the reason given. */
static int reason(const void *content, size_t n, char *why, size_t size)
{
	struct recording r;
	char *gz = NULL;
	size_t gl = 0;
	FILE *f = open_memstream(&gz, &gl);
	int err;

	gzip__write(content, n, f);
	fclose(f);
	err = recfile__parse(gz, gl, &r, why, size);
	free(gz);
	if (!err)
		recording__free(&r);
	return err;
}

static void test_foreign_and_newer(void)
{
	static const char passwd[] = "root:x:0:0:root:/root:/bin/bash\n";
	unsigned char newer[12] = "WPROFREC";
	struct recording r;
	char why[256];
	int err;

	err = recfile__parse(passwd, sizeof(passwd) - 1, &r, why, sizeof(why));
	CHECK(err == -ENOMSG && strstr(why, "not a wprof recording"), "text: %s", why);
	err = reason(passwd, sizeof(passwd) - 1, why, sizeof(why));
	CHECK(err == -ENOMSG && !strcmp(why, "not a wprof recording"), "gzip of text: %s", why);
	newer[8] = RECFILE_VERSION + 1;
	err = reason(newer, sizeof(newer), why, sizeof(why));
	CHECK(err == -EPROTONOSUPPORT && strstr(why, "is newer than this wprof"),
	      "a newer version: %s", why);
	err = recfile__parse("", 0, &r, why, sizeof(why));
	CHECK(err == -ENOMSG, "an empty file: %s", why);
}

/* --from/--to: the second slice alone, exact from the pieces; no slices: refused. */
static void test_range(void)
{
	struct recording r;
	__u64 from = 1000000, to = 1500000, unplaced = 0;
	char *text;
	size_t len = 0;

	make(&r);
	add_pieces(&r);
	/* in the 2 ms window: 0.1-1.62 ms, and 1.2 ms on past its end */
	r.blocks[0].offset_ns = 100000;
	r.blocks[0].blocked_ns = 1500000;
	r.blocks[1].offset_ns = 1200000;
	CHECK_EQ_S64(timeline__range(&r, &from, &to, &unplaced), 0, "the range 1-1.5 ms");
	CHECK(from == 1000000 && to == 2000000 && r.prof.window_ns == 1000000,
	      "rounded out to the slice 1-2 ms (%llu-%llu)", (unsigned long long)from,
	      (unsigned long long)to);
	text = written(&r, FORMAT_FOLDED, &len);
	CHECK_STREQ(text ? text : "", "off-cpu:sleep;other;main;poll;do_sys_poll_[k] 250\n"
		    "off-cpu:sleep;pool;start;wait;futex_wait_[k] 900\n",
		    "each line's time in the slice (pool's weighed to its exact time), no other line");
	CHECK_EQ_U64(unplaced, 700, "the lines without pieces: 100 + 200 + 400 us left out");
	CHECK(r.prof.nr_threads == 2 && r.prof.threads[0].tid == 102 &&
	      r.prof.threads[0].off_us[WPROF_OFF_SLEEP] == 900 && r.prof.threads[0].on_us == 100 &&
	      r.prof.threads[1].off_us[WPROF_OFF_SLEEP] == 250,
	      "pool: its exact 900 us asleep, 100 us on-CPU; other: its line's 250 us");
	{
		const struct thread_time *tm = threadtimes__get(&r.prof.times, 102, 0);

		CHECK(tm && tm->nr == 1 && tm->rows[0].slice == 0 && tm->rows[0].span == 1 &&
		      tm->rows[0].ns[WPROF_OFF_SLEEP] == 900000,
		      "pool's time by slice: the range's slice alone, as its first");
	}
	CHECK(r.nr_blocks == 2 && r.blocks[0].offset_ns == 0 && r.blocks[0].blocked_ns == 600000 &&
	      r.blocks[0].runq_ns == 20000 && !r.blocks[0].open &&
	      r.blocks[1].offset_ns == 200000 && r.blocks[1].blocked_ns == 800000 &&
	      r.blocks[1].open, "the long blocks cut to the range");
	free(text);
	recording__free(&r);

	make(&r);
	from = 0;
	to = 1;
	CHECK_EQ_S64(timeline__range(&r, &from, &to, &unplaced), -ENODATA,
		     "a recording without slices: refused");
	recording__free(&r);
}

static void test_filter(void)
{
	struct recording r;
	struct rec_filter f = { .thread_glob = "pool" };
	char *text;
	size_t len = 0;

	make(&r);
	CHECK_EQ_S64(recording__filter(&r, &f), 0, "--thread-name pool");
	text = written(&r, FORMAT_FOLDED, &len);
	CHECK_STREQ(text ? text : "", "off-cpu:sleep;pool;start;wait;futex_wait_[k] 300\n"
		    "on-cpu;pool;start;idle_loop 200\n", "only the pool thread's lines");
	CHECK_EQ_U64(r.prof.threads_left_out, 2, "two threads left out");
	CHECK(r.nr_blocks == 1 && r.blocks[0].tid == 102, "only the pool thread's long block");
	free(text);
	recording__free(&r);

	make(&r);
	f = (struct rec_filter){ .no_idle_threads = true };
	CHECK_EQ_S64(recording__filter(&r, &f), 0, "--no-idle-threads");
	CHECK_EQ_U64(folded__nr(r.lines), 4, "the idle thread's line left out");
	recording__free(&r);

	make(&r);
	f = (struct rec_filter){ .pids = (const __u32[]){ 200 }, .nr_pids = 1 };
	CHECK_EQ_S64(recording__filter(&r, &f), 0, "-p 200");
	CHECK_EQ_U64(folded__nr(r.lines), 1, "the one line of pid 200");
	recording__free(&r);
}

/* The length of @s's longest line, in frames. */
static size_t deepest_line(const char *s)
{
	size_t max = 0, n = 1;

	for (; *s; s++) {
		if (*s == ';')
			n++;
		if (*s == '\n') {
			max = n > max ? n : max;
			n = 1;
		}
	}
	return max;
}

/*
 * A recording with a stack of 40000 frames and one of a 2 MiB frame (not
 * one wprof wrote: it writes at most 514 frames of 255 bytes): read, both
 * cut to the limits and counted; every format written (a flame graph drawn
 * by recursion overflowed at some 35000 frames); the count saved along.
 */
static void test_deep_lines(void)
{
	static const char mark[] = "[cut: too long to read]";
	size_t n = 40000, len = 0, flen, wlen;
	char *line = malloc((2 << 20) + 1), *file, *again, *text, why[256];
	struct rec_splitter sp = {};
	const char *frames[] = { "on-cpu", "100", "101", "work", NULL };
	struct recording a, b, c;
	int err;

	make(&a);
	len += sprintf(line, "on-cpu;100;101;work");
	for (size_t i = 0; i < n; i++)
		len += sprintf(line + len, ";f%zu", i);
	rec_splitter__add(&sp, a.lines, line, len, 0, 0, 700, 1, 700);
	rec_splitter__free(&sp);
	frames[4] = line;
	memset(line, 'x', 2 << 20);
	line[2 << 20] = '\0';
	folded__add(a.lines, frames, 5, 800);
	file = written(&a, FORMAT_WPROF, &flen);
	recording__free(&a);
	err = file ? recfile__parse(file, flen, &b, why, sizeof(why)) : -ENOMEM;
	if (!CHECK_EQ_S64(err, 0, "read (%s)", err ? why : "ok"))
		goto out;
	text = written(&b, FORMAT_FOLDED, &wlen);
	/* 2048 frames with the pid and tid, which the folded output leaves out */
	CHECK(text && deepest_line(text) == 2046 && strstr(text, ";f2041;") &&
	      !strstr(text, ";f2042;") && strstr(text, mark) && strstr(text, ";f39999 700\n"),
	      "the deep stack: its first 2046 frames, the marker, its leaf");
	CHECK(text && strstr(text, "on-cpu;work;[cut: too long to read] 800\n"),
	      "the 2 MiB frame: the marker in its place");
	free(text);
	text = written(&b, FORMAT_JSON, &wlen);
	CHECK(text && strstr(text, "\"stacks_cut_on_read\": 2"), "JSON: stacks_cut_on_read 2");
	free(text);
	text = written(&b, -1, &wlen);
	CHECK(text && strstr(text, "wprof: lost: 2 stacks of the file cut to 2048 frames and 1 MiB "
				   "when read, the frame [cut: too long to read] in place of the "
				   "rest [stacks_cut_on_read]\n"), "the summary says so");
	free(text);
	text = written(&b, FORMAT_SVG, &wlen);
	CHECK(text && strstr(text, "</svg>\n"), "a flame graph (%zu bytes)", wlen);
	free(text);
	text = written(&b, FORMAT_PPROF, &wlen);
	CHECK(text, "pprof (%zu bytes)", wlen);
	free(text);
	/* saved again: the count is the file's */
	again = written(&b, FORMAT_WPROF, &wlen);
	err = again ? recfile__parse(again, wlen, &c, why, sizeof(why)) : -ENOMEM;
	if (CHECK_EQ_S64(err, 0, "saved again and read")) {
		text = written(&c, FORMAT_JSON, &wlen);
		CHECK(text && strstr(text, "\"stacks_cut_on_read\": 2"),
		      "the count kept, none cut again");
		free(text);
		recording__free(&c);
	}
	free(again);
	recording__free(&b);
out:
	free(file);
	free(line);
}

/* A large file that is not gzip: its first 64 KiB read, enough to say so. */
static void test_foreign_early(void)
{
	char path[] = "/tmp/wprof-test-recfile.XXXXXX", why[256];
	size_t size = 8 << 20, len = 0;
	char *text = malloc(size);
	struct recording r;
	void *buf = NULL;
	int fd = mkstemp(path), err;

	memset(text, 'x', size);
	if (!CHECK(fd >= 0 && write(fd, text, size) == (ssize_t)size, "8 MiB of text written"))
		goto out;
	err = recfile__read_file(path, &buf, &len);
	CHECK(!err && len == 64 * 1024, "read: its first 64 KiB only (%zu bytes)", len);
	err = buf ? recfile__parse(buf, len, &r, why, sizeof(why)) : -ENOMEM;
	CHECK(err == -ENOMSG && !strcmp(why, "not a wprof recording (not gzip-compressed)"),
	      "which say what it is not (%s)", why);
out:
	if (fd >= 0) {
		close(fd);
		unlink(path);
	}
	free(buf);
	free(text);
}

/* Every BPF statistic has a name in the file: the enum may change order between builds. */
static void test_stat_names(void)
{
	size_t unnamed = 0, wrong = 0;

	for (int i = 0; i < WPROF_STAT_CNT; i++) {
		char buf[32];
		const char *n = stat__name(i, buf, sizeof(buf));

		unnamed += !n;
		wrong += n && stat__index(n) != i;
	}
	CHECK_EQ_U64(unnamed, 0, "every enum wprof_stat entry is named in statnames.c");
	CHECK_EQ_U64(wrong, 0, "every name leads back to its statistic");
}

/*
 * A thread's steal: its own column, key and share in every output, kept
 * apart from on-CPU time, and through a save and a load.
 */
static void test_steal(void)
{
	struct recording a, b;
	struct rec_splitter sp = {};
	static const char line[] = "steal;100;101;work;main;run;burn";
	char why[256], *file, *out;
	size_t len;

	make(&a);
	/* work: 1.4 ms on-CPU, 0.1 ms stolen, 0.5 ms waiting: wall 2 ms */
	a.prof.threads[0].on_ns = 1400000;
	a.prof.threads[0].on_us = 1400;
	a.prof.threads[0].off_ns[WPROF_STEAL] = 100000;
	a.prof.threads[0].off_us[WPROF_STEAL] = 100;
	rec_splitter__add(&sp, a.lines, line, strlen(line), 0, 0, 100, 3, 33);
	rec_splitter__free(&sp);
	file = written(&a, FORMAT_WPROF, &len);
	CHECK(file && !recfile__parse(file, len, &b, why, sizeof(why)), "saved and read back");
	free(file);
	if (!file)
		goto out;
	out = written(&b, -1, &len);
	CHECK(out && strstr(out, "(work): wall 0.002 s, on-CPU 70.0%, steal 5.0%, runqueue 25.0%"),
	      "the summary's thread row has its steal share");
	/* 0.1 ms of the 1.51 ms the threads were on a CPU: over 1%, said */
	CHECK(out && strstr(out, "wprof: steal: the hypervisor ran something else for 0.000 s "
			       "(6.6%) of the 0.002 s these threads were on a CPU"),
	      "the summary says the share of steal, where it matters");
	CHECK(out && strstr(out, "(pool): wall 0.002 s, on-CPU 0.5%, runqueue"),
	      "a thread without steal shows none");
	free(out);
	out = written(&b, FORMAT_THREADS, &len);
	CHECK(out && strstr(out, "STEAL%") && strstr(out, "work                 0.002    70.0     5.0"),
	      "-f threads: a STEAL%% column");
	free(out);
	out = written(&b, FORMAT_JSON, &len);
	CHECK(out && strstr(out, "\"on_cpu_us\": 1400, \"steal_us\": 100, \"runqueue_us\": 500"),
	      "json: steal_us beside on_cpu_us");
	CHECK(out && strstr(out, "{\"tag\": \"steal\", \"pid\": 100, \"tid\": 101"),
	      "json: the steal line");
	free(out);
	recording__free(&b);
out:
	recording__free(&a);
}

int main(void)
{
	test_stat_names();
	test_roundtrip();
	test_cut_and_flipped();
	test_content_cut_and_flipped();
	test_foreign_and_newer();
	test_filter();
	test_steal();
	test_range();
	test_deep_lines();
	test_foreign_early();
	return unit_done();
}
