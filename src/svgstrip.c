// SPDX-License-Identifier: GPL-2.0-only
/*
 * The time strip above a recording's flame graph: see svgstrip.h.
 *
 * A piece of weight W spread over columns [c, c + n) has, in [lo, hi) of
 * them, floor(W * (hi - c) / n) - floor(W * (lo - c) / n): exact in
 * integers, the same in C and in svg.js, and a piece's parts add up to it.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "safestr.h"
#include "svg.h"
#include "svgstrip.h"
#include "timeline.h"

#define STRIP_BAND_IDLE REC_KIND_CNT /* the idle threads' band */
#define STRIP_BANDS (REC_KIND_CNT + 1)

#define STRIP_MAX_COLS 590       /* 2 px each at least */
/* pieces in the data at most (some 15 bytes each): past them, columns of twice the slices */
#define STRIP_MAX_PIECES 300000
#define BAR_Y 16  /* px from the strip's top */
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

struct svg_strip *svgstrip__new(const struct recording *r)
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

void svgstrip__free(struct svg_strip *s)
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

int svgstrip__add(struct svg_strip *s, __u32 leaf, enum rec_kind kind, bool idle,
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
	int y; /* the strip's top */
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
	double x0 = x_at(d, t0), x1 = x_at(d, t0 + ns), y = d->y + BAR_Y + BAR_H;
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
		x0, d->y + BAR_Y, x1 - x0, BAR_H);
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
	case WPROF_OFF_THROTTLED:
		return REC_THROTTLED;
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
			d->y + BAR_Y + BAR_H + 2 + lane * LANE_H, x1 - x0, LANE_H - 1,
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
			x_at(d, (__u64)c * d->s->col_ns), d->y + AXIS_Y, at, c ? "" : " s");
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
		d->s->nr_cols, (unsigned long long)d->s->col_ns, SVG_PAD, d->y + 12, len, top,
		SVG_WIDTH - SVG_PAD - 110, d->y + 12, SVG_WIDTH - SVG_PAD, d->y + 12);
	for (__u32 c = 0; c < d->s->nr_cols; c++)
		column(d, c, top);
	blocks(d);
	axis(d);
	fprintf(d->f, "<rect id=\"sel\" class=\"hide\" x=\"0\" y=\"%d\" width=\"0\" "
		"height=\"%d\"/>\n</g>\n", d->y + BAR_Y - 2, BAR_H + 4 + LANES * LANE_H);
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

int svgstrip__write(struct svg_strip *s, const struct flame *fl, const __u32 *dom, int y, FILE *f)
{
	struct drawing d = { .s = s, .f = f, .y = y, .window_ns = s->r->prof.window_ns };
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
