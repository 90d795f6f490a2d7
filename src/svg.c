// SPDX-License-Identifier: GPL-2.0-only
/* A flame graph as one self-contained SVG: see svg.h. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "hmap.h"
#include "safestr.h"
#include "svg.h"
#include "timeline.h"
#include "svg_js.h" /* svg_js[]: src/svg.js as a C string (see the Makefile) */
#include "util.h"

#define FRAME_H 16
#define FONT_PX 12
/* DejaVu Sans Mono and Liberation Mono advance 0.6 em: a little more, so that labels fit */
#define CHAR_W 7.25
#define TOP 112        /* y of the deepest frames' row (without a time strip) */
#define STRIP_Y 90     /* the time strip's top; what follows it moves down by its height */

static const struct svg_family families[REC_KIND_CNT] = {
	[REC_ON_CPU] = { 0, 45, 85, 55, 8 },   /* warm: red to yellow */
	[REC_SLEEP] = { 200, 25, 65, 58, 12 }, /* blue */
	[REC_DISK] = { 270, 25, 50, 58, 12 },  /* purple */
	[REC_RUNQ] = { 90, 40, 50, 50, 12 },   /* green */
	[REC_OFF] = { 180, 15, 50, 55, 12 },   /* teal: off-CPU, states not told apart */
	[REC_STEAL] = { 320, 20, 55, 60, 10 }, /* pink: the hypervisor's */
	[REC_OTHER] = { 35, 15, 15, 62, 10 },  /* greige: no tag */
};
static const struct svg_family idle_family = { 210, 0, 10, 72, 10 }; /* grey */

struct writer {
	FILE *f;
	const struct flame *fl;
	const struct svg_opts *so;
	double scale;      /* px per unit of width */
	__u64 total;       /* the root's width */
	double max_delta;  /* diff: the largest change of a frame's share, in points */
	size_t drawn, left_out;
	int top;           /* y of the deepest frames' row */
	__u32 *dom;        /* with a strip: each node's index among the frames drawn */
};

void svg__fmt_us(char *buf, size_t size, __u64 us)
{
	if (us < 1000)
		snprintf(buf, size, "%llu \u00b5s", (unsigned long long)us);
	else if (us < 1000000)
		snprintf(buf, size, "%.3f ms", us / 1e3);
	else
		snprintf(buf, size, "%.3f s", us / 1e6);
}

/*
 * @s as XML character data or attribute value: its safe text (a frame name
 * of a diff's input, a title with a process's command line, may hold any
 * byte), markup escaped.
 */
static void put_xml(FILE *f, const char *s, size_t len)
{
	safestr__xml(f, s, len);
}

static void put_str(FILE *f, const char *s)
{
	put_xml(f, s, strlen(s));
}

/*
 * The label that fits in @w px: the name, or its first characters and ".."
 * (the same rule as fit() in svg.js); empty when not three characters fit.
 */
static void put_label(FILE *f, const char *name, double w)
{
	long fit = (long)((w - 6) / CHAR_W), chars = 0;
	size_t len = strlen(name), cut = 0;

	if (fit < 3)
		return;
	for (size_t i = 0; i < len; chars++) {
		/* names are safe text already (the lines'): no byte is escaped */
		size_t n = safestr__utf8_len(name + i, len - i);

		i += n ? n : 1;
		if (chars + 1 == fit - 2)
			cut = i;
	}
	if (chars <= fit) {
		put_xml(f, name, len);
		return;
	}
	put_xml(f, name, cut);
	fputs("..", f);
}

const struct svg_family *svg__family(enum rec_kind kind, bool idle)
{
	return idle ? &idle_family : &families[kind];
}

void svg__colour(char *buf, size_t size, const struct svg_family *fam, const char *name, bool pale)
{
	__u64 h = name ? hmap__hash_bytes(name, strlen(name)) : 0x80008000ULL;
	double v1 = (h & 0xffff) / 65535.0, v2 = ((h >> 16) & 0xffff) / 65535.0;
	int light = fam->light + (int)(fam->light_span * v2) + (pale ? 15 : 0);

	snprintf(buf, size, "hsl(%d,%d%%,%d%%)", fam->hue + (int)(fam->hue_span * v1), fam->sat,
		 light > 92 ? 92 : light);
}

static double share(__u64 part, __u64 whole)
{
	return whole ? (double)part / whole : 0;
}

/* diff: how much a frame's share grew (negative: shrank), in points; in us with absolute. */
static double delta(const struct writer *w, const struct flame_node *n)
{
	const struct flame_node *root = &w->fl->nodes[0];

	if (w->so->absolute)
		return (double)n->total - (double)n->before;
	return 100 * (share(n->total, root->total) - share(n->before, root->before));
}

static void fill_of(const struct writer *w, const struct flame_node *n, char *buf, size_t size)
{
	if (w->so->diff) {
		double d = delta(w, n), t = w->max_delta > 0 ? (d < 0 ? -d : d) / w->max_delta : 0;

		if (!n->total)
			snprintf(buf, size, "url(#gone)");
		else if (d == 0 || t < 0.005)
			snprintf(buf, size, "hsl(0,0%%,94%%)");
		else
			snprintf(buf, size, "hsl(%d,85%%,%d%%)", d > 0 ? 0 : 220, 96 - (int)(44 * t));
		return;
	}
	if (n == w->fl->nodes)
		snprintf(buf, size, "hsl(0,0%%,80%%)");
	else
		svg__colour(buf, size, n->idle ? &idle_family : &families[flame__kind(n)],
			    n->name, n->waker);
}

