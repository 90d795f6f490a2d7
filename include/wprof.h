/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The one header shared by the BPF programs and user space: map keys and
 * values, limits, enums. Only __u32/__u64 types, explicit padding, so the
 * layout is identical on both sides.
 */
#ifndef WPROF_H
#define WPROF_H

/* bpf_get_stack() is limited by kernel.perf_event_max_stack (127 by default). */
#define WPROF_MAX_STACK_DEPTH 127
#define WPROF_COMM_LEN 16

/*
 * What a thread was doing while the time in a key was spent. Off-CPU time is
 * split by the scheduler state the thread left the CPU in, and at its wakeup:
 * the blocked part goes to SLEEP or DISK, the wait for a CPU after it to RUNQ.
 */
enum wprof_state {
	WPROF_ON_CPU = 0,
	WPROF_OFF_SLEEP = 1, /* TASK_INTERRUPTIBLE (and TASK_IDLE) */
	WPROF_OFF_DISK = 2,  /* TASK_UNINTERRUPTIBLE: usually block I/O */
	WPROF_OFF_RUNQ = 3,  /* runnable, waiting for a CPU */
	WPROF_STATE_CNT,
};

/* A stack id is a 64-bit hash of the frames; 0 means "no stack". */
struct wprof_key {
	__u32 pid; /* tgid */
	__u32 tid;
	__u64 ustack_id;
	__u64 kstack_id;
	__u32 state; /* enum wprof_state */
	__u32 pad;
};

struct wprof_val {
	__u64 count;    /* on-CPU: samples; off-CPU: blocks (intervals) */
	__u64 total_ns; /* off-CPU only; on-CPU lines are weighed in user space */
	__u64 max_ns;   /* longest single interval (off-CPU) */
};

struct wprof_stack {
	__u32 nr; /* frames used in ips[] */
	__u32 pad;
	__u64 ips[WPROF_MAX_STACK_DEPTH];
};

/*
 * The user registers and the top of the user stack at the first event of
 * each user stack id, for user space to recover, with the CFI of the code,
 * the frames a frame-pointer walk skips in code built without them.
 */
#define WPROF_UCOPY_LEN 2048
struct wprof_ucopy {
	__u64 ip, sp, fp;
	__u32 len; /* bytes copied from sp */
	__u32 pad;
	__u8 data[WPROF_UCOPY_LEN];
};

/* Per-thread bookkeeping, kept until the end of the recording. */
struct wprof_thread {
	__u32 pid;
	__u32 tid;
	__u64 first_ns;  /* first seen inside the window */
	__u64 exit_ns;   /* 0 while alive */
	__u64 on_ns;     /* exact on-CPU time, from switch events */
	__u64 oncpu_since_ns; /* 0 while off-CPU */
	__u64 off_since_ns;   /* 0 while on-CPU */
	__u64 wake_ns;        /* wakeup time of the current off-CPU interval */
	__u64 ustack_id;      /* stacks the thread left the CPU with */
	__u64 kstack_id;
	__u32 off_state;      /* enum wprof_state of the current interval */
	__u32 cache_hits;     /* stack cache hits since the last walk */
	/*
	 * Stack cache: the fingerprint of the last voluntary switch-out (saved
	 * user registers, the return address at fp + 8, syscall, state) and
	 * the stacks walked then. See bpf/sched.bpf.c.
	 */
	__u64 fp_ip, fp_sp, fp_fp, fp_ret, fp_arg0;
	__u32 fp_sysnr, fp_state;
	__u64 fp_ustack_id, fp_kstack_id;
	/* exact totals, whatever the stack maps and filters keep */
	__u64 off_ns[WPROF_STATE_CNT];
	__u64 blocks;       /* intervals in SLEEP or DISK */
	__u64 max_block_ns; /* longest of them (blocked part) */
	/* --wakers: who woke the current interval */
	__u64 waker_ustack_id, waker_kstack_id;
	__u32 waker_pid;
	__u32 pad2;
	char waker_comm[WPROF_COMM_LEN];
	char comm[WPROF_COMM_LEN];
};

/* --wakers: blocked time keyed by the blocked stacks and the waker's. */
struct wprof_wake_key {
	struct wprof_key blocked;
	__u64 waker_ustack_id;
	__u64 waker_kstack_id;
	__u32 waker_pid; /* tgid */
	__u32 pad;
	char waker_comm[WPROF_COMM_LEN];
};

/* Log2 histogram of block durations per process: bucket k holds [2^k, 2^(k+1)) us. */
#define WPROF_HIST_SLOTS 32
struct wprof_hist_key {
	__u32 pid;
	__u32 slot;
};

/* Counters of everything the BPF side saw, did, or had to drop. */
enum wprof_stat {
	WPROF_STAT_SAMPLES,        /* on-CPU samples of targets */
	WPROF_STAT_SWITCHES,       /* switch-outs of targets */
	WPROF_STAT_WAKEUPS,        /* wakeups of targets */
	WPROF_STAT_USTACK_ERR,     /* bpf_get_stack(user) failed */
	WPROF_STAT_KSTACK_ERR,     /* bpf_get_stack(kernel) failed */
	WPROF_STAT_USTACK_TRUNC,   /* user stack deeper than the limit */
	WPROF_STAT_KSTACK_TRUNC,   /* kernel stack deeper than the limit */
	WPROF_STAT_STACKS_FULL,    /* stack map full: stack dropped */
	WPROF_STAT_COUNTS_FULL,    /* counts map full: data dropped */
	WPROF_STAT_THREADS_FULL,   /* thread map full: thread not tracked */
	WPROF_STAT_DROPPED_NS,     /* off-CPU ns lost to full maps */
	WPROF_STAT_CACHE_HITS,     /* switch-outs that reused cached stacks */
	WPROF_STAT_CACHE_CHECKS,   /* cache hits walked anyway to validate */
	WPROF_STAT_CACHE_MISMATCH, /* validations that found other stacks */
	WPROF_STAT_FILTERED,       /* intervals outside --min-block/--max-block */
	WPROF_STAT_WAKES_FULL,     /* waker map full: waker not recorded */
	WPROF_STAT_HIST_FULL,      /* histogram map full */
	WPROF_STAT_UCOPY_FULL,     /* stack copy map full: frames not recoverable */
	WPROF_STAT_UCOPY_ERR,      /* the user stack could not be read */
	WPROF_STAT_EVENTS_LOST,    /* exec/fork events the ring buffer had no room for */
	WPROF_STAT_UNTRACED_IN,    /* a thread got a CPU without a sched_switch event */
	WPROF_STAT_UNTRACED_OUT,   /* a thread left a CPU without a sched_switch event */
	WPROF_STAT_CNT,
};

/* Ring buffer events: a target process whose mappings user space should capture now. */
struct wprof_event {
	__u32 pid; /* tgid */
	__u32 kind; /* 0: exec, 1: fork */
};

/* Which tasks the programs look at. */
enum wprof_filter {
	WPROF_FILTER_ALL = 0, /* -a */
	WPROF_FILTER_PID = 1, /* -p / -- CMD: targets map keyed by tgid */
	WPROF_FILTER_TID = 2, /* -t: targets map keyed by tid */
};

#endif /* WPROF_H */
