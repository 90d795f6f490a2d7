/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * A map from byte strings (any bytes, explicit length) to numbers, keys
 * copied in: the string, function and location tables of the pprof writer,
 * and the children of a flame graph's frames (key: parent id + name).
 */
#ifndef WPROF_STRMAP_H
#define WPROF_STRMAP_H

#include <stddef.h>
#include <linux/types.h>

struct strmap;

/* NULL and errno set on failure. */
struct strmap *strmap__new(void);
/* NULL is ok. */
void strmap__free(struct strmap *m);
/*
 * The value of @key, inserting @val when it is not there yet: 1 when it was
 * inserted, 0 when it was there (*@out is its value either way), -ENOMEM.
 */
int strmap__intern(struct strmap *m, const void *key, size_t len, __u64 val, __u64 *out);
/* 0 and *@out, or -ENOENT. */
int strmap__get(const struct strmap *m, const void *key, size_t len, __u64 *out);
size_t strmap__nr(const struct strmap *m);

#endif /* WPROF_STRMAP_H */