static void put_tooltip(const struct writer *w, const struct flame_node *n)
{
	const struct flame_node *root = &w->fl->nodes[0];
	FILE *f = w->f;
	char t[64];
	int kinds = 0;

	put_str(f, n->name);
	if (w->so->diff) {
		svg__fmt_us(t, sizeof(t), n->total);
		fprintf(f, " (%.2f%% \u2192 %.2f%%, ", 100 * share(n->before, root->before),
			100 * share(n->total, root->total));
		if (w->so->absolute)
			fprintf(f, "%+.3f ms", delta(w, n) / 1e3);
		else
			fprintf(f, "%+.2f points", delta(w, n));
		fprintf(f, "; %s in AFTER)%s", t, n->total ? "" : " [only in BEFORE]");
		return;
	}
	svg__fmt_us(t, sizeof(t), n->total);
	fprintf(f, " (%s, %.2f%%", t, 100 * share(n->total, root->total));
	for (int k = 0; k < REC_KIND_CNT; k++)
		kinds += n->w[k] > 0;
	for (int k = 0; kinds > 1 && k < REC_KIND_CNT; k++) {
		if (!n->w[k])
			continue;
		svg__fmt_us(t, sizeof(t), n->w[k]);
		fprintf(f, "%s %s %s", k == (int)flame__kind(n) ? ":" : ",", rec_kind__label(k), t);
	}
	fputc(')', f);
	if (n->idle)
		fputs(" [idle thread]", f);
	if (n->waker)
		fputs(" [waker]", f);
}

/* One frame at @x; false when it is too narrow to draw (nor what it calls). */
static bool draw_one(struct writer *w, const struct flame_node *n, __u64 x)
{
	__u64 width = flame__width(n);
	double px = width * w->scale, left = SVG_PAD + x * w->scale;
	int y = w->top + (w->fl->max_depth - n->depth) * FRAME_H;
	char fill[64];

	if (px < SVG_MIN_PX) {
		w->left_out++;
		return false;
	}
	if (w->dom)
		w->dom[n - w->fl->nodes] = w->drawn;
	w->drawn++;
	fill_of(w, n, fill, sizeof(fill));
	fprintf(w->f, "<g class=\"f\" data-n=\"");
	put_str(w->f, n->name);
	fprintf(w->f, "\" data-x=\"%llu\" data-w=\"%llu\" data-d=\"%u\"><title>",
		(unsigned long long)x, (unsigned long long)width, n->depth);
	put_tooltip(w, n);
	fprintf(w->f, "</title><rect x=\"%.2f\" y=\"%d\" width=\"%.2f\" height=\"%d\" fill=\"%s\"/>"
		"<text x=\"%.2f\" y=\"%.1f\">", left, y, px, FRAME_H - 1, fill, left + 3,
		y + FRAME_H - 4.5);
	put_label(w->f, n->name, px);
	fprintf(w->f, "</text></g>\n");
	return true;
}

/*
 * Every frame, callers before callees, each one's callees left to right:
 * walked by the tree's links, not by recursion, so that no stack however
 * deep takes more than @x_at's one offset per level. 0 or -ENOMEM.
 */
static int draw(struct writer *w)
{
	const struct flame_node *nodes = w->fl->nodes;
	__u64 *x_at = calloc(w->fl->max_depth + 1, sizeof(*x_at)); /* x of the frame at a depth */
	__u32 idx = 0;

	if (!x_at)
		return -ENOMEM;
	for (;;) {
		const struct flame_node *n = &nodes[idx];

		if (draw_one(w, n, x_at[n->depth]) && n->first_child != FLAME_NONE) {
			x_at[n->depth + 1] = x_at[n->depth];
			idx = n->first_child;
			continue;
		}
		/* the next sibling of this frame, or of the nearest caller that has one */
		while (idx && nodes[idx].next_sibling == FLAME_NONE)
			idx = nodes[idx].parent;
		if (!idx)
			break;
		x_at[nodes[idx].depth] += flame__width(&nodes[idx]);
		idx = nodes[idx].next_sibling;
	}
	free(x_at);
	return 0;
}

static void max_delta(struct writer *w)
{
	for (size_t i = 1; i < w->fl->nr; i++) {
		double d = delta(w, &w->fl->nodes[i]);

		if (d < 0)
			d = -d;
		if (d > w->max_delta)
			w->max_delta = d;
	}
}

/* One legend entry from @x: a swatch and its text; returns the x of the next. */
static double legend_entry(struct writer *w, double x, int y, const char *fill, const char *attrs,
			   const char *text)
{
	fprintf(w->f, "<g class=\"legend\" %s><rect x=\"%.1f\" y=\"%d\" width=\"12\" height=\"12\" "
		"fill=\"%s\"/><text x=\"%.1f\" y=\"%d\">", attrs, x, y - 10, fill, x + 16, y);
	put_str(w->f, text);
	fprintf(w->f, "</text></g>\n");
	return x + 16 + strlen(text) * CHAR_W + 24;
}

