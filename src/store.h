/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * What a recording took out of the kernel's maps while it ran (see
 * session__drain()): times by stacks summed per key, the frames of each
 * stack once, and the entries of threads that ended. Bounded by the distinct
 * keys and stacks, not by how often the maps were drained.
 */
#ifndef WPROF_STORE_H
#define WPROF_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

#include "wprof.h"

struct store;

/*
 * NULL on -ENOMEM. @keep_times: ended threads keep their time in their last
 * slice (struct wprof_thread's acc_ns), for the threads' times by slice.
 */
struct store *store__new(bool keep_times);
void store__free(struct store *st); /* NULL ok */

/* Add @v to what @k has (counts and maxima alike). 0 or -ENOMEM. */
int store__add_count(struct store *st, const struct wprof_key *k, const struct wprof_val *v);
int store__add_wake(struct store *st, const struct wprof_wake_key *k, const struct wprof_val *v);
/*
 * From now on, slices twice as long: every key's slices [slice, slice +
 * span), the threads' last slice (acc_slice), those added later too. Keys
 * whose slices now part in two or three have their times shared out by
 * slice, their counts and maxima in the last. 0, or -ENOMEM: the store is
 * unchanged when the keys of times by stacks could not be listed, else it
 * may have lost some (the recording must fail).
 */
int store__coarsen(struct store *st);
/* How many times store__coarsen() was: the store's slices are 2^that of the BPF side's. */
__u32 store__shift(const struct store *st);
/* Keep the frames of stack @id unless known (an id is a hash of its frames). 0 or -ENOMEM. */
int store__add_stack(struct store *st, __u64 id, const struct wprof_stack *s);
/* A thread entry the kernel no longer holds. 0 or -ENOMEM. */
int store__add_thread(struct store *st, const struct wprof_thread *t);

/* Frames of stack @id, leaf first. 0 or -ENOENT. */
int store__stack(const struct store *st, __u64 id, struct wprof_stack *out);
size_t store__nr_stacks(const struct store *st);
size_t store__nr_threads(const struct store *st);

/* Each entry once; 0, the first non-zero return of @fn. */
typedef int (*store_count_fn)(const struct wprof_key *k, const struct wprof_val *v, void *ctx);
typedef int (*store_wake_fn)(const struct wprof_wake_key *k, const struct wprof_val *v,
			     void *ctx);
typedef int (*store_thread_fn)(const struct wprof_thread *t, void *ctx);
int store__for_each_count(const struct store *st, store_count_fn fn, void *ctx);
int store__for_each_wake(const struct store *st, store_wake_fn fn, void *ctx);
int store__for_each_thread(const struct store *st, store_thread_fn fn, void *ctx);

/*
 * Call once a drain: the ended threads that were there at the previous call
 * become ripe (a drain's grace: a sample the kernel took on a thread's way
 * out, after the drain that took its entry, has reached the store by the
 * next one). How many are ripe.
 */
size_t store__ripen(struct store *st);

/*
 * Hand the ripe threads that ended (those kept compact: nothing is pending
 * at their end; see store__ripen()) to @thread_fn, each once,
 * then the keys of times by stacks of those threads to @count_fn, and take
 * them all out of the store (their wakes too). What was handed over is gone even when a callback fails: 0,
 * the first non-zero return of a callback, or -ENOMEM.
 */
int store__take_ended(struct store *st, store_thread_fn thread_fn, store_count_fn count_fn,
		      void *ctx);

/*
 * Free the stacks that nothing used at this sweep nor at the one before,
 * and that no drain brought again since the one before (store__add_stack()
 * of a stack kept starts its count over): @used holds the ids (key (id, 0))
 * of every stack still referenced, by the store's keys and by whatever else
 * may still name one (the live threads' entries, which hold an id until the
 * key naming it is written). A BPF program names a stack after storing it
 * in its map, and writes the key within its run: a stack walked since the
 * last drain comes with the next one, and its key is seen by the two sweeps
 * after that. How many stacks were freed, or -ENOMEM (then fewer were).
 */
struct hmap;
long store__sweep_stacks(struct store *st, const struct hmap *used);

#endif /* WPROF_STORE_H */
