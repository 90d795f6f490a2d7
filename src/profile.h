/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * A recording's per-thread accounting and lines, built from the drained maps
 * (profile.c, with profile_weigh.c and profile_names.c; what it holds is read
 * in profile_data.c).
 */
#ifndef WPROF_PROFILE_H
#define WPROF_PROFILE_H

#include <stdio.h>

#include "folded.h"
#include "hmap.h"
#include "opts.h"
#include "origins.h"
#include "session.h"
#include "symbolize.h"
#include "threadtime.h"
#include "unwtab.h"

/* Per-thread accounting over the window, exact from the scheduler events. */
struct thread_acct {
	__u32 pid, tid;
	__u32 start_id; /* with tid, which thread: see struct wprof_key */
	char comm[WPROF_COMM_LEN];
	char pcomm[WPROF_COMM_LEN];     /* its process's name */
	__u64 wall_ns;                  /* on + off: the time it existed in the window */
	__u64 on_ns;                    /* exact on-CPU time */
	__u64 off_ns[WPROF_STATE_CNT];  /* by state; [WPROF_ON_CPU] unused */
	/*
	 * The same in us, each rounded to the nearest, and wall_us their sum:
	 * what the outputs print, and what the stacks of the thread add up to.
	 */
	__u64 wall_us, on_us, off_us[WPROF_STATE_CNT];
	__u64 samples;
	__u64 blocks;                   /* intervals in sleep or disk */
	__u64 max_block_ns;
	/* off-CPU time that passed --min-block/--max-block: what its lines add up to */
	__u64 kept_ns[WPROF_STATE_CNT];
	bool has_lines[WPROF_STATE_CNT];
	bool lost_lines;                /* a full map dropped some of its walked intervals */
	bool idle;                      /* never on a CPU: what --no-idle-threads leaves out */
	bool selected;                  /* passes --thread-name, --comm, --no-idle-threads */
	bool retired;                   /* its lines are made (profile__retire(), __build()) */
	bool dropped;                   /* profile__compact()'s mark, false outside it */
};

/* Log2 histogram of one process's block durations: slot k is [2^k, 2^(k+1)) us. */
struct proc_hist {
	__u32 pid;
	__u64 slots[WPROF_HIST_SLOTS];
};

struct profile {
	struct thread_acct *threads; /* sorted by tid */
	size_t nr_threads;
	struct proc_hist *hists;
	size_t nr_hists;
	__u64 window_ns;
	__u64 period_ns;
	__u64 frames_total, frames_unnamed;
	__u64 stacks_missing; /* stack ids not found in the stack map */
	__u64 threads_left_out;
	/* threads with on-CPU time but no sample: shown as [unsampled] lines */
	__u64 unsampled_threads, unsampled_us;
	/* threads with samples but no switch-timed on-CPU time: weighed by the period */
	__u64 untimed_threads;
	/* off-CPU lines weighed from walked intervals standing for unwalked ones */
	__u64 estimated_lines;
	/* threads and states whose off-CPU time had no interval walked: one line each */
	__u64 unwalked_groups, unwalked_us;
	/* intervals open at the window's end whose stacks were not walked */
	__u64 open_unwalked;
	/* walked intervals whose user stack was still to be walked when recording stopped */
	__u64 pending_lost;
	/* keys of threads that came after their lines were made while recording */
	__u64 late_keys;
	/* stacks of a file beyond stackcap.h's limits, cut when it was read */
	__u64 stacks_cut_on_read;
	/* stacks merged into the flame graph's "[truncated]" frame (flame.h; not saved) */
	__u64 flame_stacks_merged;
	/*
	 * Ended processes whose rows were let go while recording
	 * (profile__compact()), their lines made: counted, so that the
	 * summary's totals still add them up.
	 */
	__u64 dropped_procs;    /* with a selected thread: shown processes */
	__u64 dropped_threads;  /* selected */
	__u64 dropped_left_out; /* not selected (also in threads_left_out after the build) */
	__u64 dropped_on_ns;    /* on-CPU time of every one of them */
	/* rows of a reused tid (see reused_tids() in report.c) no longer side by side */
	__u64 dropped_reused;
	unsigned char *orphan_tids; /* a bit by tid: rows of it let go, none left or made since */
	/* the threads (tid, start_id) let go by the last two profile__compact() */
	struct hmap dropped_ids, dropped_ids_prev;
	struct unwtab_stats unw; /* filled by the caller, for the reports */
	struct origins origins;  /* the file of each user and kernel frame, for pprof */
	struct threadtimes times; /* --slice: each thread's exact time by slice */
};

