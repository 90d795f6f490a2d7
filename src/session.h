/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The BPF side of one recording: load, attach, the drains of its maps while
 * it records (a map of counts is swapped for an empty one before it is
 * read), detach, and the last drain once nothing writes them.
 */
#ifndef WPROF_SESSION_H
#define WPROF_SESSION_H

#include <stdbool.h>
#include <stdio.h>

#include "opts.h"
#include "wprof.h"

struct session;

/*
 * Prints one error line saying what failed and what to do; returns -errno.
 * @unwind_rows: the unwind rows known so far (see unwtab.h), to size the
 * kernel's row array.
 */
int session__open(const struct record_opts *opts, size_t unwind_rows, struct session **out);
/* The kernel's unwind maps, to bind an unwtab to. -ENOENT with --no-cfi. */
int session__unwind_maps(struct session *s, struct wprof_unwind_row **rows, __u32 *max_rows,
			 int *procs_fd);
void session__free(struct session *s); /* NULL ok */

int session__add_target(struct session *s, __u32 id);
/*
 * New target processes (exec, fork) are reported to @fn from
 * session__consume_events(); so are, to @maps_fn (it frees them), the maps
 * read of a process as its stacks were held (heldring.h): a snapshot that
 * can come after the process is gone.
 */
typedef int (*session_event_fn)(const struct wprof_event *e, void *ctx);
struct proc_maps;
typedef void (*session_maps_fn)(void *ctx, __u32 pid, __u64 start_ticks, struct proc_maps *maps);
int session__set_event_fn(struct session *s, session_event_fn fn, session_maps_fn maps_fn,
			  void *ctx);
int session__event_fd(const struct session *s); /* readable when events wait */
/* Readable when held stacks or their maps wait (-1: none are held). */
int session__held_fd(const struct session *s);
int session__consume_events(struct session *s);
/* Take what the long blocks' ring holds (also done by session__consume_events()). */
void session__consume_blocks(struct session *s);
/* The long blocks kept so far (longblocks.h), and the first failure to keep one. */
struct longblocks *session__long_blocks(struct session *s);
int session__long_blocks_err(const struct session *s);
/* The held stacks and maps the reader queued (heldring.h), taken now: no events. */
void session__take_held(struct session *s);
/* Ignore `tgid` until it execs (the `-- CMD` child waiting to exec). */
void session__gate_until_exec(struct session *s, __u32 tgid);
int session__start(struct session *s);
void session__stop(struct session *s);
__u64 session__window_start_ns(const struct session *s);
__u64 session__window_end_ns(const struct session *s);
/*
 * The slices of what was drained (--slice): slice_ns, or a multiple since
 * session__coarsen() made them longer. 0: none.
 */
__u64 session__slice_ns(const struct session *s);
/* store__coarsen(): 0, or -ENOMEM and the recording must fail. */
int session__coarsen(struct session *s);
const char *session__attach_kind(const struct session *s); /* "tp_btf" or "raw_tp" */
/* Whether run-queue waits are timed from wakeup events, not the scheduler's counts. */
bool session__runq_wakeup(const struct session *s);
/* Whether each run's steal is kept out of its on-CPU time (the kernel accounts it). */
bool session__steal_time(const struct session *s);
/*
 * Where switches are timed, in a sentence in @buf, when not where wprof's
 * sched_switch program runs by choice (WPROF_SWITCH_TIME, other programs on
 * sched_switch); else NULL.
 */
const char *session__switch_timing(const struct session *s, char *buf, size_t size);

/*
 * Take what the maps hold into user space (see session.c): done every second
 * or so while recording, sooner when a map was getting full, and once more
 * by session__stop(), after which the maps are not read again. How full the
 * fullest map was, in percent, or -errno.
 */
int session__drain(struct session *s, bool final);

struct session_drain_stats {
	__u64 drains;       /* while recording */
	__u64 threads;      /* entries of ended threads taken while recording */
	__u64 stacks;       /* stacks taken from the kernel (the same one may come back) */
	__u64 stacks_kept;  /* distinct stacks kept in user space */
	int max_fill_pct;   /* the fullest a map was when drained */
	__u64 retired;      /* ended threads handed over by session__retire() */
	__u64 stacks_freed; /* stacks freed once nothing could name them */
};
void session__drain_stats(const struct session *s, struct session_drain_stats *out);

/* What was recorded, once session__stop() has drained the maps. */
typedef int (*session_count_fn)(const struct wprof_key *k, const struct wprof_val *v, void *ctx);
typedef int (*session_thread_fn)(const struct wprof_thread *t, void *ctx);
int session__for_each_count(struct session *s, session_count_fn fn, void *ctx);
int session__for_each_thread(struct session *s, session_thread_fn fn, void *ctx);
typedef int (*session_wake_fn)(const struct wprof_wake_key *k, const struct wprof_val *v,
			       void *ctx);
int session__for_each_wake(struct session *s, session_wake_fn fn, void *ctx);
/*
 * Who ran instead (bpf/ran.bpf.h), after session__stop(): each entry of the
 * `ran` map to @fn, then each CPU's times not yet in it (a key may come more
 * than once: add them up); none when WPROF_RAN_INSTEAD=off. 0, @fn's error,
 * or -errno.
 */
typedef int (*session_ran_fn)(const struct wprof_ran_key *k, const struct wprof_ran_val *v,
			      void *ctx);
int session__for_each_ran(struct session *s, session_ran_fn fn, void *ctx);
/* Whether the BPF side records who ran instead (not WPROF_RAN_INSTEAD=off). */
bool session__ran_instead(const struct session *s);
/*
 * While recording, after every drain: once at least @min_threads threads
 * that ended were drained a drain ago or more (see store__ripen()), hand
 * them to @thread_fn, then their keys of times by stacks to @count_fn, and
 * forget them; then free the stacks that nothing names any more (not the
 * store, not a live thread's entry, not the maps being filled). Into @busy
 * (keys (pid, 0)) go the pids that something still names: what the
 * symbolizer must keep. So memory stays bounded by what is alive, the
 * distinct stacks and @min_threads, not by the threads seen. Not with
 * --wakers (a waker's stacks are those of another process, named at the
 * end). 1 when done (@busy filled), 0 when not (too few threads, --wakers),
 * or -errno (-ENOMEM, a callback's).
 */
struct hmap;
int session__retire(struct session *s, size_t min_threads, session_thread_fn thread_fn,
		    session_count_fn count_fn, void *ctx, struct hmap *busy);
/* The stacks held for their process's maps, to walk (held.h). */
struct held;
struct pyproc;
struct held *session__held(struct session *s);
/*
 * The CPython processes (pyproc.h), owned by the caller: bound to the BPF
 * side's maps, their code objects taken at every drain. Nothing when
 * WPROF_PYTHON=off. 0 or -errno.
 */
int session__set_python(struct session *s, struct pyproc *py);
/* NULL when none was set. */
struct pyproc *session__python(const struct session *s);

/* Frames of stack `id`, leaf first (a held user stack's as walked, held.h). 0 or -ENOENT. */
int session__stack(struct session *s, __u64 id, bool user, struct wprof_stack *out);
void session__stats(struct session *s, __u64 stats[WPROF_STAT_CNT]);
/* One of those counters, summed over the CPUs (0 if it cannot be read). */
__u64 session__stat(struct session *s, enum wprof_stat idx);
/* With --stats: the kernel's run-time statistics of each attached program. */
void session__print_prog_stats(struct session *s, FILE *f);

#endif /* WPROF_SESSION_H */
