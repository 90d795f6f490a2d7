/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The options of one recording (struct record_opts): what cli.c parses and
 * every module of `wprof record` reads.
 */
#ifndef WPROF_OPTS_H
#define WPROF_OPTS_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

#include "group.h"
#include "wprof.h"

enum output_format {
	FORMAT_FOLDED,
	FORMAT_JSON,
	FORMAT_THREADS,
	FORMAT_SVG,   /* interactive flame graph (svg.c) */
	FORMAT_PPROF, /* gzipped profile.proto (pprof.c) */
	FORMAT_WPROF, /* the recording itself, for wprof report (recfile.c) */
};

/*
 * Where a context switch is timed (WPROF_SWITCH_TIME): at the entry of
 * __schedule() (a program on sched_entry_tp stamps it), or where wprof's
 * sched_switch program runs. Auto: by the run queue's clock, as __schedule()
 * read it, where the programs reach a task's run queue; else at the entry
 * when another BPF program on sched_switch runs before wprof's (see
 * bpf/sched.bpf.c, switch_time()).
 */
enum switch_time { SWITCH_TIME_AUTO, SWITCH_TIME_ENTRY, SWITCH_TIME_HANDLER };

/*
 * What walks a user stack left to its thread's resume (WPROF_RESUME_WALK):
 * a program on sched_exit_tp (6.16+) that runs at every switch and also
 * sees the resumes the kernel gives no sched_switch event for, or a BPF
 * task work scheduled for the walked intervals alone (6.18+). Auto: the
 * task work for -p, -t and -a where the kernel has it, else the program
 * where the kernel has the tracepoint; for -- CMD, the program first.
 */
enum resume_walk { RESUME_WALK_AUTO, RESUME_WALK_TASK_WORK, RESUME_WALK_EXIT };

/*
 * Where an interval's wait for a CPU comes from (WPROF_RUNQ): the scheduler's
 * own count of it (sched_info), read at the switch-in, where the kernel's BTF
 * shows the way from a task to its run queue (CONFIG_FAIR_GROUP_SCHED); or
 * the time of the thread's sched_wakeup event, which takes a program at every
 * wakeup. Auto: the first where the kernel allows it.
 */
enum runq_source { RUNQ_AUTO, RUNQ_WAKEUP };

/*
 * When the lines of threads that ended are made (WPROF_RETIRE): while
 * recording, a drain after the one that took them, so that what only they
 * named is freed (auto: in batches of 512 threads, and not when the lines
 * carry thread ids, then each thread's lines as text outweigh what they are
 * made from; always: at every drain), or at the end. Never with --wakers: a
 * waker's stacks are another process's.
 */
enum retire { RETIRE_AUTO, RETIRE_ALWAYS, RETIRE_NEVER };

/* -o may be given this many times, each file in its own format. */
#define MAX_OUTPUTS 8

struct output_spec {
	const char *path; /* NULL: stdout */
	enum output_format format;
};