/* An empty profile for a recording with @o: before profile__retire() and profile__build(). */
void profile__init(struct profile *p, const struct record_opts *o);

/*
 * While recording, after every drain: make the lines of the threads that
 * ended (session__retire(), once @min_threads are ripe) into @out, as
 * profile__build() would have at the end, and keep their rows, marked
 * retired; @busy gets the pids still named. 1 when done, 0 when not yet, or
 * -errno.
 */
struct hmap;
int profile__retire(struct profile *p, struct session *s, struct symbolizer *sym,
		    const struct record_opts *o, size_t min_threads, struct folded *out,
		    struct hmap *busy);

/*
 * The summary's busiest processes: profile__compact() keeps the rows of at
 * least that many ended processes, the busiest.
 */
#define PROFILE_TOP_PROCS 10

/*
 * While recording, after profile__retire(): let go the rows of threads whose
 * process has ended (no pid in @busy, as profile__retire() fills it), but
 * those of the PROFILE_TOP_PROCS busiest such processes and of the targets
 * named by -p/-t, so that rows follow what is alive. Only when no output
 * lists every thread (opts__thread_rows()). The pids let go are added to
 * @gone (may be NULL). The number of rows let go, or -ENOMEM.
 */
long profile__compact(struct profile *p, const struct record_opts *o, const struct hmap *busy,
		      struct hmap *gone);
/* A thread @tid of @p (its threads are sorted by tid), or NULL. */
const struct thread_acct *profile__thread(const struct profile *p, __u32 tid);
/* Rows with the tid of an earlier thread (pids wrapped around), rows let go included. */
size_t profile__reused_tids(const struct profile *p);
/* Threads recorded and selected, whether their rows were kept or not. */
size_t profile__threads_shown(const struct profile *p);
/*
 * Whether the thread (@tid, @start_id) had its row let go by one of the last
 * two profile__compact(): a key of it is late (it cannot come later).
 */
bool profile__dropped(const struct profile *p, __u32 tid, __u32 start_id);
/* A row is made for @tid: one of a tid whose rows were all let go is a reuse. */
void profile__note_tid(struct profile *p, __u32 tid);

/*
 * Read the detached session's maps, close the intervals still open at the
 * window's end, symbolize, and add every selected stack to `out`. With
 * an output that needs ids (opts__line_ids(): json, svg, pprof) each stack's
 * frames start with TAG, PID, TID, COMM.
 *
 * Weights are us. Per thread, the on-CPU lines sum to exactly its on_us,
 * split in proportion to their samples; per thread and off-CPU state, the
 * lines sum to exactly their time rounded to us (the thread's off_us[state]
 * unless --min-block/--max-block left intervals out), split in proportion to
 * the walked intervals' weighed time (see --exact-above). A thread that ran
 * but was never sampled gets one on-CPU line with the frame "[unsampled]";
 * off-CPU time of which no interval was walked, one "[not walked]" line.
 */
int profile__build(struct profile *p, struct session *s, struct symbolizer *sym,
		   const struct record_opts *o, struct folded *out);
/* (profile__build() continues what profile__init() and profile__retire() began.) */
/*
 * Per process sums of the selected threads, by wall time; caller frees. The
 * us fields are sums of the threads' us, so a process adds up as they do.
 */
size_t profile__processes(const struct profile *p, struct thread_acct **out);
/*
 * Whether --thread-name @thread_glob, --comm @comm_glob (the process's name)
 * and --no-idle-threads keep @t: what t->selected says after profile__build().
 */
bool profile__selects(const struct thread_acct *t, const char *thread_glob, const char *comm_glob,
		      bool no_idle_threads);
/*
 * Asleep at least 99.9% of its time (a selected thread): a pool thread
 * waiting for work, drawn apart in the flame graph and not busy in the
 * summary.
 */
bool profile__asleep(const struct thread_acct *t);
/*
 * The time @t was busy: on-CPU, stolen by the hypervisor, waiting for a CPU,
 * or in an uninterruptible wait (disk, some locks). Interruptible sleep is left out: from the
 * scheduler it is one state, whether the thread waits for a reply or for
 * work (a pool thread, a shell waiting for its child).
 */
__u64 profile__busy_ns(const struct thread_acct *t);
/* Whether @t ran (on-CPU or stolen) without a sample: one [unsampled] line for each. */
bool profile__ran_unsampled(const struct thread_acct *t);
const struct proc_hist *profile__hist(const struct profile *p, __u32 pid);
void profile__free(struct profile *p);

#endif /* WPROF_PROFILE_H */
