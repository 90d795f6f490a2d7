/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The slices of a recording's window (--slice): where a time falls in them,
 * and slices made longer (store__coarsen()).
 */
#ifndef WPROF_SLICES_H
#define WPROF_SLICES_H

#include <stdbool.h>
#include <linux/types.h>

/* Slices [slice, slice + span) of the window, and a time or a count in them. */
struct slice_part {
	__u32 slice, span;
	__u64 ns;
};

/* Slices [@a, @a + @a_span) before (-1), as (0) or after (1) [@b, @b + @b_span): by start, then span. */
static inline int slices__cmp(__u32 a, __u32 a_span, __u32 b, __u32 b_span)
{
	if (a != b)
		return a < b ? -1 : 1;
	return a_span < b_span ? -1 : a_span > b_span;
}

/*
 * Where @ns from @from_ns (both from the window's start) fall in slices of
 * @slice_ns, as the BPF side splits them: the first slice, the whole slices
 * after it as one, the last. @out[i] gets slice, span and ns; returns how
 * many (1 to 3).
 */
static inline int slices__split(__u64 slice_ns, __u64 from_ns, __u64 ns, struct slice_part out[3])
{
	__u64 s0 = from_ns / slice_ns, s1 = (from_ns + (ns ? ns - 1 : 0)) / slice_ns;
	__u64 e0 = (s0 + 1) * slice_ns, e1 = s1 * slice_ns;
	int n = 0;

	if (s0 >= s1) {
		out[0] = (struct slice_part){ s0, 1, ns };
		return 1;
	}
	out[n++] = (struct slice_part){ s0, 1, e0 - from_ns };
	if (s1 > s0 + 1)
		out[n++] = (struct slice_part){ s0 + 1, s1 - s0 - 1, e1 - e0 };
	out[n++] = (struct slice_part){ s1, 1, from_ns + ns - e1 };
	return n;
}

/*
 * Slices [@slice, @slice + @span) as slices 2^@shift times as long (see
 * store__coarsen()): the coarse slice the first falls in, the whole coarse
 * slices after it as one, the coarse slice the last falls in. @out[i] gets
 * slice and span, and in ns how many of the @span fine slices it has; returns
 * how many (1 to 3; 0 when @span is 0: not known in time).
 */
static inline int slices__coarsen(__u32 slice, __u32 span, __u32 shift, struct slice_part out[3])
{
	__u64 end = (__u64)slice + span, c0 = slice >> shift, c1 = (end - 1) >> shift;
	__u64 e0 = (c0 + 1) << shift, e1 = c1 << shift;
	int n = 0;

	if (!span)
		return 0;
	if (c0 == c1) {
		out[0] = (struct slice_part){ c0, 1, span };
		return 1;
	}
	out[n++] = (struct slice_part){ c0, 1, e0 - slice };
	if (c1 > c0 + 1)
		out[n++] = (struct slice_part){ c0 + 1, c1 - c0 - 1, e1 - e0 };
	out[n++] = (struct slice_part){ c1, 1, end - e1 };
	return n;
}

/* @v's share of @part (of slices__coarsen()) of @span slices; the last part takes what is left. */
static inline __u64 slices__share(__u64 v, const struct slice_part *part, __u32 span,
				  __u64 *left, bool last)
{
	__u64 x = last ? *left : (__u64)((unsigned __int128)v * part->ns / span);

	*left -= x;
	return x;
}

#endif /* WPROF_SLICES_H */
