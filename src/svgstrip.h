/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The time strip of a recording's flame graph (svg.h), above the graph:
 * the window in columns (a slice each; a few slices each when a column
 * would be under 2 px, or the data too long), each a stack of bars, one
 * per kind of time of the busy threads and one for the idle threads, as
 * high as how many threads were in it on average; under them the long
 * blocks, each from its start to its end. And, for svg.js to draw the graph of a range of
 * columns, the time of each drawn frame by kind and column, as JSON of
 * numbers only in <script type="application/json" id="wprof-data">.
 */
#ifndef WPROF_SVGSTRIP_H
#define WPROF_SVGSTRIP_H

#include <stdbool.h>
#include <stdio.h>

#include "flame.h"
#include "folded.h"
#include "recording.h"

#define SVGSTRIP_HEIGHT 100 /* px the strip takes, from its header to its time axis */

struct svg_strip;

/* A strip of @r's slices (recording__nr_slices(@r) > 0, else EINVAL), or NULL with errno set. */
struct svg_strip *svgstrip__new(const struct recording *r);

/* Frees @s; NULL is nothing. */
void svgstrip__free(struct svg_strip *s);

/*
 * The time of a line of the recording, its pieces by slice @p[0..@n)
 * (folded.h), into the strip: of kind @kind, of an idle thread when @idle, in the tree's node
 * @leaf (the line's leaf frame). 0 or -ENOMEM.
 */
int svgstrip__add(struct svg_strip *s, __u32 leaf, enum rec_kind kind, bool idle,
		  const struct folded_piece *p, size_t n);

/*
 * Write the strip, its top at @y px, and svg.js's data, for the frames of
 * @fl drawn: @dom[i] is node i's index among them, UINT32_MAX when not
 * drawn (its time is then its nearest drawn caller's). 0 or -errno.
 */
int svgstrip__write(struct svg_strip *s, const struct flame *fl, const __u32 *dom, int y, FILE *f);

#endif /* WPROF_SVGSTRIP_H */
