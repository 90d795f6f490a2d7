/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The long blocks of a recording (--long-block): off-CPU intervals kept one
 * by one, with their instant and stacks, as the BPF side sends them. At
 * most a number of them, the longest; the rest are counted.
 */
#ifndef WPROF_LONGBLOCKS_H
#define WPROF_LONGBLOCKS_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

#include "wprof.h"

/* How many long blocks a recording keeps: the longest (README, man page). */
#define LONG_BLOCKS_MAX 1000
#define LONG_BLOCKS_MAX_WORDS "1000"

struct long_block {
	struct wprof_long_block b;
	bool open;     /* still going at the window's end */
	bool resolved; /* stack (and waker) made: by its thread's lines (profile_names.c) */
	char comm[WPROF_COMM_LEN]; /* its thread's name, once resolved */
	bool gone;     /* to let go at the next longblocks__sweep() (its thread left out) */
	char *stack;   /* frames root first, joined by ';'; NULL: none */
	char *waker;   /* --wakers: the waker's frames, leaf first, then its name; NULL: none */
};

struct longblocks;

/* NULL (errno set) on failure. */
struct longblocks *longblocks__new(size_t max);
void longblocks__free(struct longblocks *lb); /* NULL ok */

/* The whole length of @b: blocked, then waiting for a CPU. */
static inline __u64 long_block__ns(const struct wprof_long_block *b)
{
	return b->ns[0] + b->ns[1];
}

/*
 * Keep @b if it is among the longest so far; the one it pushes out, or @b,
 * is counted as dropped. 0 or -ENOMEM.
 */
int longblocks__add(struct longblocks *lb, const struct wprof_long_block *b, bool open);
/* Let go of the blocks marked gone (not counted: the caller's choice); the others may move. */
void longblocks__sweep(struct longblocks *lb);
__u64 longblocks__dropped(const struct longblocks *lb);
size_t longblocks__nr(const struct longblocks *lb);
struct long_block *longblocks__at(struct longblocks *lb, size_t i);

#endif /* WPROF_LONGBLOCKS_H */
