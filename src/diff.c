// SPDX-License-Identifier: GPL-2.0-only
/* `wprof diff BEFORE AFTER`: two recordings or folded files compared stack by stack. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "diff.h"
#include "flame.h"
#include "folded.h"
#include "foldread.h"
#include "gzip.h"
#include "outfile.h"
#include "recfile.h"
#include "recinfo.h"
#include "recline.h"
#include "safestr.h"
#include "strmap.h"
#include "svg.h"
#include "util.h"

#define DEFAULT_TOP 20
/* The gate names this many stacks, then counts the rest. */
#define GATE_NAMED 10

enum diff_format { DIFF_TABLE, DIFF_FOLDED, DIFF_SVG };

struct diff_opts {
	enum diff_format format;
	bool format_given;
	const char *output;
	__u64 top;
	enum diff_measure measure;
	enum group_by group;
	unsigned states; /* what the gate judges */
	bool gate;
	double gate_pct;
	const char *names[2];
};

int diff__init(struct diff *d)
{
	memset(d, 0, sizeof(*d));
	d->index = strmap__new();
	return d->index ? 0 : -ENOMEM;
}

void diff__free(struct diff *d)
{
	for (size_t i = 0; i < d->nr; i++)
		free(d->stacks[i].stack);
	free(d->stacks);
	strmap__free(d->index);
	memset(d, 0, sizeof(*d));
}

