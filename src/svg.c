// SPDX-License-Identifier: GPL-2.0-only
/* A flame graph as one self-contained SVG: see svg.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "hmap.h"
#include "safestr.h"
#include "svg.h"
#include "svgstrip.h"
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
	[REC_THROTTLED] = { 30, 15, 80, 55, 10 }, /* orange: held back by a CPU quota */
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

int svg__write(const struct flame *fl, const struct svg_opts *so, FILE *f)
{
	struct writer w = { .f = f, .fl = fl, .so = so, .top = TOP };
	int frames_h = (fl->max_depth + 1) * FRAME_H, dy = 0, err = 0;
	struct svg_strip *strip = NULL;

	w.total = flame__width(&fl->nodes[0]);
	w.scale = w.total ? (double)(SVG_WIDTH - 2 * SVG_PAD) / w.total : 0;
	if (so->strip && !so->diff && w.total) {
		strip = so->strip;
		dy = SVGSTRIP_HEIGHT;
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
		err = svgstrip__write(strip, fl, w.dom, STRIP_Y, f);
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
		err = svgstrip__add(c->strip, c->fl->last, rl.kind, idle, p, np);
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
		c.strip = svgstrip__new(r);
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
	svgstrip__free(c.strip);
	free(c.buf);
	flame__free(c.fl);
	return err;
}