static void legend(struct writer *w)
{
	const struct flame *fl = w->fl;
	const struct flame_node *root = &fl->nodes[0];
	char fill[64], attrs[128], text[160], t[64];
	double x = SVG_PAD;

	for (int k = 0; k < REC_KIND_CNT; k++) {
		/* the four kinds always, so that a missing one shows as 0 */
		if (k >= REC_OFF && !fl->kind_total[k] && !fl->kind_before[k])
			continue;
		svg__colour(fill, sizeof(fill), &families[k], NULL, false);
		snprintf(attrs, sizeof(attrs),
			 "data-kind=\"%s\" data-us=\"%llu\" data-before-us=\"%llu\"",
			 k == REC_OTHER ? "other" : rec_kind__tag(k),
			 (unsigned long long)fl->kind_total[k], (unsigned long long)fl->kind_before[k]);
		svg__fmt_us(t, sizeof(t), fl->kind_total[k]);
		if (w->so->diff)
			snprintf(text, sizeof(text), "%s %.1f%% \u2192 %.1f%%", rec_kind__label(k),
				 100 * share(fl->kind_before[k], root->before),
				 100 * share(fl->kind_total[k], root->total));
		else
			snprintf(text, sizeof(text), "%s %s (%.1f%%)", rec_kind__label(k), t,
				 100 * share(fl->kind_total[k], root->total));
		x = legend_entry(w, x, 64, fill, attrs, text);
	}
	x = SVG_PAD;
	if (w->so->diff) {
		x = legend_entry(w, x, 82, "hsl(0,85%,60%)", "", "share grew");
		x = legend_entry(w, x, 82, "hsl(220,85%,60%)", "", "share shrank");
		legend_entry(w, x, 82, "url(#gone)", "", "only in BEFORE (drawn as wide as it was)");
		return;
	}
	if (fl->idle_total) {
		svg__colour(fill, sizeof(fill), &idle_family, NULL, false);
		snprintf(attrs, sizeof(attrs), "data-idle-us=\"%llu\" data-idle-threads=\"%zu\"",
			 (unsigned long long)fl->idle_total, w->so->idle_threads);
		svg__fmt_us(t, sizeof(t), fl->idle_total);
		snprintf(text, sizeof(text), "idle threads (%zu, asleep >= 99.9%% of the time) %s "
			 "(%.1f%%)", w->so->idle_threads, t, 100 * share(fl->idle_total, root->total));
		legend_entry(w, x, 82, fill, attrs, text);
	}
}

static void header(struct writer *w, int height)
{
	FILE *f = w->f;

	fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"no\"?>\n"
		"<svg version=\"1.1\" xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" "
		"height=\"%d\" viewBox=\"0 0 %d %d\" data-width=\"%d\" data-pad=\"%d\" "
		"data-char-width=\"%.2f\" data-total=\"%llu\" data-total-us=\"%llu\" "
		"data-diff=\"%d\">\n", SVG_WIDTH, height, SVG_WIDTH, height, SVG_WIDTH, SVG_PAD,
		CHAR_W, (unsigned long long)w->total, (unsigned long long)w->fl->nodes[0].total,
		w->so->diff);
	fprintf(f, "<defs><pattern id=\"gone\" width=\"6\" height=\"6\" "
		"patternUnits=\"userSpaceOnUse\" patternTransform=\"rotate(45)\">"
		"<rect width=\"6\" height=\"6\" fill=\"hsl(220,60%%,95%%)\"/>"
		"<rect width=\"2\" height=\"6\" fill=\"hsl(220,70%%,78%%)\"/></pattern></defs>\n");
	fprintf(f, "<style>\n"
		"text { font-family: \"DejaVu Sans Mono\", \"Liberation Mono\", Menlo, Consolas, "
		"monospace; font-size: %dpx; fill: #000; }\n"
		"#title { font-size: 16px; font-weight: bold; text-anchor: middle; }\n"
		"#subtitle { fill: #555; text-anchor: middle; }\n"
		"#matched { text-anchor: end; }\n"
		"#reset { cursor: pointer; fill: #06c; }\n"
		"g.f { cursor: pointer; }\n"
		"g.f text { pointer-events: none; }\n"
		"g.f rect { stroke: #fff; stroke-width: 0.5; }\n"
		"g.f:hover rect { stroke: #000; stroke-width: 1; }\n"
		"g.m rect { fill: hsl(300,100%%,45%%); }\n"
		"g.a { opacity: 0.55; }\n"
		".hide, g.f.out { display: none; }\n"
		"#strip { cursor: crosshair; }\n"
		"#strip .bg { fill: #000; fill-opacity: 0; }\n"
		"#strip g.col:hover .bg { fill-opacity: 0.07; }\n"
		"#strip .tick { fill: #555; font-size: 11px; }\n"
		"#range, #range-all { text-anchor: end; }\n"
		"#range-all { cursor: pointer; fill: #06c; }\n"
		"#sel { fill: hsla(210,100%%,50%%,0.15); stroke: hsl(210,100%%,40%%); "
		"pointer-events: none; }\n"
		"input { width: 100%%; box-sizing: border-box; font: %dpx monospace; }\n"
		"</style>\n", FONT_PX, FONT_PX);
	fprintf(f, "<rect width=\"100%%\" height=\"100%%\" fill=\"#fafafa\"/>\n");
}

static void put_centred(struct writer *w, const char *id, int y, const char *s, double char_w)
{
	size_t fit = (SVG_WIDTH - 2 * SVG_PAD) / char_w, len = strlen(s);

	fprintf(w->f, "<text id=\"%s\" x=\"%d\" y=\"%d\">", id, SVG_WIDTH / 2, y);
	if (len <= fit) {
		put_str(w->f, s);
	} else {
		/* back to a character's start, then "..." */
		while (fit > 3 && ((unsigned char)s[fit - 3] & 0xc0) == 0x80)
			fit--;
		put_xml(w->f, s, fit - 3);
		fputs("...", w->f);
	}
	fprintf(w->f, "</text>\n");
}