static __u64 sat_add(__u64 a, __u64 b)
{
	return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

/* @stack (@len bytes) grouped as d->group wants, @pname its process's name or NULL. */
static int add(struct diff *d, int side, const char *stack, size_t len, __u64 w,
	       const char *pname)
{
	/* a file's frames hold any byte but controls: made safe text, as wprof's own lines */
	size_t safe_len = safestr__text(NULL, 0, stack, len);
	char *safe = NULL, *grouped = NULL;
	struct diff_stack *s;
	__u64 idx;
	int ret;

	if (safe_len != len) {
		safe = malloc(safe_len + 1);
		if (!safe)
			return -ENOMEM;
		safestr__text(safe, safe_len + 1, stack, len);
		stack = safe;
		len = safe_len;
	}
	if (d->group != GROUP_THREAD) {
		size_t n = group__line(NULL, 0, stack, len, d->group, pname);

		ret = -ENOMEM;
		grouped = malloc(n + 1);
		if (!grouped)
			goto out;
		len = group__line(grouped, n + 1, stack, len, d->group, pname);
		stack = grouped;
	}
	ret = strmap__intern(d->index, stack, len, d->nr, &idx);
	if (ret < 0)
		goto out;
	if (ret == 1) {
		ret = -ENOMEM;
		if (array_reserve(&d->stacks, &d->cap, d->nr, sizeof(*d->stacks), 1024))
			goto out;
		s = &d->stacks[d->nr];
		memset(s, 0, sizeof(*s));
		s->stack = strndup(stack, len);
		if (!s->stack)
			goto out;
		d->nr++;
	}
	s = &d->stacks[idx];
	s->w[side] = sat_add(s->w[side], w);
	d->total[side] = sat_add(d->total[side], w);
	d->lines[side]++;
	ret = 0;
out:
	free(grouped);
	free(safe);
	return ret;
}

/* What a file that is not folded text probably is, to say so. */
static const char *what_else(const char *line)
{
	const unsigned char *u = (const unsigned char *)line;

	if (u[0] == 0x1f && u[1] == 0x8b)
		return " (gzip data: a pprof file? diff reads folded text, as wprof record -f "
		       "folded writes it)";
	if (u[0] == '{')
		return " (JSON? diff reads folded text, as wprof record -f folded writes it)";
	if (u[0] == '<')
		return " (XML or SVG? diff reads folded text, as wprof record -f folded writes it)";
	return "";
}

int diff__read(struct diff *d, int side, struct foldread *fr, const char *name)
{
	char *stack = NULL;
	size_t len;
	__u64 w;
	bool cut;
	int err;

	while ((err = foldread__next(fr, &stack, &len, &w, &cut)) > 0) {
		err = add(d, side, stack, len, w, NULL);
		if (err) {
			pr_err("out of memory reading %s", name);
			return err;
		}
		d->cut[side] += cut;
	}
	if (err == -EINVAL) {
		pr_err("%s:%zu: not a folded line ('frame;frame;... WEIGHT')%s", name, fr->lineno,
		       fr->lineno == 1 ? what_else(stack) : "");
		return err;
	}
	if (err) {
		pr_err("cannot read %s: %s", name, strerror(-err));
		return err;
	}
	if (!d->lines[side]) {
		pr_err("%s has no stacks: nothing to compare", name);
		return -EINVAL;
	}
	if (!d->total[side]) {
		pr_err("%s weighs 0 in all: nothing to compare", name);
		return -EINVAL;
	}
	return 0;
}

static const struct diff *sort_diff;

/* Largest change first (either way), then by stack. */
static int cmp_change(const void *a, const void *b)
{
	const struct diff_stack *x = &sort_diff->stacks[*(const size_t *)a];
	const struct diff_stack *y = &sort_diff->stacks[*(const size_t *)b];
	double cx = diff__change(sort_diff, x), cy = diff__change(sort_diff, y);

	if (cx < 0)
		cx = -cx;
	if (cy < 0)
		cy = -cy;
	if (cx != cy)
		return cx > cy ? -1 : 1;
	return strcmp(x->stack, y->stack);
}

static int cmp_stack(const void *a, const void *b)
{
	return strcmp(sort_diff->stacks[*(const size_t *)a].stack,
		      sort_diff->stacks[*(const size_t *)b].stack);
}

/* Indices of the stacks in an order; NULL when out of memory. */
static size_t *order(const struct diff *d, int (*cmp)(const void *, const void *))
{
	size_t *idx = malloc((d->nr + 1) * sizeof(*idx));

	if (!idx)
		return NULL;
	for (size_t i = 0; i < d->nr; i++)
		idx[i] = i;
	sort_diff = d;
	qsort(idx, d->nr, sizeof(*idx), cmp);
	sort_diff = NULL;
	return idx;
}

static const char *state(const struct diff_stack *s, double change)
{
	if (!s->w[DIFF_BEFORE])
		return "new";
	if (!s->w[DIFF_AFTER])
		return "gone";
	return change > 0 ? "grew" : "shrank";
}

/* The stacks whose measure changed, most first; nothing at all when none did. */
static int write_table(const struct diff *d, const struct diff_opts *o, FILE *f)
{
	static const char *const heads[][3] = {
		[DIFF_TIME] = { "CHANGE_MS", "BEFORE_MS", "AFTER_MS" },
		[DIFF_RATE] = { "CHANGE_MS/S", "BEFORE_MS/S", "AFTER_MS/S" },
		[DIFF_SHARE] = { "CHANGE_PTS", "BEFORE%", "AFTER%" },
	};
	const char *const *h = heads[d->measure];
	/* shares in points and %, times in ms (per s of window) */
	double unit = d->measure == DIFF_SHARE ? 1 : 1e3;
	int prec = d->measure == DIFF_SHARE ? 2 : 3;
	size_t *idx = order(d, cmp_change), rows = 0;

	if (!idx)
		return -ENOMEM;
	for (size_t i = 0; i < d->nr && (!o->top || rows < o->top); i++) {
		const struct diff_stack *s = &d->stacks[idx[i]];
		double c = diff__change(d, s);

		if (c == 0)
			break; /* sorted: the rest did not change either */
		if (!rows++)
			fprintf(f, "%-6s %10s %9s %9s  %s\n", "STATE", h[0], h[1], h[2], "STACK");
		fprintf(f, "%-6s %+10.*f %9.*f %9.*f  %s\n", state(s, c), prec, c / unit, prec,
			diff__value(d, DIFF_BEFORE, s->w[DIFF_BEFORE]) / unit, prec,
			diff__value(d, DIFF_AFTER, s->w[DIFF_AFTER]) / unit, s->stack);
	}
	free(idx);
	return 0;
}

/* difffolded.pl's form: `stack BEFORE AFTER`, BEFORE in AFTER's units (diff__before()). */
static int write_folded(const struct diff *d, FILE *f)
{
	size_t *idx = order(d, cmp_stack);

	if (!idx)
		return -ENOMEM;
	for (size_t i = 0; i < d->nr; i++) {
		const struct diff_stack *s = &d->stacks[idx[i]];

		fprintf(f, "%s %llu %llu\n", s->stack, (unsigned long long)diff__before(d, s),
			(unsigned long long)s->w[DIFF_AFTER]);
	}
	free(idx);
	return 0;
}

static int write_svg(const struct diff *d, const struct diff_opts *o, FILE *f)
{
	struct flame *fl = flame__new();
	struct svg_opts so = { .diff = true, .absolute = d->measure != DIFF_SHARE };
	char title[512], subtitle[512], tb[64], ta[64];
	int err = 0;

	if (!fl)
		return -ENOMEM;
	for (size_t i = 0; i < d->nr && !err; i++) {
		const struct diff_stack *s = &d->stacks[i];
		struct rec_line rl;
		enum rec_kind kind = REC_OTHER;

		/* the kind from the tag at the root, or at the leaf (--tag-leaf) */
		if (!rec_line__split(s->stack, false, false, &rl))
			kind = rl.kind;
		if (kind == REC_OTHER && !rec_line__split(s->stack, true, false, &rl))
			kind = rl.kind;
		/*
		 * shares from BEFORE's own weights, times per second in AFTER's
		 * window; what is gone drawn in AFTER's units
		 */
		err = flame__add(fl, s->stack, strlen(s->stack), kind, SIZE_MAX,
				 s->w[DIFF_AFTER], d->measure == DIFF_RATE ? diff__before(d, s) :
				 s->w[DIFF_BEFORE], s->w[DIFF_AFTER] ? 0 : diff__before(d, s));
	}
	if (!err)
		err = flame__finish(fl);
	if (!err && fl->stacks_merged)
		pr_info("lost: %llu stacks drawn in part as one " FLAME_TRUNCATED " frame: the "
			"flame graph holds " FLAME_MAX_NODES_WORDS " frames [flame_stacks_merged]",
			(unsigned long long)fl->stacks_merged);
	if (!err) {
		svg__fmt_us(tb, sizeof(tb), d->total[DIFF_BEFORE]);
		svg__fmt_us(ta, sizeof(ta), d->total[DIFF_AFTER]);
		snprintf(title, sizeof(title), "wprof diff: %s \u2192 %s", o->names[DIFF_BEFORE],
			 o->names[DIFF_AFTER]);
		snprintf(subtitle, sizeof(subtitle), "widths: AFTER (%s in all); colour: how each "
			 "frame's %s changed since BEFORE (%s in all)", ta,
			 diff__measure_name(d->measure), tb);
		so.title = title;
		so.subtitle = subtitle;
		err = svg__write(fl, &so, f);
	}
	flame__free(fl);
	return err;
}

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: wprof diff [OPTIONS] BEFORE AFTER\n"
		"\n"
		"Compare two recordings, saved (wprof record -o X.wprof) or in folded text\n"
		"(wprof record -f folded): how the time of each code path changed.\n"
		"Needs neither root nor BPF.\n"
		"\n"
		"  -f, --format FORMAT      table (default: the stacks that changed most),\n"
		"                           folded (`stack BEFORE AFTER`, as difffolded.pl),\n"
		"                           svg (differential flame graph)\n"
		"  -o, --output FILE        write to FILE (default stdout); FILE.svg is svg\n"
		"      --top N              rows of the table (default %d; 0: all)\n"
		"      --group WHAT         the stacks of threads merged: none (default: one\n"
		"                           stack per code path), thread (by name), pool\n"
		"                           (worker-12 as worker-*), process (saved\n"
		"                           recordings only)\n"
		"      --measure WHAT       auto (default), time (us as they are: two runs of\n"
		"                           a fixed amount of work), rate (time per second of\n"
		"                           window), share (of each side's total); auto: time\n"
		"                           for two saved recordings of -- CMD, rate for two\n"
		"                           of windows, else share\n"
		"      --absolute           the same as --measure time\n"
		"      --fail-if-grown PCT  exit 1 when a code path, or a function's time in\n"
		"                           all its callers, grew by more than PCT%% of\n"
		"                           BEFORE's whole (in points with shares), naming\n"
		"                           it on stderr\n"
		"      --states LIST        the kinds of time --fail-if-grown judges, by comma:\n"
		"                           on-cpu, sleep, disk, runqueue, steal, off-cpu, all\n"
		"                           (default on-cpu,sleep,disk: a wait for a CPU\n"
		"                           measures the machine's load as much as the code)\n"
		"  -h, --help               this text\n"
		"\n"
		"Exit status: 0; 1 when --fail-if-grown tripped or the output could not be\n"
		"written; 2 on a usage error or a file that is not folded text.\n",
		DEFAULT_TOP);
}

