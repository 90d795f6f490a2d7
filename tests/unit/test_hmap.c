// SPDX-License-Identifier: GPL-2.0-only
/*
 * The hash table under insertions and deletions in random order, checked
 * against a plain array of what it should hold: every key present is found
 * with its value, every deleted or never inserted one is not, and the count
 * follows. Keys are drawn from a small range, so that runs of colliding
 * slots form and deletions must shift entries across them (and across the
 * table's end).
 */
#include <stdlib.h>

#include "hmap.h"
#include "unit.h"

#define KEYS 512

static __u64 rnd(__u64 *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static void test_random(void)
{
	static int vals[KEYS];
	bool in[KEYS] = {};
	struct hmap h = {};
	__u64 seed = 0x2545f4914f6cdd1dULL;
	size_t nr = 0, wrong = 0, ops = 200000;

	for (size_t op = 0; op < ops; op++) {
		size_t k = rnd(&seed) % KEYS;
		void *old = NULL;

		if (rnd(&seed) % 3) {
			if (hmap__put(&h, k, k >> 3, &vals[k], &old))
				break;
			wrong += old != (in[k] ? &vals[k] : NULL);
			nr += !in[k];
			in[k] = true;
		} else {
			wrong += hmap__del(&h, k, k >> 3) != (in[k] ? &vals[k] : NULL);
			nr -= in[k];
			in[k] = false;
		}
		if (op % 1000)
			continue;
		for (size_t i = 0; i < KEYS; i++)
			wrong += hmap__get(&h, i, i >> 3) != (in[i] ? &vals[i] : NULL);
		wrong += h.nr != nr;
	}
	CHECK_EQ_U64(wrong, 0, "%zu puts and deletes: every lookup as the array says", ops);
	for (size_t i = 0; i < KEYS; i++)
		if (in[i])
			hmap__del(&h, i, i >> 3);
	CHECK_EQ_U64(h.nr, 0, "empty after deleting what is left");
	for (size_t i = 0; i < h.cap; i++)
		wrong += h.slots[i].val != NULL;
	CHECK_EQ_U64(wrong, 0, "no slot holds anything");
	CHECK(hmap__del(&h, 1, 0) == NULL, "deleting a key not there gives NULL");
	hmap__clear(&h);
	CHECK(hmap__del(&h, 1, 0) == NULL, "deleting from an empty table gives NULL");
}

int main(void)
{
	test_random();
	return unit_done();
}