/*
 * The time strip of a recording's graph (svg.h), above the graph:
 * the window in columns (a slice each; a few slices each when the window
 * has more than STRIP_MAX_COLS), each a stack of bars, one per kind of time
 * of the busy threads and one for the idle threads, as high as how many
 * threads were in it on average; under them the long blocks, each from its
 * start to its end. And, for svg.js to draw the graph of a range of
 * columns, the time of each drawn frame by kind and column, as JSON of
 * numbers only in <script type="application/json" id="wprof-data">.
 *
 * A piece of weight W spread over columns [c, c + n) has, in [lo, hi) of
 * them, floor(W * (hi - c) / n) - floor(W * (lo - c) / n): exact in
 * integers, the same in C and in svg.js, and a piece's parts add up to it.
 */
#define STRIP_BAND_IDLE REC_KIND_CNT /* the idle threads' band */
#define STRIP_BANDS (REC_KIND_CNT + 1)
#define STRIP_H 100 /* px the strip takes, from its header to its time axis */

#define STRIP_MAX_COLS 590       /* 2 px each at least */
/* pieces in the data at most (some 15 bytes each): past them, columns of twice the slices */
#define STRIP_MAX_PIECES 300000
#define BAR_Y 16  /* from the strip's top */
#define BAR_H 50
#define LANES 3   /* rows of long blocks under the bars */
#define LANE_H 5
#define AXIS_Y 93 /* the time axis' baseline */

/* A line's piece, in slices, by the tree node of its leaf. */
struct raw_piece {
	__u32 node, slice, span;
	__u8 kind, idle;
	__u64 w;
};

/* A piece in columns, by the drawn frame it is the time of. */
struct col_piece {
	__u32 frame, col, span;
	__u8 kind;
	__u64 w;
};

struct svg_strip {
	const struct recording *r;
	__u32 nr_slices;
	struct raw_piece *raw;
	size_t nr_raw, cap_raw;
	/* by layout() */
	__u32 group, nr_cols; /* slices a column, columns */
	__u64 col_ns;
	struct col_piece *cp;
	size_t nr_cp, cap_cp;
	__u64 (*band_us)[STRIP_BANDS]; /* a column's weight by band */
};

static struct svg_strip *strip_new(const struct recording *r)
{
	struct svg_strip *s = calloc(1, sizeof(*s));
	__u64 n = recording__nr_slices(r);

	if (!s)
		return NULL;
	s->r = r;
	s->nr_slices = n > UINT32_MAX ? UINT32_MAX : n;
	if (!s->nr_slices) {
		free(s);
		errno = EINVAL;
		return NULL;
	}
	return s;
}

static void strip_free(struct svg_strip *s)
{
	if (!s)
		return;
	free(s->raw);
	free(s->cp);
	free(s->band_us);
	free(s);
}

static int grow_array(void **arr, size_t *cap, size_t nr, size_t size)
{
	size_t c = *cap ? 2 * *cap : 256;
	void *a;

	if (nr < *cap)
		return 0;
	a = realloc(*arr, c * size);
	if (!a)
		return -ENOMEM;
	*arr = a;
	*cap = c;
	return 0;
}

static int strip_add(struct svg_strip *s, __u32 leaf, enum rec_kind kind, bool idle,
		   const struct folded_piece *p, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		__u32 slice = p[i].slice, span = p[i].span;

		if (!span || !p[i].weight)
			continue;
		/* a hostile file's slices past the window: in its last one */
		if (slice >= s->nr_slices) {
			slice = s->nr_slices - 1;
			span = 1;
		} else if (span > s->nr_slices - slice) {
			span = s->nr_slices - slice;
		}
		if (grow_array((void **)&s->raw, &s->cap_raw, s->nr_raw, sizeof(*s->raw)))
			return -ENOMEM;
		s->raw[s->nr_raw++] = (struct raw_piece){
			.node = leaf, .slice = slice, .span = span, .kind = kind, .idle = idle,
			.w = p[i].weight,
		};
	}
	return 0;
}

/* The part of @w, spread over [@c, @c + @n), in [@lo, @hi) (within it): the strip's rule. */
static __u64 part_of(__u64 w, __u64 c, __u64 n, __u64 lo, __u64 hi)
{
	return (__u64)((unsigned __int128)w * (hi - c) / n - (unsigned __int128)w * (lo - c) / n);
}

static int put_col(struct svg_strip *s, const struct raw_piece *rp, __u32 frame, __u32 col,
		   __u32 span, __u64 w)
{
	int band = rp->idle ? STRIP_BAND_IDLE : rp->kind;

	if (!w)
		return 0;
	for (__u32 j = col; j < col + span; j++)
		s->band_us[j][band] += part_of(w, col, span, j, j + 1);
	if (grow_array((void **)&s->cp, &s->cap_cp, s->nr_cp, sizeof(*s->cp)))
		return -ENOMEM;
	s->cp[s->nr_cp++] = (struct col_piece){ .frame = frame, .col = col, .span = span,
						.kind = rp->kind, .w = w };
	return 0;
}

/*
 * @rp in columns of s->group slices: as it is when it starts and ends at
 * column edges; else its first column, the whole ones, its last.
 */