/* Settings of one recording: set once by the CLI, read-only afterwards. */
struct record_opts {
	enum wprof_filter filter;
	__u32 *ids; /* pids (-p) or tids (-t) */
	size_t nr_ids;
	char **cmd; /* -- CMD ARGS, NULL-terminated, or NULL */
	__u64 duration_ns; /* 0: until Ctrl-C or the targets exit */
	__u64 freq_hz;
	const char *output; /* the first -o; NULL: stdout */
	const char *btf_path; /* NULL: /sys/kernel/btf/vmlinux */
	/* -f: the format of stdout, and of -o files whose name does not say one */
	enum output_format format;
	struct output_spec outputs[MAX_OUTPUTS]; /* what to write; at least one after parsing */
	size_t nr_outputs;
	bool tag_leaf;
	enum group_by group; /* --group: of every output but a saved recording */
	bool wakers;
	const char *thread_glob; /* --thread-name */
	const char *comm_glob;   /* --comm */
	__u64 min_block_ns, max_block_ns;
	__u64 exact_above_ns; /* shorter off-CPU intervals are walked as a sample; 0: none */
	__u64 long_block_ns;  /* longer off-CPU intervals are kept one by one; 0: none */
	__u64 slice_ns;       /* time is kept in slices this long (the timeline) */
	bool no_idle_threads;
	bool no_cfi; /* no stack copies: frame pointers only */
	bool check_deferred; /* walk deferred user stacks twice, count differences */
	bool inlines; /* name inlined calls from DWARF, as frames of their own */
	bool no_states;
	bool bpf_stats;
	bool raw_tp; /* WPROF_ATTACH=raw_tp: the fallback programs, as on kernels without tp_btf */
	enum switch_time switch_time; /* WPROF_SWITCH_TIME */
	enum resume_walk resume_walk; /* WPROF_RESUME_WALK */
	enum runq_source runq;        /* WPROF_RUNQ */
	enum retire retire;           /* WPROF_RETIRE */
	/*
	 * WPROF_THREAD_SLOTS=few: 64 first thread slots, not THREAD_SLOTS, so
	 * that most threads' entries are in the overflow part (tests)
	 */
	bool few_slots;
	/*
	 * WPROF_PROC_ENDS=proc: learn of process ends from /proc/PID/stat at
	 * every drain, not from pidfds (src/proclive.h; the bench compares)
	 */
	bool proc_ends_proc;
	/*
	 * WPROF_STEAL=off: no steal read at switches; on-CPU time then
	 * includes the hypervisor's (the bench compares the cost)
	 */
	bool no_steal;
	/*
	 * WPROF_THROTTLE=off: waits in a throttled cgroup are not told from
	 * other waits for a CPU (the bench compares the cost)
	 */
	bool no_throttle;
	/* WPROF_PYTHON=off: no CPython frames read (the bench compares the cost) */
	bool no_python;
	/*
	 * WPROF_RAN_INSTEAD=off: no record of who had a CPU while a thread
	 * waited for it (bpf/ran.bpf.h; the bench compares its cost)
	 */
	bool no_ran_instead;
	/*
	 * WPROF_UNWIND_ROWS=few: a kernel row array of 131072 rows, so that a
	 * test runs out of room with a few programs (src/session.c)
	 */
	bool few_rows;
	/*
	 * WPROF_SLICES=few: slices made longer past 128 of them, not 512
	 * (src/record.c: coarsen()), so that a test of a few seconds sees it
	 */
	bool few_slices;
	/*
	 * WPROF_HELD=off: walks without a table keep their frame-pointer
	 * frames, no copy of the stack is held for later (the bench compares);
	 * =check: walks with the tables send a copy too, which user space
	 * walks and compares with them (a self-test of src/held.c)
	 */
	bool no_held;
	bool check_held;
	bool user_stacks;
	bool kernel_stacks;
	int verbose;
};

/*
 * Whether the lines built for these outputs carry each thread's pid and tid
 * as the two frames after the tag (before the comm): the writers that need
 * them (json, svg's idle threads, pprof's labels) take them out again. A
 * saved recording keeps them, for any format and filter `wprof report` is
 * asked for.
 */
static inline bool opts__line_ids(const struct record_opts *o)
{
	for (size_t i = 0; i < o->nr_outputs; i++)
		if (o->outputs[i].format == FORMAT_JSON || o->outputs[i].format == FORMAT_SVG ||
		    o->outputs[i].format == FORMAT_PPROF || o->outputs[i].format == FORMAT_WPROF)
			return true;
	return false;
}

/*
 * Whether each thread's exact time by slice is kept (--slice): for the
 * outputs that name threads in their lines, those that show it.
 */
static inline bool opts__thread_times(const struct record_opts *o)
{
	return o->slice_ns && opts__line_ids(o);
}

/* Whether an output lists every thread (and so needs every thread's row). */
static inline bool opts__thread_rows(const struct record_opts *o)
{
	for (size_t i = 0; i < o->nr_outputs; i++)
		if (o->outputs[i].format == FORMAT_THREADS)
			return true;
	return opts__line_ids(o);
}

/* Whether an output shows each process's blocks by length (json, and a saved recording's). */
static inline bool opts__hists(const struct record_opts *o)
{
	for (size_t i = 0; i < o->nr_outputs; i++)
		if (o->outputs[i].format == FORMAT_JSON || o->outputs[i].format == FORMAT_WPROF)
			return true;
	return false;
}

/* Whether an output shows where each frame's code came from (pprof's mappings). */
static inline bool opts__frame_origins(const struct record_opts *o)
{
	for (size_t i = 0; i < o->nr_outputs; i++)
		if (o->outputs[i].format == FORMAT_PPROF || o->outputs[i].format == FORMAT_WPROF)
			return true;
	return false;
}

#endif /* WPROF_OPTS_H */
