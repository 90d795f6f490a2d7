/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * A flame graph as one self-contained SVG: every frame drawn (those under a
 * tenth of a pixel left out, as flamegraph.pl leaves them out), with its
 * tooltip; the kinds of time in colour families (on-CPU warm, sleep blue,
 * disk purple, runqueue green), idle threads grey; a legend with each
 * kind's total and share; and a script (src/svg.js, embedded) for zoom,
 * search and details. No network, no external file.
 *
 * A diff graph colours frames by how their share changed instead: red
 * grown, blue shrunk, the deeper the more; what only BEFORE had is striped.
 *
 * A recording with slices (recording.h: slice_ns) has a time strip above
 * its graph: per slice, how many threads were in each kind of time (idle
 * threads grey), and its long blocks from start to end; a range picked on
 * it redraws the graph for that range alone (svg.js, from each drawn
 * frame's time by slice in the document).
 *
 * The totals are in the document for scripts: the <svg> element's
 * data-total-us (the weight of the whole graph; AFTER's in a diff) and each
 * legend entry's data-kind and data-us (data-before-us in a diff); each
 * strip column's bands' data-k and data-us, each long block's data-tid,
 * data-at-ns (from the window's start) and data-ns.
 */
#ifndef WPROF_SVG_H
#define WPROF_SVG_H

#include <stdbool.h>
#include <stdio.h>

#include "flame.h"
#include "folded.h"
#include "recording.h"

struct svg_strip;

struct svg_opts {
	const char *title;
	const char *subtitle;
	bool diff;           /* colour by change (the tree has BEFORE's weights) */
	bool absolute;       /* diff: by the change of time, not of share */
	size_t idle_threads; /* how many threads the idle frames are of */
	struct svg_strip *strip; /* a time strip above the graph (svgstrip.h), or NULL */
};

/* Write @fl (flame__finish()ed). 0, or -errno when writing failed. */
int svg__write(const struct flame *fl, const struct svg_opts *so, FILE *f);

/*
 * The flame graph of the recording @r (stacks merged past FLAME_MAX_NODES
 * added to r->prof.flame_stacks_merged): its lines, its threads to tell idle
 * ones (at least 99.9% of their time asleep; with ids in the lines), its
 * rec_info for the title. 0 or -errno.
 */
int svg__write_recording(struct recording *r, FILE *f);

/*
 * For the writers of the document's parts (svgstrip.h, the time strip): its
 * width and margin, the narrowest frame drawn, in px; the colours.
 */
#define SVG_WIDTH 1200 /* as flamegraph.pl's default */
#define SVG_PAD 10
#define SVG_MIN_PX 0.1 /* narrower frames are not drawn: nobody could see them */

/* A kind of time's colours, in HSL: hue from + up to span, by a hash of the name. */
struct svg_family {
	int hue, hue_span, sat, light, light_span;
};

/* The colours of @kind's time, or of the idle threads' when @idle. */
const struct svg_family *svg__family(enum rec_kind kind, bool idle);

/* "hsl(...)": the fill of frame @name (NULL: of the family itself) of @fam, paler when @pale. */
void svg__colour(char *buf, size_t size, const struct svg_family *fam, const char *name, bool pale);

/* "512 µs", "12.345 ms", "3.000 s": what the graphs and tables print. */
void svg__fmt_us(char *buf, size_t size, __u64 us);

#endif /* WPROF_SVG_H */