static int to_cols(struct svg_strip *s, const struct raw_piece *rp, __u32 frame)
{
	__u64 g = s->group, end = (__u64)rp->slice + rp->span, first, mid = 0;
	__u32 c0 = rp->slice / g, c1 = (end - 1) / g;

	if (rp->slice % g == 0 && end % g == 0)
		return put_col(s, rp, frame, c0, rp->span / g, rp->w);
	if (c0 == c1)
		return put_col(s, rp, frame, c0, 1, rp->w);
	first = part_of(rp->w, rp->slice, rp->span, rp->slice, (c0 + 1) * g);
	if (c1 > c0 + 1)
		mid = part_of(rp->w, rp->slice, rp->span, (c0 + 1) * g, c1 * g);
	return put_col(s, rp, frame, c0, 1, first) ?:
	       put_col(s, rp, frame, c0 + 1, c1 - c0 - 1, mid) ?:
	       put_col(s, rp, frame, c1, 1, rp->w - first - mid);
}

static int cmp_cp(const void *a, const void *b)
{
	const struct col_piece *x = a, *y = b;

	if (x->frame != y->frame)
		return x->frame < y->frame ? -1 : 1;
	if (x->kind != y->kind)
		return x->kind < y->kind ? -1 : 1;
	if (x->col != y->col)
		return x->col < y->col ? -1 : 1;
	return x->span < y->span ? -1 : x->span > y->span;
}

/* The pieces in columns of @group slices, the bands' sums, the pieces merged. 0 or -ENOMEM. */
static int layout(struct svg_strip *s, const __u32 *frame_of, __u32 group)
{
	size_t n = 0;
	int err = 0;

	s->group = group;
	s->nr_cols = ((__u64)s->nr_slices + group - 1) / group;
	s->col_ns = group * s->r->slice_ns;
	s->nr_cp = 0;
	free(s->band_us);
	s->band_us = calloc(s->nr_cols, sizeof(*s->band_us));
	if (!s->band_us)
		return -ENOMEM;
	for (size_t i = 0; i < s->nr_raw && !err; i++)
		err = to_cols(s, &s->raw[i], frame_of[s->raw[i].node]);
	if (err || !s->nr_cp)
		return err;
	qsort(s->cp, s->nr_cp, sizeof(*s->cp), cmp_cp);
	for (size_t i = 1; i < s->nr_cp; i++) {
		if (!cmp_cp(&s->cp[n], &s->cp[i]))
			s->cp[n].w += s->cp[i].w;
		else
			s->cp[++n] = s->cp[i];
	}
	s->nr_cp = n + 1;
	return 0;
}

/* "1 s", "250 ms": a column's length, exact. */
static void fmt_len(char *buf, size_t size, __u64 ns)
{
	if (ns % 1000000000 == 0)
		snprintf(buf, size, "%llu s", (unsigned long long)(ns / 1000000000));
	else if (ns % 1000000 == 0)
		snprintf(buf, size, "%llu ms", (unsigned long long)(ns / 1000000));
	else
		svg__fmt_us(buf, size, ns / 1000);
}

/* An instant of the window in seconds, no unit, no trailing zeros: "0", "1.25". */
static void fmt_at(char *buf, size_t size, __u64 ns)
{
	size_t len = snprintf(buf, size, "%.3f", ns / 1e9);

	while (len > 1 && buf[len - 1] == '0')
		buf[--len] = '\0';
	if (len > 1 && buf[len - 1] == '.')
		buf[--len] = '\0';
}

struct drawing {
	struct svg_strip *s;
	FILE *f;
	__u64 window_ns;
	char fill[STRIP_BANDS][32]; /* a band's colour; a block's is its kind's */
};

static double x_at(const struct drawing *d, __u64 ns)
{
	if (ns > d->window_ns)
		ns = d->window_ns;
	return SVG_PAD + (SVG_WIDTH - 2 * SVG_PAD) * ((double)ns / d->window_ns);
}

static __u64 col_len_ns(const struct drawing *d, __u32 c)
{
	__u64 t0 = c * d->s->col_ns, t1 = t0 + d->s->col_ns;

	return (t1 < d->window_ns ? t1 : d->window_ns) - t0;
}

/* How many threads were in column @c on average. */
static double threads_in(const struct drawing *d, __u32 c)
{
	__u64 us = 0, ns = col_len_ns(d, c);

	for (int b = 0; b < STRIP_BANDS; b++)
		us += d->s->band_us[c][b];
	return ns ? us * 1e3 / ns : 0;
}

static const char *band_label(int b)
{
	return b == STRIP_BAND_IDLE ? "idle threads" : rec_kind__label(b);
}

static void column(const struct drawing *d, __u32 c, double top_threads)
{
	__u64 t0 = c * d->s->col_ns, ns = col_len_ns(d, c);
	double x0 = x_at(d, t0), x1 = x_at(d, t0 + ns), y = STRIP_Y + BAR_Y + BAR_H;
	char a[32], b[32], t[64];
	int shown = 0;

	fmt_at(a, sizeof(a), t0);
	fmt_at(b, sizeof(b), t0 + ns);
	fprintf(d->f, "<g class=\"col\" data-c=\"%u\"><title>%s-%s s:", c, a, b);
	for (int k = 0; k < STRIP_BANDS; k++) {
		if (!d->s->band_us[c][k])
			continue;
		svg__fmt_us(t, sizeof(t), d->s->band_us[c][k]);
		fprintf(d->f, "%s %s %s", shown++ ? "," : "", band_label(k), t);
	}
	fprintf(d->f, "%s (%.1f threads)</title>", shown ? "" : " nothing", threads_in(d, c));
	/* the column's whole height, to point at */
	fprintf(d->f, "<rect class=\"bg\" x=\"%.2f\" y=\"%d\" width=\"%.2f\" height=\"%d\"/>",
		x0, STRIP_Y + BAR_Y, x1 - x0, BAR_H);
	for (int k = 0; k < STRIP_BANDS && top_threads > 0; k++) {
		__u64 us = d->s->band_us[c][k];
		double h = ns ? us * 1e3 / ns / top_threads * BAR_H : 0;

		if (!us)
			continue;
		y -= h;
		fprintf(d->f, "<rect data-k=\"%s\" data-us=\"%llu\" x=\"%.2f\" y=\"%.2f\" "
			"width=\"%.2f\" height=\"%.2f\" fill=\"%s\"/>",
			k == STRIP_BAND_IDLE ? "idle" : k == REC_OTHER ? "other" : rec_kind__tag(k),
			(unsigned long long)us, x0, y, x1 - x0, h, d->fill[k]);
	}
	fprintf(d->f, "</g>\n");
}

