/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * A hash table from a pair of 64-bit keys to a non-NULL pointer, with open
 * addressing: the caches of the symbolizer (files, processes, names), the
 * store of what the maps were drained of.
 * Values are owned by the caller; walk h->slots[0..cap) to free them.
 */
#ifndef WPROF_HMAP_H
#define WPROF_HMAP_H

#include <stddef.h>
#include <linux/types.h>

struct hmap_slot {
	__u64 k1, k2;
	void *val; /* NULL: empty */
};

struct hmap {
	struct hmap_slot *slots;
	size_t cap; /* 0 or a power of 2 */
	size_t nr;
};

/* The value of (@k1, @k2), or NULL. */
void *hmap__get(const struct hmap *h, __u64 k1, __u64 k2);
/* Insert or replace; the replaced value (or NULL) goes to *@old. 0 or -ENOMEM. */
int hmap__put(struct hmap *h, __u64 k1, __u64 k2, void *val, void **old);
/* Remove (@k1, @k2): its value, or NULL when it was not there. Never fails. */
void *hmap__del(struct hmap *h, __u64 k1, __u64 k2);
/* Frees the table, not the values; @h is empty afterwards. */
void hmap__clear(struct hmap *h);
/* A well-mixed 64-bit hash of a byte string. */
__u64 hmap__hash_bytes(const void *p, size_t len);

#endif /* WPROF_HMAP_H */
