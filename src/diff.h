/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * `wprof diff BEFORE AFTER`: what changed between two recordings, from their
 * folded text (wprof's own, tag frames at the root or the leaf, or any other
 * folded file). Each stack's weight is compared as a share of its file's
 * total, so that recordings of different lengths compare; --absolute
 * compares the weights as they are. Needs neither root nor BPF.
 */
#ifndef WPROF_DIFF_H
#define WPROF_DIFF_H

#include <stdbool.h>
#include <stdio.h>
#include <linux/types.h>

struct foldread;
struct strmap;

enum { DIFF_BEFORE, DIFF_AFTER };

struct diff_stack {
	char *stack; /* frames joined by ';' */
	__u64 w[2];  /* weight in BEFORE, in AFTER */
};

struct diff {
	struct diff_stack *stacks;
	size_t nr, cap;
	struct strmap *index; /* stack -> its index in stacks[] */
	__u64 total[2];
	size_t lines[2];
	__u64 cut[2]; /* stacks cut to the limits when read (stackcap.h) */
	bool absolute; /* compare weights, not shares */
};

/* 0 or -ENOMEM. */
int diff__init(struct diff *d);
void diff__free(struct diff *d);
/*
 * Read one side from @fr (named @name in messages). Lines with the same
 * stack add up; a stack beyond the limits is cut (foldread.h) and counted
 * in d->cut. On a line that is not folded text, or a file without stacks,
 * prints one error line naming the file (and line) and returns -EINVAL;
 * -errno when reading failed, -ENOMEM.
 */
int diff__read(struct diff *d, int side, struct foldread *fr, const char *name);
/* How much @s grew, in points of share (in us with --absolute); negative: it shrank. */
double diff__change(const struct diff *d, const struct diff_stack *s);
/* BEFORE's weight in AFTER's units: scaled to AFTER's total, unless --absolute. */
__u64 diff__before(const struct diff *d, const struct diff_stack *s);

/* `wprof diff`: returns the exit code (0, 1 when a stack grew too much, 2 on a usage error). */
int cmd_diff(int argc, char **argv);

#endif /* WPROF_DIFF_H */