static enum rec_kind kind_of_block(const struct drawing *d, const struct rec_block *b)
{
	if (d->s->r->no_states)
		return REC_OFF;
	switch (b->state) {
	case WPROF_OFF_DISK:
		return REC_DISK;
	case WPROF_OFF_RUNQ:
		return REC_RUNQ;
	default:
		return REC_SLEEP;
	}
}

/* The long blocks, each in the first row free where it starts (the last row when none is). */
static void blocks(const struct drawing *d)
{
	const struct recording *r = d->s->r;
	double lane_end[LANES] = {};

	for (size_t i = 0; i < r->nr_blocks; i++) {
		const struct rec_block *b = &r->blocks[i];
		double x0 = x_at(d, b->offset_ns), x1 = x_at(d, b->offset_ns + rec_block__ns(b));
		const char *leaf;
		char t[64], at[32];
		size_t len;
		int lane = 0;

		if (x1 - x0 < 1.5)
			x1 = x0 + 1.5;
		while (lane < LANES - 1 && lane_end[lane] > x0)
			lane++;
		lane_end[lane] = x1;
		svg__fmt_us(t, sizeof(t), rec_block__ns(b) / 1000);
		fmt_at(at, sizeof(at), b->offset_ns);
		fprintf(d->f, "<g class=\"blk\" data-tid=\"%u\" data-at-ns=\"%llu\" "
			"data-ns=\"%llu\"><title>", b->tid, (unsigned long long)b->offset_ns,
			(unsigned long long)rec_block__ns(b));
		safestr__xml(d->f, b->comm, strnlen(b->comm, sizeof(b->comm)));
		fprintf(d->f, " %u: %s %s at %s s", b->tid, timeline__state(b->state), t, at);
		leaf = timeline__leaf(b, &len);
		if (leaf) {
			fputs(", in ", d->f);
			safestr__xml(d->f, leaf, len);
		}
		fprintf(d->f, "%s</title><rect x=\"%.2f\" y=\"%d\" width=\"%.2f\" height=\"%d\" "
			"fill=\"%s\"/></g>\n", b->open ? " (still going at the end)" : "", x0,
			STRIP_Y + BAR_Y + BAR_H + 2 + lane * LANE_H, x1 - x0, LANE_H - 1,
			d->fill[kind_of_block(d, b)]);
	}
}

/* Time labels at column edges, some 60 px apart or more. */
static void axis(const struct drawing *d)
{
	static const __u32 steps[] = { 1, 2, 5 };
	double col_px = (SVG_WIDTH - 2 * SVG_PAD) * ((double)d->s->col_ns / d->window_ns);
	__u32 every = 1;
	char at[32];

	for (__u64 m = 1; col_px * every < 60 && m < UINT32_MAX / 10; m *= 10)
		for (int i = 0; i < 3 && col_px * every < 60; i++)
			every = steps[i] * m;
	for (__u32 c = 0; c < d->s->nr_cols; c += every) {
		fmt_at(at, sizeof(at), (__u64)c * d->s->col_ns);
		fprintf(d->f, "<text class=\"tick\" x=\"%.2f\" y=\"%d\">%s%s</text>\n",
			x_at(d, (__u64)c * d->s->col_ns), STRIP_Y + AXIS_Y, at, c ? "" : " s");
	}
}

static void strip(const struct drawing *d)
{
	double top = 0;
	char len[32];

	for (__u32 c = 0; c < d->s->nr_cols; c++)
		if (threads_in(d, c) > top)
			top = threads_in(d, c);
	fmt_len(len, sizeof(len), d->s->col_ns);
	fprintf(d->f, "<g id=\"strip\" data-cols=\"%u\" data-col-ns=\"%llu\">\n"
		"<text id=\"strip-label\" x=\"%d\" y=\"%d\">threads by state, per %s (full "
		"height: %.3g); drag to pick a time range</text>\n"
		"<text id=\"range\" x=\"%d\" y=\"%d\"></text>"
		"<text id=\"range-all\" class=\"hide\" x=\"%d\" y=\"%d\">whole window</text>\n",
		d->s->nr_cols, (unsigned long long)d->s->col_ns, SVG_PAD, STRIP_Y + 12, len, top,
		SVG_WIDTH - SVG_PAD - 110, STRIP_Y + 12, SVG_WIDTH - SVG_PAD, STRIP_Y + 12);
	for (__u32 c = 0; c < d->s->nr_cols; c++)
		column(d, c, top);
	blocks(d);
	axis(d);
	fprintf(d->f, "<rect id=\"sel\" class=\"hide\" x=\"0\" y=\"%d\" width=\"0\" "
		"height=\"%d\"/>\n</g>\n", STRIP_Y + BAR_Y - 2, BAR_H + 4 + LANES * LANE_H);
}

