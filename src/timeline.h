/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * When the time went: a recording's long blocks (--long-block) in the
 * summary, the threads table and the JSON report.
 */
#ifndef WPROF_TIMELINE_H
#define WPROF_TIMELINE_H

#include <stdio.h>

#include "recording.h"

/* The summary's few longest blocks, with their instant and leaf frame; nothing when none. */
void timeline__summary(const struct recording *r, FILE *f);

/*
 * The longest long block of thread @tid of @pid (@tid 0: of any thread of
 * @pid), or NULL.
 */
const struct rec_block *timeline__longest(const struct recording *r, __u32 pid, __u32 tid);

/*
 * The JSON report's "start_unix_ns" ... "long_blocks": [...], "slice_ns",
 * "slices": [...] members, each line ending in ",". 0 or -errno.
 */
int timeline__json(const struct recording *r, FILE *f);

/*
 * The innermost user frame of @b's stack (root first): the last frame not
 * ending in "_[k]"; the root when every one does. Returns its raw bytes,
 * *@len of them, in b->stack (not safe text: escape them for where they
 * are written), or NULL when @b has no stack.
 */
const char *timeline__leaf(const struct rec_block *b, size_t *len);

/* The state's name in the JSON report: "sleep", "disk", "runqueue". */
const char *timeline__state(__u32 state);

/*
 * Cut @r to [*@from, *@to) ns of its window, rounded out to whole slices
 * (which *@from and *@to get), as if it had recorded that alone: its lines,
 * threads' times and long blocks; @unplaced_us gets the time of lines not
 * known by slice, left out. 0, -ENODATA (no slices), -ERANGE (an empty
 * range) or -ENOMEM.
 */
int timeline__range(struct recording *r, __u64 *from, __u64 *to, __u64 *unplaced_us);

#endif /* WPROF_TIMELINE_H */
