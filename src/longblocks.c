// SPDX-License-Identifier: GPL-2.0-only
/*
 * The longest blocks in a min-heap by length: a longer one replaces the
 * shortest kept, in O(log n), and what is let go is counted.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "longblocks.h"

struct longblocks {
	struct long_block *heap; /* heap[0] the shortest */
	size_t nr, cap, max;
	__u64 dropped;
};

struct longblocks *longblocks__new(size_t max)
{
	struct longblocks *lb = calloc(1, sizeof(*lb));

	if (lb)
		lb->max = max;
	return lb;
}

static void block_free(struct long_block *b)
{
	free(b->stack);
	free(b->waker);
}

void longblocks__free(struct longblocks *lb)
{
	if (!lb)
		return;
	for (size_t i = 0; i < lb->nr; i++)
		block_free(&lb->heap[i]);
	free(lb->heap);
	free(lb);
}

static bool shorter(const struct long_block *a, const struct long_block *b)
{
	return long_block__ns(&a->b) < long_block__ns(&b->b);
}

static void swap(struct long_block *a, struct long_block *b)
{
	struct long_block t = *a;

	*a = *b;
	*b = t;
}

static void sift_up(struct longblocks *lb, size_t i)
{
	while (i && shorter(&lb->heap[i], &lb->heap[(i - 1) / 2])) {
		swap(&lb->heap[i], &lb->heap[(i - 1) / 2]);
		i = (i - 1) / 2;
	}
}

static void sift_down(struct longblocks *lb, size_t i)
{
	for (;;) {
		size_t l = 2 * i + 1, m = i;

		if (l < lb->nr && shorter(&lb->heap[l], &lb->heap[m]))
			m = l;
		if (l + 1 < lb->nr && shorter(&lb->heap[l + 1], &lb->heap[m]))
			m = l + 1;
		if (m == i)
			return;
		swap(&lb->heap[i], &lb->heap[m]);
		i = m;
	}
}

int longblocks__add(struct longblocks *lb, const struct wprof_long_block *b, bool open)
{
	struct long_block n = { .b = *b, .open = open };

	if (!lb->max) {
		lb->dropped++;
		return 0;
	}
	if (lb->nr == lb->max) {
		lb->dropped++;
		if (!shorter(&lb->heap[0], &n))
			return 0;
		block_free(&lb->heap[0]);
		lb->heap[0] = n;
		sift_down(lb, 0);
		return 0;
	}
	if (lb->nr == lb->cap) {
		size_t cap = lb->cap ? 2 * lb->cap : 64;
		struct long_block *h;

		if (cap > lb->max)
			cap = lb->max;
		h = realloc(lb->heap, cap * sizeof(*h));
		if (!h) {
			lb->dropped++;
			return -ENOMEM;
		}
		lb->heap = h;
		lb->cap = cap;
	}
	lb->heap[lb->nr] = n;
	sift_up(lb, lb->nr++);
	return 0;
}

void longblocks__sweep(struct longblocks *lb)
{
	size_t n = 0;

	for (size_t i = 0; i < lb->nr; i++) {
		if (lb->heap[i].gone)
			block_free(&lb->heap[i]);
		else
			lb->heap[n++] = lb->heap[i];
	}
	lb->nr = n;
	for (size_t i = n / 2; i-- > 0;)
		sift_down(lb, i);
}

__u64 longblocks__dropped(const struct longblocks *lb)
{
	return lb ? lb->dropped : 0;
}

size_t longblocks__nr(const struct longblocks *lb)
{
	return lb ? lb->nr : 0;
}

struct long_block *longblocks__at(struct longblocks *lb, size_t i)
{
	return lb && i < lb->nr ? &lb->heap[i] : NULL;
}
