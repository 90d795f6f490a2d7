// SPDX-License-Identifier: GPL-2.0-only
/* Room in the kernel's unwind-row array, given back after a grace period: see rowalloc.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "rowalloc.h"
#include "util.h"

struct range {
	__u32 first, nr;
};

struct held {
	__u32 first, nr;
	__u64 put_ns;
	__u64 epoch; /* grace points passed when it was given back */
};

struct rowalloc {
	__u32 capacity;
	struct range *free; /* sorted by first; no two touch (they are merged) */
	size_t nr_free, cap_free;
	struct held *held;  /* quarantined, in the order given back */
	size_t nr_held, cap_held;
	__u64 epoch;
	__u64 used, quarantined;
};

struct rowalloc *rowalloc__new(__u32 capacity)
{
	struct rowalloc *a = calloc(1, sizeof(*a));

	if (!a)
		return NULL;
	a->capacity = capacity;
	if (capacity) {
		a->free = malloc(sizeof(*a->free));
		if (!a->free) {
			free(a);
			return NULL;
		}
		a->free[0] = (struct range){ 0, capacity };
		a->nr_free = a->cap_free = 1;
	}
	return a;
}

void rowalloc__free(struct rowalloc *a)
{
	if (!a)
		return;
	free(a->free);
	free(a->held);
	free(a);
}

/* The index of the first free range that starts after @first. */
static size_t free_after(const struct rowalloc *a, __u32 first)
{
	size_t lo = 0, hi = a->nr_free;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (a->free[mid].first <= first)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Make [first, first + nr) free, merged with the free ranges it touches. */
static int insert_free(struct rowalloc *a, __u32 first, __u32 nr)
{
	size_t i = free_after(a, first);
	struct range *prev = i ? &a->free[i - 1] : NULL;
	struct range *next = i < a->nr_free ? &a->free[i] : NULL;
	bool join_prev = prev && prev->first + prev->nr == first;
	bool join_next = next && first + nr == next->first;

	if ((prev && prev->first + prev->nr > first) || (next && first + nr > next->first))
		return -EINVAL; /* overlaps free rows: given back twice */
	if (join_prev && join_next) {
		prev->nr += nr + next->nr;
		memmove(next, next + 1, (a->nr_free - i - 1) * sizeof(*next));
		a->nr_free--;
	} else if (join_prev) {
		prev->nr += nr;
	} else if (join_next) {
		next->first = first;
		next->nr += nr;
	} else {
		if (array_reserve(&a->free, &a->cap_free, a->nr_free, sizeof(*a->free), 64))
			return -ENOMEM;
		memmove(&a->free[i + 1], &a->free[i], (a->nr_free - i) * sizeof(*a->free));
		a->free[i] = (struct range){ first, nr };
		a->nr_free++;
	}
	return 0;
}

/* Free the quarantined ranges whose grace point and time have both passed. */
static void release(struct rowalloc *a, __u64 now_ns)
{
	size_t k = 0;

	for (size_t i = 0; i < a->nr_held; i++) {
		struct held *h = &a->held[i];

		if (h->epoch < a->epoch && now_ns - h->put_ns >= ROWALLOC_GRACE_NS &&
		    !insert_free(a, h->first, h->nr)) {
			a->quarantined -= h->nr;
			continue;
		}
		a->held[k++] = *h; /* not yet (or no memory to free it now: later) */
	}
	a->nr_held = k;
}

int rowalloc__get(struct rowalloc *a, __u32 nr, __u64 now_ns, __u32 *first)
{
	size_t best;

	if (!nr)
		return -EINVAL;
	if (a->nr_held)
		release(a, now_ns);
	best = a->nr_free; /* none yet (after release(), which changes the count) */
	for (size_t i = 0; i < a->nr_free; i++)
		if (a->free[i].nr >= nr && (best == a->nr_free || a->free[i].nr < a->free[best].nr))
			best = i;
	if (best == a->nr_free)
		return -ENOSPC;
	*first = a->free[best].first;
	a->free[best].first += nr;
	a->free[best].nr -= nr;
	if (!a->free[best].nr) {
		memmove(&a->free[best], &a->free[best + 1],
			(a->nr_free - best - 1) * sizeof(*a->free));
		a->nr_free--;
	}
	a->used += nr;
	return 0;
}

int rowalloc__put(struct rowalloc *a, __u32 first, __u32 nr, __u64 now_ns)
{
	size_t i;

	if (!nr || first >= a->capacity || nr > a->capacity - first || nr > a->used)
		return -EINVAL;
	i = free_after(a, first);
	if ((i && a->free[i - 1].first + a->free[i - 1].nr > first) ||
	    (i < a->nr_free && first + nr > a->free[i].first))
		return -EINVAL;
	for (i = 0; i < a->nr_held; i++)
		if (first < a->held[i].first + a->held[i].nr && a->held[i].first < first + nr)
			return -EINVAL; /* given back twice */
	if (array_reserve(&a->held, &a->cap_held, a->nr_held, sizeof(*a->held), 64))
		return -ENOMEM;
	a->held[a->nr_held++] = (struct held){ first, nr, now_ns, a->epoch };
	a->used -= nr;
	a->quarantined += nr;
	return 0;
}

void rowalloc__grace(struct rowalloc *a, __u64 now_ns)
{
	a->epoch++;
	release(a, now_ns);
}

void rowalloc__stats(const struct rowalloc *a, struct rowalloc_stats *st)
{
	memset(st, 0, sizeof(*st));
	st->capacity = a->capacity;
	st->used = a->used;
	st->quarantined = a->quarantined;
	for (size_t i = 0; i < a->nr_free; i++) {
		st->free += a->free[i].nr;
		if (a->free[i].nr > st->largest)
			st->largest = a->free[i].nr;
	}
}