enum { OPT_TOP = 0x100, OPT_ABSOLUTE, OPT_FAIL_IF_GROWN, OPT_GROUP, OPT_MEASURE, OPT_STATES };

static const struct option diff_options[] = {
	{ "format", required_argument, NULL, 'f' },
	{ "output", required_argument, NULL, 'o' },
	{ "top", required_argument, NULL, OPT_TOP },
	{ "absolute", no_argument, NULL, OPT_ABSOLUTE },
	{ "group", required_argument, NULL, OPT_GROUP },
	{ "measure", required_argument, NULL, OPT_MEASURE },
	{ "states", required_argument, NULL, OPT_STATES },
	{ "fail-if-grown", required_argument, NULL, OPT_FAIL_IF_GROWN },
	{ "help", no_argument, NULL, 'h' },
	{},
};

static int parse_measure(const char *s, enum diff_measure *m)
{
	static const char *const names[] = {
		[DIFF_AUTO] = "auto", [DIFF_TIME] = "time", [DIFF_RATE] = "rate",
		[DIFF_SHARE] = "share",
	};

	for (size_t i = 0; i < ARRAY_SIZE(names); i++)
		if (!strcmp(s, names[i])) {
			*m = i;
			return 0;
		}
	pr_err("invalid --measure '%s': expected auto, time, rate or share", s);
	return -EINVAL;
}

