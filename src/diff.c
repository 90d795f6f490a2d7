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
	bool absolute;
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

static int add(struct diff *d, int side, const char *stack, size_t len, __u64 w)
{
	/* a file's frames hold any byte but controls: made safe text, as wprof's own lines */
	size_t safe_len = safestr__text(NULL, 0, stack, len);
	char *safe = NULL;
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
		err = add(d, side, stack, len, w);
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

static double share(const struct diff *d, const struct diff_stack *s, int side)
{
	return d->total[side] ? (double)s->w[side] / d->total[side] : 0;
}

/* Growth in points of share, or in us when @absolute. */
static double change(const struct diff *d, const struct diff_stack *s, bool absolute)
{
	if (absolute)
		return (double)s->w[DIFF_AFTER] - (double)s->w[DIFF_BEFORE];
	/* exactly 0 for equal shares: no rounding noise in a file against itself */
	if ((unsigned __int128)s->w[DIFF_BEFORE] * d->total[DIFF_AFTER] ==
	    (unsigned __int128)s->w[DIFF_AFTER] * d->total[DIFF_BEFORE])
		return 0;
	return 100 * (share(d, s, DIFF_AFTER) - share(d, s, DIFF_BEFORE));
}

double diff__change(const struct diff *d, const struct diff_stack *s)
{
	return change(d, s, d->absolute);
}

/* The gate's measure, whatever --absolute. */
static double share_growth(const struct diff *d, const struct diff_stack *s)
{
	return change(d, s, false);
}

__u64 diff__before(const struct diff *d, const struct diff_stack *s)
{
	unsigned __int128 v;

	if (d->absolute || !d->total[DIFF_BEFORE])
		return s->w[DIFF_BEFORE];
	v = (unsigned __int128)s->w[DIFF_BEFORE] * d->total[DIFF_AFTER];
	v = (v + d->total[DIFF_BEFORE] / 2) / d->total[DIFF_BEFORE];
	return v > UINT64_MAX ? UINT64_MAX : (__u64)v;
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

static int cmp_growth(const void *a, const void *b)
{
	const struct diff_stack *x = &sort_diff->stacks[*(const size_t *)a];
	const struct diff_stack *y = &sort_diff->stacks[*(const size_t *)b];
	double gx = share_growth(sort_diff, x), gy = share_growth(sort_diff, y);

	if (gx != gy)
		return gx > gy ? -1 : 1;
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

/* The stacks whose share changed, most first; nothing at all when none did. */
static int write_table(const struct diff *d, const struct diff_opts *o, FILE *f)
{
	size_t *idx = order(d, cmp_change), rows = 0;

	if (!idx)
		return -ENOMEM;
	for (size_t i = 0; i < d->nr && (!o->top || rows < o->top); i++) {
		const struct diff_stack *s = &d->stacks[idx[i]];
		double c = diff__change(d, s);

		if (c == 0)
			break; /* sorted: the rest did not change either */
		if (!rows++)
			fprintf(f, "%-6s %10s %9s %9s  %s\n", "STATE",
				d->absolute ? "CHANGE_MS" : "CHANGE_PTS",
				d->absolute ? "BEFORE_MS" : "BEFORE%", d->absolute ? "AFTER_MS" : "AFTER%",
				"STACK");
		if (d->absolute)
			fprintf(f, "%-6s %+10.3f %9.3f %9.3f  %s\n", state(s, c), c / 1e3,
				s->w[DIFF_BEFORE] / 1e3, s->w[DIFF_AFTER] / 1e3, s->stack);
		else
			fprintf(f, "%-6s %+10.2f %9.2f %9.2f  %s\n", state(s, c), c,
				100 * share(d, s, DIFF_BEFORE), 100 * share(d, s, DIFF_AFTER),
				s->stack);
	}
	free(idx);
	return 0;
}

/* difffolded.pl's form: `stack BEFORE AFTER`, BEFORE scaled to AFTER's total unless --absolute. */
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
	struct svg_opts so = { .diff = true, .absolute = d->absolute };
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
		/* shares from BEFORE's own weights; what is gone drawn in AFTER's units */
		err = flame__add(fl, s->stack, strlen(s->stack), kind, SIZE_MAX,
				 s->w[DIFF_AFTER], s->w[DIFF_BEFORE],
				 s->w[DIFF_AFTER] ? 0 : diff__before(d, s));
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
			 d->absolute ? "time" : "share", tb);
		so.title = title;
		so.subtitle = subtitle;
		err = svg__write(fl, &so, f);
	}
	flame__free(fl);
	return err;
}

