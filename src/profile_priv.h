/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The builder of a profile (profile.h), shared by the files that make it up:
 * profile.c (the threads' accounting, the lines added from the maps, the
 * passes in order), profile_weigh.c (each thread's lines weighed) and
 * profile_names.c (each line's frames named and added to the output, and the
 * long blocks'). No other module includes this.
 */
#ifndef WPROF_PROFILE_PRIV_H
#define WPROF_PROFILE_PRIV_H

#include <stdbool.h>

#include "profile.h"
#include "stackcap.h"

/* tag, pid, tid, comm, user + kernel frames of two stacks, "--", waker comm */
#define MAX_FRAMES (6 + 4 * WPROF_MAX_STACK_DEPTH)
#define NAME_LEN SYMBOLIZER_NAME_LEN

/* what wprof writes, report and diff read back whole */
_Static_assert(MAX_FRAMES <= STACKCAP_FRAMES && MAX_FRAMES * NAME_LEN <= STACKCAP_BYTES,
	       "a line wprof writes would be cut when read back");

/*
 * The time of one output line, kept until all lines of its thread are known:
 * a thread's lines are weighed together (see weigh_group() in profile_weigh.c).
 */
struct line {
	struct wprof_wake_key k; /* k.blocked alone unless `wake` */
	bool wake;               /* --wakers: a blocked stack and its waker */
	bool unwalked;           /* a thread's off-CPU time none of whose intervals was walked */
	bool estimated;          /* it holds walked intervals that stand for others */
	__u64 count;             /* samples or intervals (estimated, rounded) */
	__u64 ns, max_ns;        /* off-CPU only; ns weighed */
	__u64 exact_ns;          /* the part of ns from intervals walked exactly */
	__u64 us, max_us;        /* the weight, set by weigh_group() */
};

struct builder {
	struct profile *p;
	struct session *s;
	struct symbolizer *sym;
	const struct record_opts *o;
	struct folded *out;
	char (*names)[NAME_LEN]; /* MAX_FRAMES names */
	size_t nr;               /* names used */
	struct wprof_stack stack;
	struct line *lines;
	size_t nr_lines, cap_lines;
	/* the last origin noted, and its index in p->origins */
	const struct sym_origin *last_origin;
	long last_idx;
	bool finished; /* profile__retire(): the threads handed over are finished */
};

/* profile.c */

/* The row of thread (@tid, @start_id) in @p's sorted threads, or NULL. */
struct thread_acct *profile_find_thread(const struct profile *p, __u32 tid, __u32 start_id);
/*
 * A line of @k (@wk: a --wakers line, @k unused), to be weighed with its
 * thread's; it marks the thread as having lines in its state. 0 or -ENOMEM.
 */
int builder_add_line(struct builder *b, const struct wprof_key *k,
		     const struct wprof_wake_key *wk, __u64 count, __u64 ns, __u64 max_ns);

/* profile_weigh.c: after every line is added, in this order; each 0 or -ENOMEM. */

/* One line for each thread and off-CPU state with time but no interval walked. */
int builder_add_unwalked(struct builder *b);
/* The steal lines of the threads with steal: merged by key, and one per on-CPU stack. */
int builder_add_steal(struct builder *b);
/* Sort the lines and set each one's weight (us, max_us), a thread and state at a time. */
int builder_weigh_lines(struct builder *b);

/* profile_names.c */

/* Name the frames of weighed line @l and add it to b->out. 0 or -errno. */
int builder_emit_line(struct builder *b, const struct line *l);
/* The [unsampled] lines of @t, which ran without a sample. 0 or -errno. */
int builder_emit_unsampled(struct builder *b, const struct thread_acct *t);
/*
 * Name the long blocks of the threads not retired yet (every one: @all),
 * and let go those of threads not selected. 0 or -ENOMEM.
 */
int builder_resolve_blocks(struct builder *b, bool all);

#endif /* WPROF_PROFILE_PRIV_H */