/* 0, 1 when help was printed, -EINVAL after one error line. */
static int parse(int argc, char **argv, struct diff_opts *o)
{
	char *end;
	int c;

	memset(o, 0, sizeof(*o));
	o->top = DEFAULT_TOP;
	o->group = GROUP_NONE;
	o->states = DIFF_STATES_DEFAULT;
	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, ":f:o:h", diff_options, NULL)) != -1) {
		switch (c) {
		case 'f':
			o->format_given = true;
			if (!strcmp(optarg, "table"))
				o->format = DIFF_TABLE;
			else if (!strcmp(optarg, "folded"))
				o->format = DIFF_FOLDED;
			else if (!strcmp(optarg, "svg"))
				o->format = DIFF_SVG;
			else {
				pr_err("invalid format '%s': expected table, folded or svg", optarg);
				return -EINVAL;
			}
			break;
		case 'o':
			o->output = optarg;
			break;
		case OPT_TOP:
			errno = 0;
			o->top = strtoull(optarg, &end, 10);
			if (errno || end == optarg || *end || optarg[0] == '-') {
				pr_err("invalid --top '%s': expected a number of rows (0: all)", optarg);
				return -EINVAL;
			}
			break;
		case OPT_ABSOLUTE:
			o->measure = DIFF_TIME;
			break;
		case OPT_MEASURE:
			if (parse_measure(optarg, &o->measure))
				return -EINVAL;
			break;
		case OPT_GROUP:
			if (group__parse(optarg, &o->group))
				return -EINVAL;
			break;
		case OPT_STATES:
			if (diff__parse_states(optarg, &o->states))
				return -EINVAL;
			break;
		case OPT_FAIL_IF_GROWN:
			errno = 0;
			o->gate_pct = strtod(optarg, &end);
			if (errno || end == optarg || (*end && strcmp(end, "%")) ||
			    !(o->gate_pct >= 0 && o->gate_pct <= 1e6)) {
				pr_err("invalid --fail-if-grown '%s': expected a percentage of BEFORE's "
				       "whole, e.g. 5 or 0.5", optarg);
				return -EINVAL;
			}
			o->gate = true;
			break;
		case 'h':
			usage(stdout);
			return 1;
		case ':':
			pr_err("option '%s' needs a value; see 'wprof diff --help'", argv[optind - 1]);
			return -EINVAL;
		default:
			pr_err("unknown option '%s'; see 'wprof diff --help'", argv[optind - 1]);
			return -EINVAL;
		}
	}
	if (argc - optind != 2) {
		pr_err("%s; usage: wprof diff [OPTIONS] BEFORE AFTER",
		       argc - optind < 2 ? "two files needed" : "more than two files given");
		return -EINVAL;
	}
	o->names[DIFF_BEFORE] = argv[optind];
	o->names[DIFF_AFTER] = argv[optind + 1];
	if (o->output && !o->format_given) {
		const char *base = strrchr(o->output, '/'), *dot;

		base = base ? base + 1 : o->output;
		dot = strrchr(base, '.');
		if (dot && !strcmp(dot, ".svg"))
			o->format = DIFF_SVG;
		else if (dot && !strcmp(dot, ".folded"))
			o->format = DIFF_FOLDED;
		else if (dot && dot != base && dot[1] && strcmp(dot, ".txt")) {
			/* x.png is not silently a table */
			pr_err("-o %s: '%s' names no format; end the name in .svg, .folded or "
			       ".txt (the table), or give -f FORMAT", o->output, dot);
			return -EINVAL;
		}
	}
	return 0;
}