/* svg.js's data: numbers and the kinds' fixed names only, so nothing in it needs escaping. */
static void data(const struct drawing *d)
{
	const struct svg_strip *s = d->s;
	FILE *f = d->f;

	fprintf(f, "<script type=\"application/json\" id=\"wprof-data\">{\"cols\":%u,"
		"\"col_ns\":%llu,\"window_ns\":%llu,\"min_px\":%g,\"tags\":[", s->nr_cols,
		(unsigned long long)s->col_ns, (unsigned long long)d->window_ns, SVG_MIN_PX);
	for (int k = 0; k < REC_KIND_CNT; k++)
		fprintf(f, "%s\"%s\"", k ? "," : "", k == REC_OTHER ? "other" : rec_kind__tag(k));
	fputs("],\"labels\":[", f);
	for (int k = 0; k < REC_KIND_CNT; k++)
		fprintf(f, "%s\"%s\"", k ? "," : "", rec_kind__label(k));
	fputs("],\"fam\":[", f);
	for (int b = 0; b < STRIP_BANDS; b++) {
		const struct svg_family *fam = svg__family(b, b == STRIP_BAND_IDLE);

		fprintf(f, "%s[%d,%d,%d,%d,%d]", b ? "," : "", fam->hue, fam->hue_span, fam->sat,
			fam->light, fam->light_span);
	}
	fputs("],\"p\":[", f);
	for (size_t i = 0; i < s->nr_cp; i++) {
		const struct col_piece *p = &s->cp[i];
		bool same = i && p->frame == p[-1].frame && p->kind == p[-1].kind;

		if (!same)
			fprintf(f, "%s[%u,%u", i ? "]," : "", p->frame, p->kind);
		fprintf(f, ",%u,%u,%llu", p->col, p->span, (unsigned long long)p->w);
	}
	fprintf(f, "%s]}</script>\n", s->nr_cp ? "]" : "");
}

/*
 * Write the strip and svg.js's data, for the frames of @fl drawn: @dom[i]
 * is node i's index among them, UINT32_MAX when not drawn (its time is
 * then its nearest drawn caller's). 0 or -errno.
 */
static int strip_write(struct svg_strip *s, const struct flame *fl, const __u32 *dom, FILE *f)
{
	struct drawing d = { .s = s, .f = f, .window_ns = s->r->prof.window_ns };
	__u32 *frame_of = malloc((fl->nr ? fl->nr : 1) * sizeof(*frame_of));
	__u32 group = ((__u64)s->nr_slices + STRIP_MAX_COLS - 1) / STRIP_MAX_COLS;
	int err = 0;

	if (!frame_of)
		return -ENOMEM;
	if (!d.window_ns)
		d.window_ns = (__u64)s->nr_slices * s->r->slice_ns;
	for (int b = 0; b < STRIP_BANDS; b++)
		svg__colour(d.fill[b], sizeof(d.fill[b]), svg__family(b, b == STRIP_BAND_IDLE),
			    NULL, false);
	/* a node's time is its nearest drawn caller's; a caller's index is below its callees' */
	for (size_t i = 0; i < fl->nr; i++)
		frame_of[i] = dom[i] != UINT32_MAX || !i ? dom[i] : frame_of[fl->nodes[i].parent];
	for (;;) {
		err = layout(s, frame_of, group);
		if (err || s->nr_cp <= STRIP_MAX_PIECES || s->nr_cols == 1)
			break;
		group = group > UINT32_MAX / 2 ? UINT32_MAX : 2 * group;
	}
	free(frame_of);
	if (err)
		return err;
	strip(&d);
	data(&d);
	return 0;
}

int svg__write(const struct flame *fl, const struct svg_opts *so, FILE *f)
{
	struct writer w = { .f = f, .fl = fl, .so = so, .top = TOP };
	int frames_h = (fl->max_depth + 1) * FRAME_H, dy = 0, err = 0;
	struct svg_strip *strip = NULL;

	w.total = flame__width(&fl->nodes[0]);
	w.scale = w.total ? (double)(SVG_WIDTH - 2 * SVG_PAD) / w.total : 0;
	if (so->strip && !so->diff && w.total) {
		strip = so->strip;
		dy = STRIP_H;
		w.top += dy;
		w.dom = malloc(fl->nr * sizeof(*w.dom));
		if (!w.dom)
			return -ENOMEM;
		memset(w.dom, 0xff, fl->nr * sizeof(*w.dom)); /* UINT32_MAX: not drawn */
	}
	if (so->diff)
		max_delta(&w);
	header(&w, w.top + frames_h + 30);
	put_centred(&w, "title", 24, so->title ? so->title : "wprof", 9.7);
	put_centred(&w, "subtitle", 42, so->subtitle ? so->subtitle : "", CHAR_W);
	legend(&w);
	fprintf(f, "<text id=\"reset\" class=\"hide\" x=\"%d\" y=\"%d\">Reset zoom</text>\n"
		"<text id=\"matched\" x=\"%d\" y=\"%d\"></text>\n"
		"<foreignObject x=\"%d\" y=\"%d\" width=\"240\" height=\"24\">"
		"<input xmlns=\"http://www.w3.org/1999/xhtml\" id=\"search\" type=\"search\" "
		"placeholder=\"search (regex), / or Ctrl-F\" spellcheck=\"false\"/></foreignObject>\n",
		SVG_PAD, 102 + dy, SVG_WIDTH - SVG_PAD - 250, 102 + dy, SVG_WIDTH - SVG_PAD - 240,
		86 + dy);
	fprintf(f, "<g id=\"frames\">\n");
	if (w.total && draw(&w)) {
		err = -ENOMEM;
		goto out;
	}
	fprintf(f, "</g>\n<text id=\"details\" x=\"%d\" y=\"%d\"></text>\n", SVG_PAD,
		w.top + frames_h + 16);
	if (w.left_out)
		fprintf(f, "<text id=\"leftout\" x=\"%d\" y=\"%d\" style=\"text-anchor: end; "
			"fill: #777\">%zu frames narrower than %.1f px not drawn, nor what they "
			"call</text>\n",
			SVG_WIDTH - SVG_PAD, w.top + frames_h + 16, w.left_out, SVG_MIN_PX);
	if (strip) {
		err = strip_write(strip, fl, w.dom, f);
		if (err)
			goto out;
	}
	fprintf(f, "<script type=\"text/ecmascript\"><![CDATA[\n%s]]></script>\n</svg>\n", svg_js);
	if (fflush(f) || ferror(f))
		err = errno ? -errno : -EIO;
out:
	free(w.dom);
	return err;
}

