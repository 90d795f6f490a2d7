// SPDX-License-Identifier: GPL-2.0-only
/*
 * What `wprof diff` compares a stack's weight as (diff.h, enum
 * diff_measure): time as it is, time per second of window, or share of
 * each side's total, chosen from what both sides know of themselves.
 */
#include <errno.h>
#include <stdint.h>

#include "diff.h"
#include "util.h"

int diff__resolve(struct diff *d, enum diff_measure m)
{
	const struct diff_side *b = &d->side[DIFF_BEFORE], *a = &d->side[DIFF_AFTER];
	bool windows = b->known && a->known && b->window_ns && a->window_ns;

	if (m == DIFF_AUTO)
		m = windows && b->cmd && a->cmd ? DIFF_TIME :
		    windows && !b->cmd && !a->cmd ? DIFF_RATE : DIFF_SHARE;
	if (m == DIFF_RATE && !windows) {
		pr_err("--measure rate needs two saved recordings (wprof record -o X.wprof): "
		       "folded text does not say how long its window was");
		return -EINVAL;
	}
	d->measure = m;
	return 0;
}

const char *diff__measure_name(enum diff_measure m)
{
	return m == DIFF_TIME ? "time" : m == DIFF_RATE ? "time per second of window" : "share";
}

double diff__value(const struct diff *d, int side, __u64 w)
{
	switch (d->measure) {
	case DIFF_TIME:
		return w;
	case DIFF_RATE:
		return (double)w * 1e9 / d->side[side].window_ns;
	default:
		return d->total[side] ? 100.0 * w / d->total[side] : 0;
	}
}

double diff__whole(const struct diff *d)
{
	return d->measure == DIFF_SHARE ? 100 : diff__value(d, DIFF_BEFORE, d->total[DIFF_BEFORE]);
}

double diff__change(const struct diff *d, const struct diff_stack *s)
{
	/* exactly 0 for equal shares: no rounding noise in a file against itself */
	if (d->measure == DIFF_SHARE &&
	    (unsigned __int128)s->w[DIFF_BEFORE] * d->total[DIFF_AFTER] ==
		    (unsigned __int128)s->w[DIFF_AFTER] * d->total[DIFF_BEFORE])
		return 0;
	if (d->measure == DIFF_TIME)
		return (double)s->w[DIFF_AFTER] - (double)s->w[DIFF_BEFORE];
	return diff__value(d, DIFF_AFTER, s->w[DIFF_AFTER]) -
	       diff__value(d, DIFF_BEFORE, s->w[DIFF_BEFORE]);
}

__u64 diff__before(const struct diff *d, const struct diff_stack *s)
{
	__u64 num = d->total[DIFF_AFTER], den = d->total[DIFF_BEFORE];
	unsigned __int128 v;

	if (d->measure == DIFF_RATE) {
		num = d->side[DIFF_AFTER].window_ns;
		den = d->side[DIFF_BEFORE].window_ns;
	}
	if (d->measure == DIFF_TIME || !den)
		return s->w[DIFF_BEFORE];
	v = (unsigned __int128)s->w[DIFF_BEFORE] * num;
	v = (v + den / 2) / den;
	return v > UINT64_MAX ? UINT64_MAX : (__u64)v;
}