/* Whether the gzip file @buf decompresses to a recording's magic (its start is enough). */
static bool is_recording(const void *buf, size_t len)
{
	unsigned char head[RECFILE_MAGIC_LEN];

	return gzip__head(buf, len, head, sizeof(head)) == sizeof(head) &&
	       !memcmp(head, RECFILE_MAGIC, sizeof(head));
}

/* Folded text from @f, after the @n bytes of @prefix read of it. */
static int read_folded(struct diff *d, int side, FILE *f, const char *name,
		       const void *prefix, size_t n)
{
	struct foldread fr;
	int err;

	if (d->group == GROUP_PROCESS) {
		pr_err("%s: --group process needs saved recordings (wprof record -o X.wprof): "
		       "folded text names threads, not their processes", name);
		return -EINVAL;
	}
	err = foldread__init(&fr, f, NULL, prefix, n);
	if (err) {
		pr_err("out of memory reading %s", name);
		return err;
	}
	err = diff__read(d, side, &fr, name);
	foldread__free(&fr);
	return err;
}

struct rec_add_ctx {
	struct diff *d;
	const struct recording *r;
	int side;
	char *buf;
	size_t cap;
};

/*
 * One line of a recording (with its ids when r->ids) as folded text would
 * have it, its name frame that of its process's for --group process.
 */
