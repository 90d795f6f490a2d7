/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Held stacks: a walk in the kernel that found no table for its process's
 * code (a program that just started, whose maps user space has not read or
 * whose tables it is still building) sends a copy of the thread's stack and
 * registers (struct wprof_held). They wait here for the process's maps and
 * are walked with the same tables and rules as the kernel's walk
 * (bpf/unwind.bpf.h), once maps read at the same mm->exec_vm as the walk's
 * are there. The walk's stack id, unique to it, then stands for the frames
 * found. A copy whose maps never come (the process ended first, or its code
 * changed again) is given up: its stack keeps the frame-pointer frames the
 * kernel found, as without a copy.
 */
#ifndef WPROF_HELD_H
#define WPROF_HELD_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

#include "wprof.h"

struct held;
struct unwtab;

struct held_stats {
	__u64 walked;   /* walked from the copy, to the thread's first frame */
	__u64 unwalked; /* given up: frame pointers only */
	__u64 cut[WPROF_CUT_CNT]; /* walked from the copy, and cut (by reason) */
	__u64 dropped;  /* copies not kept, for want of memory (their stacks: unwalked) */
	/* WPROF_HELD=check: copies of the kernel's walks walked here and compared */
	__u64 checked, check_differed;
};

struct held *held__new(void); /* NULL on -ENOMEM */
void held__free(struct held *h); /* NULL ok */

/* A record from the ring buffer: kept until walked. 0 or -EINVAL (malformed). */
int held__add(struct held *h, const void *data, size_t size);

/*
 * WPROF_HELD=check: a copy of a walk the kernel made with the tables, and
 * its frames @kst, to walk and compare at the next held__walk() (when the
 * process's maps are still the ones of the walk; else not compared).
 */
void held__add_check(struct held *h, const struct wprof_held *rec, const struct wprof_stack *kst);

/*
 * Walk the copies (of process @pid only, unless 0) whose process's maps (as
 * @u last sent them) match, and give up those waiting for longer than a few
 * seconds, or all that are left when @final. Called after the maps of new
 * processes are read, and before a process's maps are read again (those of
 * a copy taken meanwhile may differ from both).
 */
void held__walk(struct held *h, const struct unwtab *u, __u32 pid, __u64 now, bool final);

/*
 * The frames stack @in (id @id) stands for: @in itself, but for its held
 * frame, unless it ends in one whose copy was walked (then those frames).
 * A copy still waiting is given up: a stack is named once, by its frames.
 */
void held__frames(struct held *h, __u64 id, struct wprof_stack *in);

/*
 * Forget the walks and the named copies whose id @used (keys (id, 0): every
 * stack id still named, see store__sweep_stacks()) did not hold at this
 * sweep nor at the one before. Copies still waiting stay.
 */
struct hmap;
void held__sweep(struct held *h, const struct hmap *used);

void held__stats(const struct held *h, struct held_stats *out);

/*
 * The walk itself (exposed for the unit tests): @rec's copy with @pm and
 * the rows, into @out, leaf first, a cut frame last if it stopped early.
 * 1 when a file's rows are not current (given back since @pm was made):
 * try again with newer maps; else 0.
 */
int held__walk_one(const struct wprof_held *rec, const struct wprof_proc_maps *pm,
		   const struct wprof_unwind_row *rows, __u32 nr_rows, struct wprof_stack *out);

#endif /* WPROF_HELD_H */
