/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Everything one recording measured, in plain memory: copied out of the
 * detached BPF session and the symbolizer once (record.c's capture()), or
 * read back from a .wprof file (recfile.h). Every writer (folded, json,
 * threads, summary, svg, pprof) reads only this, so that each works the
 * same from a live recording and from a saved one, and each can be tested
 * without root.
 */
#ifndef WPROF_RECORDING_H
#define WPROF_RECORDING_H

#include <stdbool.h>
#include <stdio.h>
#include <linux/types.h>

#include "cgcpu.h"
#include "folded.h"
#include "group.h"
#include "opts.h"
#include "profile.h"
#include "raninst.h"
#include "recinfo.h"
#include "recline.h" /* struct rec_splitter */
#include "session.h" /* struct session_drain_stats */
#include "symbolize.h" /* struct symbolizer_stats */

/* The longest command line kept of a process: enough to tell processes apart. */
#define REC_CMDLINE_MAX 256

/* A process's command line, read while it lived (/proc/PID/cmdline, NULs as spaces). */
struct rec_proc {
	__u32 pid;
	char *cmdline;
};

/* A long off-CPU interval (--long-block), kept whole with its instant. */
struct rec_block {
	__u32 pid, tid;
	char comm[WPROF_COMM_LEN]; /* the thread's name */
	__u32 state;               /* of the blocked part (enum wprof_state) */
	bool open;                 /* still going at the window's end */
	__u64 start_ns;            /* when it began, ns since the epoch; the window's start at most */
	__u64 offset_ns;           /* ... ns after the window's start */
	__u64 blocked_ns, runq_ns; /* blocked, then waiting for a CPU */
	char *stack;               /* frames, root first, joined by ';' */
	char *waker;               /* --wakers: the waker's frames, leaf first, and name; or NULL */
};

struct recording {
	struct rec_info info;
	char *cmdline;        /* wprof's own command line, arguments joined by spaces */
	/* how the lines were built */
	bool tag_leaf;        /* the tag is the last frame (--tag-leaf) */
	bool ids;             /* lines carry PID;TID after the tag (opts__line_ids()) */
	bool no_states;
	bool wakers;
	bool inlines;
	struct profile prof;  /* per-thread accounting, histograms, the profile's counters */
	struct folded *lines; /* the stacks: symbolized frames, weight us, count, max */
	__u64 stats[WPROF_STAT_CNT]; /* the BPF side's counters (enum wprof_stat) */
	struct session_drain_stats drain;
	struct symbolizer_stats sym;
	char *notes;          /* the summary's closing lines (JIT, debug hints), or NULL */
	struct rec_proc *procs; /* the processes of the threads whose command line is known */
	size_t nr_procs;
	/*
	 * --slice: the lines' pieces (folded__for_each_pieces()) are in slices
	 * this long from the window's start; 0: the recording has none
	 */
	__u64 slice_ns;
	__u64 long_block_ns;      /* --long-block; 0: none were kept */
	struct rec_block *blocks; /* the longest long blocks, by start */
	size_t nr_blocks;
	/* targets (-p, -- CMD) in a cgroup with a CPU limit, its cpu.stat at the window's ends */
	struct cg_limit *cgroups;
	size_t nr_cgroups;
	/* who ran instead (raninst.h), sorted by raninst__sort(); ran_recorded: measured */
	struct ran_entry *ran;
	size_t nr_ran;
	bool ran_recorded;
};

/* How many slices the window has: the last may be shorter. 0 without slices. */
static inline __u64 recording__nr_slices(const struct recording *r)
{
	return r->slice_ns ? (r->prof.window_ns + r->slice_ns - 1) / r->slice_ns : 0;
}

/* The whole length of @b. */
static inline __u64 rec_block__ns(const struct rec_block *b)
{
	return b->blocked_ns + b->runq_ns;
}

/* The command line of process @pid, or NULL. */
const char *recording__cmdline(const struct recording *r, __u32 pid);

/* Members may be NULL: an empty recording (memset 0) is freed fine. */
void recording__free(struct recording *r);

/* Post-hoc selection: what `wprof report` can still choose from a recording. */
struct rec_filter {
	const __u32 *pids, *tids; /* NULL: any */
	size_t nr_pids, nr_tids;
	const char *thread_glob;  /* --thread-name */
	const char *comm_glob;    /* --comm (the process's name) */
	bool no_idle_threads;
};

/*
 * Leave out of @r the threads @f does not select, and their lines, as the
 * same options given to `wprof record` would have (profile.c's
 * profile__selects()). The counters of frames, stacks and losses stay those
 * of the whole recording. 0, -EINVAL when the lines have no ids, or -ENOMEM.
 */
int recording__filter(struct recording *r, const struct rec_filter *f);

/*
 * Move each line's tag frame from the root to the leaf, as `wprof record
 * --tag-leaf` builds them (nothing when it is there already). 0 or -errno.
 */
int recording__tag_leaf(struct recording *r);

/*
 * The lines grouped as @g asks (group.h; recgroup.c): each thread's name as
 * its pool's or its process's, or none, the lines of threads that ran one
 * code path then one line (without ids: r->ids becomes false, and what
 * needs them, recording__filter(), cannot follow). 0 or -errno.
 */
int recording__group(struct recording *r, enum group_by g);

/*
 * A rewrite of every line of a recording (recording__tag_leaf(),
 * recording__group()): the callback's context begins with one of these,
 * into which it adds the new lines (rec_splitter__add_pieces()).
 */
struct line_rewrite {
	struct folded *out;
	struct rec_splitter sp;
	char *buf; /* line_rewrite__buf() */
	size_t cap;
};

/* @rw's buffer, @need bytes at least: NULL without memory. */
char *line_rewrite__buf(struct line_rewrite *rw, size_t need);

/*
 * r->lines, each line through @fn (@rw its context's first member), into
 * new lines that replace them. 0, or @fn's error (r->lines unchanged).
 */
int recording__rewrite_lines(struct recording *r, folded_pieces_fn fn, struct line_rewrite *rw);

/*
 * Folded text (wprof's, hand-edited, or another tool's) read from @path
 * ("-": stdin) as a recording of lines alone, without ids, threads or a
 * window (recfold.c): what `wprof report` can draw. One error line naming
 * the file (and line); 0 or -errno.
 */
int recording__from_folded(const char *path, struct recording *r);

/* The lines without their PID;TID frames, as folded text wants them. 0 or -errno. */
int recording__write_folded(const struct recording *r, FILE *f);

#endif /* WPROF_RECORDING_H */