static int add_rec_line(const char *line, __u64 weight, __u64 count, __u64 max, void *ctx)
{
	struct rec_add_ctx *c = ctx;
	const struct thread_acct *t = NULL;
	struct rec_line rl;
	size_t n;

	if (!c->r->ids)
		return add(c->d, c->side, line, strlen(line), weight, NULL);
	if (rec_line__split(line, c->r->tag_leaf, true, &rl))
		return -EINVAL;
	if (c->d->group == GROUP_PROCESS)
		t = rec_info__thread_of(&c->r->prof, rl.pid, rl.tid);
	n = strlen(line) + 2;
	if (n > c->cap) {
		char *b = realloc(c->buf, n);

		if (!b)
			return -ENOMEM;
		c->buf = b;
		c->cap = n;
	}
	if (c->r->tag_leaf)
		n = snprintf(c->buf, c->cap, "%.*s%s%.*s%s%.*s", (int)rl.comm.len, rl.comm.s,
			     rl.body.len ? ";" : "", (int)rl.body.len, rl.body.s,
			     rl.tag.len ? ";" : "", (int)rl.tag.len, rl.tag.s);
	else
		n = snprintf(c->buf, c->cap, "%.*s%s%.*s%s%.*s", (int)rl.tag.len, rl.tag.s,
			     rl.tag.len ? ";" : "", (int)rl.comm.len, rl.comm.s,
			     rl.body.len ? ";" : "", (int)rl.body.len, rl.body.s);
	(void)count;
	(void)max;
	return add(c->d, c->side, c->buf, n, weight, t && t->pcomm[0] ? t->pcomm : NULL);
}

/*
 * A saved recording's lines into @side, from its bytes @buf, and what it
 * says of itself (its window, whether it ran a command to its end). What
 * is gzip but no recording is no folded text either: its first line says so.
 */
static int read_recording(struct diff *d, int side, const char *name, const void *buf,
			  size_t len)
{
	struct rec_add_ctx c = { .d = d, .side = side };
	struct recording r;
	char why[256];
	int err;

	if (!is_recording(buf, len)) {
		pr_err("%s:1: not a folded line ('frame;frame;... WEIGHT')%s", name,
		       what_else(buf));
		return -EINVAL;
	}
	err = recfile__parse(buf, len, &r, why, sizeof(why));
	if (err) {
		pr_err("%s: %s", name, why);
		return err;
	}
	c.r = &r;
	d->side[side].known = true;
	d->side[side].window_ns = r.prof.window_ns;
	d->side[side].cmd = diff__is_cmd(r.info.target, r.info.program, r.cmdline);
	err = folded__for_each(r.lines, add_rec_line, &c);
	/* cut when it was read, or before it was saved */
	d->cut[side] += r.prof.stacks_cut_on_read;
	if (err == -ENOMEM)
		pr_err("out of memory reading %s", name);
	else if (err)
		pr_err("%s: a line without its thread's ids: %s", name, strerror(-err));
	if (!err && !d->lines[side]) {
		pr_err("%s has no stacks: nothing to compare", name);
		err = -EINVAL;
	}
	free(c.buf);
	recording__free(&r);
	return err;
}

/*
 * A file, or "-" for standard input, which is read once: its first bytes
 * tell a saved recording (gzip, read whole, at most RECFILE_MAX_BYTES)
 * from folded text (read a line at a time).
 */
static int read_side(struct diff *d, int side, const char *name)
{
	bool std_in = !strcmp(name, "-");
	const char *shown = std_in ? "standard input" : name;
	unsigned char magic[2];
	size_t n = 0, len;
	void *buf;
	FILE *f;
	int fd = std_in ? 0 : open(name, O_RDONLY | O_CLOEXEC), err;

	if (fd < 0) {
		err = -errno;
		pr_err("cannot open %s: %s", name, strerror(-err));
		return err;
	}
	while (n < sizeof(magic)) {
		ssize_t got = read(fd, magic + n, sizeof(magic) - n);

		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0) {
			err = got ? -errno : 0;
			if (!err)
				break;
			pr_err("cannot read %s: %s", shown, strerror(-err));
			goto out;
		}
		n += got;
	}
	if (gzip__is_gzip(magic, n)) {
		err = recfile__read_fd(fd, magic, n, &buf, &len);
		if (err) {
			pr_err("cannot read %s: %s", shown, strerror(-err));
			goto out;
		}
		err = read_recording(d, side, shown, buf, len);
		free(buf);
		goto out;
	}
	f = std_in ? stdin : fdopen(fd, "r");
	if (!f) {
		err = -errno;
		pr_err("cannot read %s: %s", shown, strerror(-err));
		goto out;
	}
	if (!std_in)
		fd = -1; /* f's now */
	err = read_folded(d, side, f, shown, magic, n);
	if (!std_in)
		fclose(f);
