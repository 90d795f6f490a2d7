// SPDX-License-Identifier: GPL-2.0-only
/*
 * Linear probing at a load factor of at most 1/2. Deletion shifts the
 * entries after the freed slot back (no tombstones), so that lookups stay
 * as short as if the deleted key had never been there.
 */
#include <errno.h>
#include <stdbool.h>
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

static size_t home_of(const struct hmap *h, __u64 k1, __u64 k2)
{
	return mix(k1 * 0x9e3779b97f4a7c15ULL ^ k2) & (h->cap - 1);
}

static struct hmap_slot *slot_of(const struct hmap *h, __u64 k1, __u64 k2)
{
	size_t mask = h->cap - 1, i = home_of(h, k1, k2);

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

void *hmap__del(struct hmap *h, __u64 k1, __u64 k2)
{
	struct hmap_slot *slot = h->cap ? slot_of(h, k1, k2) : NULL;
	size_t mask = h->cap - 1, i, j;
	void *val;

	if (!slot || !slot->val)
		return NULL;
	val = slot->val;
	i = slot - h->slots;
	/*
	 * Move back each later entry of the run whose home is not in (i, j]:
	 * its probe from its home would otherwise stop at the hole at i.
	 */
	for (j = (i + 1) & mask; h->slots[j].val; j = (j + 1) & mask) {
		size_t home = home_of(h, h->slots[j].k1, h->slots[j].k2);
		bool stays = i <= j ? i < home && home <= j : i < home || home <= j;

		if (stays)
			continue;
		h->slots[i] = h->slots[j];
		i = j;
	}
	h->slots[i].val = NULL;
	h->nr--;
	return val;
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
