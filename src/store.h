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

struct store *store__new(void); /* NULL on -ENOMEM */
void store__free(struct store *st); /* NULL ok */

/* Add @v to what @k has (counts and maxima alike). 0 or -ENOMEM. */
int store__add_count(struct store *st, const struct wprof_key *k, const struct wprof_val *v);
int store__add_wake(struct store *st, const struct wprof_wake_key *k, const struct wprof_val *v);
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

#endif /* WPROF_STORE_H */