out:
	if (!std_in && fd >= 0)
		close(fd);
	return err;
}

int cmd_diff(int argc, char **argv)
{
	struct outfile of = {};
	struct diff_opts o;
	struct diff d;
	FILE *out = stdout;
	size_t changed = 0, over = 0, nr[2] = {};
	int err;

	err = parse(argc, argv, &o);
	if (err)
		return err > 0 ? 0 : 2;
	if (!strcmp(o.names[0], "-") && !strcmp(o.names[1], "-")) {
		pr_err("BEFORE and AFTER cannot both be stdin");
		return 2;
	}
	if (diff__init(&d)) {
		pr_err("out of memory");
		return 1;
	}
	d.group = o.group;
	if (read_side(&d, DIFF_BEFORE, o.names[DIFF_BEFORE]) ||
	    read_side(&d, DIFF_AFTER, o.names[DIFF_AFTER]) || diff__resolve(&d, o.measure)) {
		diff__free(&d);
		return 2;
	}
	if (o.output) {
		err = outfile__open(o.output, &of);
		if (err) {
			diff__free(&d);
			return 1;
		}
		out = of.f;
	}
	switch (o.format) {
	case DIFF_FOLDED:
		err = write_folded(&d, out);
		break;
	case DIFF_SVG:
		err = write_svg(&d, &o, out);
		break;
	default:
		err = write_table(&d, &o, out);
		break;
	}
	if (!err && (fflush(out) || ferror(out)))
		err = errno ? -errno : -EIO;
	if (!err && of.f)
		err = outfile__commit(&of); /* says what failed */
	else if (err)
		pr_err("cannot write %s: %s", o.output ? o.output : "to stdout", strerror(-err));
	for (size_t i = 0; i < d.nr; i++) {
		changed += diff__change(&d, &d.stacks[i]) != 0;
		nr[DIFF_BEFORE] += d.stacks[i].w[DIFF_BEFORE] > 0;
		nr[DIFF_AFTER] += d.stacks[i].w[DIFF_AFTER] > 0;
	}
	pr_info("BEFORE %s: %zu stacks, %.3f s; AFTER %s: %zu stacks, %.3f s; %zu stacks changed "
		"%s (grouped by %s)", o.names[DIFF_BEFORE], nr[DIFF_BEFORE],
		d.total[DIFF_BEFORE] / 1e6, o.names[DIFF_AFTER], nr[DIFF_AFTER],
		d.total[DIFF_AFTER] / 1e6, changed, diff__measure_name(d.measure),
		group__name(d.group));
	if (d.side[DIFF_BEFORE].cmd && d.side[DIFF_AFTER].cmd)
		pr_info("the command ran %.3f s -> %.3f s", d.side[DIFF_BEFORE].window_ns / 1e9,
			d.side[DIFF_AFTER].window_ns / 1e9);
	for (int side = DIFF_BEFORE; side <= DIFF_AFTER; side++)
		if (d.cut[side])
			pr_info("lost: %llu stacks of %s cut to " STACKCAP_WORDS " when read, the "
				"frame " STACKCAP_MARK " in place of the rest [stacks_cut_on_read]",
				(unsigned long long)d.cut[side], o.names[side]);
	if (o.gate) {
		long n = diff__gate(&d, o.gate_pct, o.states);

		if (n < 0)
			pr_err("out of memory judging the change");
		over = n ? 1 : 0;
	}
	outfile__abort(&of);
	diff__free(&d);
	return err || over ? 1 : 0;
}