/* The stacks whose share grew more than the gate allows, named on stderr; how many. */
static size_t gate(const struct diff *d, double pct)
{
	size_t *idx = order(d, cmp_growth), over = 0;

	if (!idx) {
		pr_err("out of memory");
		return 1;
	}
	for (size_t i = 0; i < d->nr; i++) {
		const struct diff_stack *s = &d->stacks[idx[i]];
		double g = share_growth(d, s);

		if (g <= pct)
			break;
		if (over++ < GATE_NAMED)
			pr_err("share grew by %.2f points (%.2f%% -> %.2f%%), more than %g: %s", g,
			       100 * share(d, s, DIFF_BEFORE), 100 * share(d, s, DIFF_AFTER), pct,
			       s->stack);
	}
	if (over > GATE_NAMED)
		pr_err("... and %zu more stacks grew by more than %g points", over - GATE_NAMED,
		       pct);
	free(idx);
	return over;
}

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: wprof diff [OPTIONS] BEFORE AFTER\n"
		"\n"
		"Compare two recordings, saved (wprof record -o X.wprof) or in folded text\n"
		"(wprof record -f folded): how each stack's share of the whole changed.\n"
		"Needs neither root nor BPF.\n"
		"\n"
		"  -f, --format FORMAT      table (default: the stacks whose share changed\n"
		"                           most), folded (`stack BEFORE AFTER`, as\n"
		"                           difffolded.pl), svg (differential flame graph)\n"
		"  -o, --output FILE        write to FILE (default stdout); FILE.svg is svg\n"
		"      --top N              rows of the table (default %d; 0: all)\n"
		"      --absolute           compare weights (us), not shares of each total\n"
		"      --fail-if-grown PCT  exit 1 when a stack's share grew by more than PCT\n"
		"                           points, naming it on stderr\n"
		"  -h, --help               this text\n"
		"\n"
		"Exit status: 0; 1 when --fail-if-grown tripped or the output could not be\n"
		"written; 2 on a usage error or a file that is not folded text.\n",
		DEFAULT_TOP);
}

enum { OPT_TOP = 0x100, OPT_ABSOLUTE, OPT_FAIL_IF_GROWN };

static const struct option diff_options[] = {
	{ "format", required_argument, NULL, 'f' },
	{ "output", required_argument, NULL, 'o' },
	{ "top", required_argument, NULL, OPT_TOP },
	{ "absolute", no_argument, NULL, OPT_ABSOLUTE },
	{ "fail-if-grown", required_argument, NULL, OPT_FAIL_IF_GROWN },
	{ "help", no_argument, NULL, 'h' },
	{},
};

/* 0, 1 when help was printed, -EINVAL after one error line. */
static int parse(int argc, char **argv, struct diff_opts *o)
{
	char *end;
	int c;

	memset(o, 0, sizeof(*o));
	o->top = DEFAULT_TOP;
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
			o->absolute = true;
			break;
		case OPT_FAIL_IF_GROWN:
			errno = 0;
			o->gate_pct = strtod(optarg, &end);
			if (errno || end == optarg || *end ||
			    !(o->gate_pct >= 0 && o->gate_pct <= 100)) {
				pr_err("invalid --fail-if-grown '%s': expected points of share, 0 to 100, "
				       "e.g. 5 or 0.5", optarg);
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
		size_t len = strlen(o->output);

		if (len > 4 && !strcmp(o->output + len - 4, ".svg"))
			o->format = DIFF_SVG;
		else if (len > 7 && !strcmp(o->output + len - 7, ".folded"))
			o->format = DIFF_FOLDED;
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
	int err = foldread__init(&fr, f, NULL, prefix, n);

	if (err) {
		pr_err("out of memory reading %s", name);
		return err;
	}
	err = diff__read(d, side, &fr, name);
	foldread__free(&fr);
	return err;
}

/*
 * A saved recording's folded lines into @side, from its bytes @buf. What
 * is gzip but no recording is no folded text either: its first line says so.
 */
static int read_recording(struct diff *d, int side, const char *name, const void *buf,
			  size_t len)
{
	struct recording r;
	char why[256], *text = NULL;
	size_t tlen = 0;
	FILE *f;
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
	f = open_memstream(&text, &tlen);
	err = f ? recording__write_folded(&r, f) : -ENOMEM;
	if (f && fclose(f) && !err)
		err = -ENOMEM;
	/* cut when it was read, or before it was saved */
	d->cut[side] += r.prof.stacks_cut_on_read;
	recording__free(&r);
	f = err ? NULL : fmemopen(text, tlen, "r");
	if (f) {
		err = read_folded(d, side, f, name, NULL, 0);
		fclose(f);
	} else if (!err || err == -ENOMEM) {
		pr_err("out of memory reading %s", name);
		err = -ENOMEM;
	}
	free(text);
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
	d.absolute = o.absolute;
	if (read_side(&d, DIFF_BEFORE, o.names[DIFF_BEFORE]) ||
	    read_side(&d, DIFF_AFTER, o.names[DIFF_AFTER])) {
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
		changed += share_growth(&d, &d.stacks[i]) != 0;
		nr[DIFF_BEFORE] += d.stacks[i].w[DIFF_BEFORE] > 0;
		nr[DIFF_AFTER] += d.stacks[i].w[DIFF_AFTER] > 0;
	}
	pr_info("BEFORE %s: %zu stacks, %.3f s; AFTER %s: %zu stacks, %.3f s; %zu stacks changed "
		"share", o.names[DIFF_BEFORE], nr[DIFF_BEFORE], d.total[DIFF_BEFORE] / 1e6,
		o.names[DIFF_AFTER], nr[DIFF_AFTER], d.total[DIFF_AFTER] / 1e6, changed);
	for (int side = DIFF_BEFORE; side <= DIFF_AFTER; side++)
		if (d.cut[side])
			pr_info("lost: %llu stacks of %s cut to " STACKCAP_WORDS " when read, the "
				"frame " STACKCAP_MARK " in place of the rest [stacks_cut_on_read]",
				(unsigned long long)d.cut[side], o.names[side]);
	if (o.gate)
		over = gate(&d, o.gate_pct);
	outfile__abort(&of);
	diff__free(&d);
	return err || over ? 1 : 0;
}