struct rec_ctx {
	struct flame *fl;
	struct svg_strip *strip;
	const struct profile *p;
	bool tag_leaf, ids;
	char *buf;
	size_t cap;
};

/* A line of the recording, without its ids, into the tree; its pieces into the strip. */
static int add_line(const char *line, __u64 weight, __u64 count, __u64 max,
		    const struct folded_piece *p, size_t np, void *ctx)
{
	struct rec_ctx *c = ctx;
	const struct thread_acct *t;
	struct rec_line rl;
	size_t len = strlen(line) + 1, n;
	bool idle;
	int err;

	if (rec_line__split(line, c->tag_leaf, c->ids, &rl))
		return -EINVAL;
	if (len > c->cap) {
		char *b = realloc(c->buf, len);

		if (!b)
			return -ENOMEM;
		c->buf = b;
		c->cap = len;
	}
	t = c->ids ? rec_info__thread_of(c->p, rl.pid, rl.tid) : NULL;
	idle = t && profile__asleep(t);
	if (c->tag_leaf)
		n = snprintf(c->buf, c->cap, "%.*s%s%.*s%s%.*s", (int)rl.comm.len, rl.comm.s,
			     rl.body.len ? ";" : "", (int)rl.body.len, rl.body.s,
			     rl.tag.len ? ";" : "", (int)rl.tag.len, rl.tag.s);
	else
		n = snprintf(c->buf, c->cap, "%.*s%s%.*s%s%.*s", (int)rl.tag.len, rl.tag.s,
			     rl.tag.len ? ";" : "", (int)rl.comm.len, rl.comm.s,
			     rl.body.len ? ";" : "", (int)rl.body.len, rl.body.s);
	err = flame__add(c->fl, c->buf, n, rl.kind,
			 idle ? (c->tag_leaf || !rl.tag.len ? 0 : 1) : SIZE_MAX, weight, 0, 0);
	if (!err && c->strip)
		err = strip_add(c->strip, c->fl->last, rl.kind, idle, p, np);
	return err;
}

int svg__write_recording(struct recording *r, FILE *f)
{
	const struct profile *p = &r->prof;
	const struct rec_info *ri = &r->info;
	struct rec_ctx c = { .p = p, .tag_leaf = r->tag_leaf, .ids = r->ids };
	struct svg_opts so = {};
	char title[600], subtitle[256], date[64], win[64];
	int err;

	c.fl = flame__new();
	if (!c.fl)
		return -ENOMEM;
	if (r->slice_ns && recording__nr_slices(r)) {
		c.strip = strip_new(r);
		if (!c.strip) {
			err = -ENOMEM;
			goto out;
		}
	}
	err = folded__for_each_pieces(r->lines, add_line, &c);
	if (!err)
		err = flame__finish(c.fl);
	if (err)
		goto out;
	r->prof.flame_stacks_merged += c.fl->stacks_merged;
	for (size_t i = 0; i < p->nr_threads; i++)
		so.idle_threads += profile__asleep(&p->threads[i]);
	rec_info__date(ri, date, sizeof(date));
	svg__fmt_us(win, sizeof(win), ri->window_ns / 1000);
	snprintf(title, sizeof(title), "wprof: wall-clock time of %s", ri->target);
	/*
	 * -p: the process names alone do not tell a postgres backend from the
	 * postmaster, or which redis: the command line of the (first) target
	 * follows, cut to what a title line holds.
	 */
	if (!strncmp(ri->target, "pid ", 4)) {
		const char *cmd = recording__cmdline(r, (__u32)strtoul(ri->target + 4, NULL, 10));

		if (cmd && cmd[0])
			snprintf(title + strlen(title), sizeof(title) - strlen(title), ": %.*s%s",
				 100, cmd, strlen(cmd) > 100 ? "..." : "");
	}
	snprintf(subtitle, sizeof(subtitle), "%s from %s; on-CPU sampled at %llu Hz; "
		 "%zu threads", win, date, (unsigned long long)ri->freq_hz,
		 profile__threads_shown(p));
	so.title = title;
	so.subtitle = subtitle;
	so.strip = c.strip;
	err = svg__write(c.fl, &so, f);
out:
	strip_free(c.strip);
	free(c.buf);
	flame__free(c.fl);
	return err;
}
