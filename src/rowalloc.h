/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Room in the kernel's unwind-row array (see unwtab.h): which ranges hold
 * a file's rows, which are free, and which were given back too recently to
 * be written again.
 *
 * A BPF walk reads a file's rows through a process's map entry, which it
 * looked up a moment before; it cannot be told to stop. So a range given
 * back is first held (quarantined) until every program run that may have
 * read it is over: until a grace point that comes after it (the caller
 * says when one has passed: an update of a map of maps, which the kernel
 * completes only once every BPF program running has finished) and at least
 * ROWALLOC_GRACE_NS after it (for what the grace point does not wait for:
 * see unwtab.c). Only then is it handed out again. Free ranges are kept
 * sorted and merged with their neighbours; a request takes the smallest
 * free range it fits in (best fit), from its start.
 */
#ifndef WPROF_ROWALLOC_H
#define WPROF_ROWALLOC_H

#include <stddef.h>
#include <linux/types.h>

#define ROWALLOC_GRACE_NS 1000000000ULL

struct rowalloc;

struct rowalloc_stats {
	__u64 capacity;    /* rows in the array */
	__u64 used;        /* rows handed out and not given back */
	__u64 quarantined; /* rows given back, not free yet */
	__u64 free;        /* rows free to hand out */
	__u64 largest;     /* the largest free range */
};

/* An allocator over rows [0, @capacity). NULL and errno on failure. */
struct rowalloc *rowalloc__new(__u32 capacity);
void rowalloc__free(struct rowalloc *a); /* NULL ok */

/*
 * @nr contiguous rows (@nr > 0), free at @now_ns: their first in *@first.
 * 0, -ENOSPC when no free range is that long (quarantined ones are not), or
 * -ENOMEM.
 */
int rowalloc__get(struct rowalloc *a, __u32 nr, __u64 now_ns, __u32 *first);

/*
 * Give back [@first, @first + @nr), handed out before, at @now_ns:
 * quarantined (see above). 0, -EINVAL for a range outside the array or
 * overlapping free rows, or -ENOMEM.
 */
int rowalloc__put(struct rowalloc *a, __u32 first, __u32 nr, __u64 now_ns);

/*
 * A grace point has passed, at @now_ns: no program run that began before
 * the caller asked for it is still going. The ranges given back before it
 * and at least ROWALLOC_GRACE_NS ago become free.
 */
void rowalloc__grace(struct rowalloc *a, __u64 now_ns);

void rowalloc__stats(const struct rowalloc *a, struct rowalloc_stats *st);

#endif /* WPROF_ROWALLOC_H */
