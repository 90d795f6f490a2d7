// SPDX-License-Identifier: GPL-2.0-only
/*
 * Linear probing at a load factor of at most 1/2, no deletion: the
 * symbolizer's caches only grow until it is freed.
 */
#include <errno.h>
#include <stdlib.h>

#include "hmap.h"

/* The finalizer of MurmurHash3, written out: spreads sequential pids and addresses. */
static __u64 mix(__u64 h)
{
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdULL;
	h ^= h >> 33;
	h *= 0xc4ceb9fe1a85ec53ULL;
	return h ^ (h >> 33);
}

static struct hmap_slot *slot_of(const struct hmap *h, __u64 k1, __u64 k2)
{
	size_t mask = h->cap - 1, i = mix(k1 * 0x9e3779b97f4a7c15ULL ^ k2) & mask;

	while (h->slots[i].val && (h->slots[i].k1 != k1 || h->slots[i].k2 != k2))
		i = (i + 1) & mask;
	return &h->slots[i];
}

void *hmap__get(const struct hmap *h, __u64 k1, __u64 k2)
{
	return h->cap ? slot_of(h, k1, k2)->val : NULL;
}

int hmap__put(struct hmap *h, __u64 k1, __u64 k2, void *val, void **old)
{
	struct hmap_slot *slot;

	if ((h->nr + 1) * 2 > h->cap) {
		struct hmap bigger = { .cap = h->cap ? h->cap * 2 : 64 };
		size_t i;

		bigger.slots = calloc(bigger.cap, sizeof(*bigger.slots));
		if (!bigger.slots)
			return -ENOMEM;
		for (i = 0; i < h->cap; i++)
			if (h->slots[i].val)
				*slot_of(&bigger, h->slots[i].k1, h->slots[i].k2) = h->slots[i];
		bigger.nr = h->nr;
		free(h->slots);
		*h = bigger;
	}
	slot = slot_of(h, k1, k2);
	*old = slot->val;
	if (!slot->val)
		h->nr++;
	slot->k1 = k1;
	slot->k2 = k2;
	slot->val = val;
	return 0;
}

void hmap__clear(struct hmap *h)
{
	free(h->slots);
	h->slots = NULL;
	h->cap = 0;
	h->nr = 0;
}

__u64 hmap__hash_bytes(const void *p, size_t len)
{
	const unsigned char *b = p;
	__u64 h = 0xcbf29ce484222325ULL; /* FNV-1a, then mixed for the low bits */

	while (len--)
		h = (h ^ *b++) * 0x100000001b3ULL;
	return mix(h);
}
