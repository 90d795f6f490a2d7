/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * `wprof diff BEFORE AFTER`: what changed between two recordings, from their
 * folded text (wprof's own, tag frames at the root or the leaf, or any other
 * folded file). The stacks of threads are grouped first (group.h; by
 * default not at all: one stack per code path). What is compared follows
 * from what both sides know (--measure): two saved recordings of `-- CMD`
 * run to its end did a fixed amount of work, so their times compare as
 * they are; two saved recordings of windows compare time per second of
 * window; anything else (folded text says neither its window nor its
 * command) compares each stack's share of its file's total. Needs neither
 * root nor BPF.
 */
#ifndef WPROF_DIFF_H
#define WPROF_DIFF_H

#include <stdbool.h>
#include <stdio.h>
#include <linux/types.h>

#include "group.h"
#include "recline.h"

struct foldread;
struct strmap;

enum { DIFF_BEFORE, DIFF_AFTER };

/* What a stack's weight is compared as (--measure). */
enum diff_measure {
	DIFF_AUTO,  /* the first of the others that both sides allow */
	DIFF_TIME,  /* us as they are: two runs of a fixed amount of work */
	DIFF_RATE,  /* us per second of each side's window */
	DIFF_SHARE, /* points of each side's total */
};

/* What a side says of itself: a saved recording does, folded text does not. */
struct diff_side {
	bool known;      /* a saved recording: its window is known */
	bool cmd;        /* of `-- CMD` without -d: the command's whole run */
	__u64 window_ns; /* with cmd, the command's elapsed time */
};

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
	struct diff_side side[2];
	enum group_by group;
	enum diff_measure measure; /* after diff__resolve(): time, rate or share */
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
/*
 * d->measure from what was asked (@m) and what both sides know. 0, or
 * -EINVAL after one error line when the sides cannot be compared so.
 */
int diff__resolve(struct diff *d, enum diff_measure m);
/* @w of side @side in the measure's units: us, us per s of window, or % of the total. */
double diff__value(const struct diff *d, int side, __u64 w);
/* The whole of BEFORE in the same units (100 for shares). */
double diff__whole(const struct diff *d);
/* How much @s grew, in the measure's units; negative: it shrank. */
double diff__change(const struct diff *d, const struct diff_stack *s);
/* BEFORE's weight in AFTER's units: as it is (time), scaled to AFTER's window or total. */
__u64 diff__before(const struct diff *d, const struct diff_stack *s);
/* "time", "time per second of window", "share". */
const char *diff__measure_name(enum diff_measure m);

/*
 * Whether a saved recording (its target, the program it ran, wprof's own
 * command line) ran `-- CMD` to its end, not for a -d window.
 */
bool diff__is_cmd(const char *target, const char *program, const char *cmdline);

/* The kinds of time the gate judges (--states), one bit per enum rec_kind. */
#define DIFF_STATES_DEFAULT                                                                   \
	((1u << REC_ON_CPU) | (1u << REC_SLEEP) | (1u << REC_DISK) | (1u << REC_OFF) |         \
	 (1u << REC_OTHER))
/* --states LIST: 0, or -EINVAL after one error line. */
int diff__parse_states(const char *s, unsigned *mask);

/*
 * The gate (diffgate.c): name on stderr every code path (the stacks under
 * each prefix of frames, in all threads of the group) and every function
 * (its inclusive time, in all its callers) of the kinds in @states whose
 * time grew by more than @pct percent of BEFORE's time of those kinds (in
 * points of share for DIFF_SHARE), less what a busier AFTER explains (see
 * diffgate.c). How many grew so, or -ENOMEM.
 */
long diff__gate(const struct diff *d, double pct, unsigned states);

/* `wprof diff`: returns the exit code (0, 1 when a stack grew too much, 2 on a usage error). */
int cmd_diff(int argc, char **argv);

#endif /* WPROF_DIFF_H */
