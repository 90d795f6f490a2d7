/* SPDX-License-Identifier: GPL-2.0-only */
/* Thread bookkeeping shared by the scheduler programs and the start snapshot. */
#ifndef WPROF_THREAD_BPF_H
#define WPROF_THREAD_BPF_H

#include "common.bpf.h"

#define TASK_RUNNING 0x0000
#define TASK_INTERRUPTIBLE 0x0001
#define TASK_UNINTERRUPTIBLE 0x0002
#define TASK_NOLOAD 0x0400
#define EXIT_DEAD 0x0010
#define EXIT_ZOMBIE 0x0020
#define TASK_DEAD 0x0080

/* Kernels before 5.14 call the field `state`. */
struct task_struct___pre514 {
	long state;
} __attribute__((preserve_access_index));

static __always_inline unsigned int task_state(struct task_struct *t)
{
	if (bpf_core_field_exists(t->__state))
		return BPF_CORE_READ(t, __state);
	return BPF_CORE_READ((struct task_struct___pre514 *)t, state);
}

/*
 * A task field: a direct load where the pointer is typed (tp_btf, iterators),
 * a probe read where it is a raw value (raw_tp). `typed` is a constant at
 * every call, so each program keeps one of the two.
 */
#define TASK_READ(t, field, typed) ((typed) ? (t)->field : BPF_CORE_READ(t, field))

static __always_inline bool window_open(void)
{
	return window_start_ns != 0;
}

/* A time inside the window: at its start if earlier, at its end if later. */
static __always_inline __u64 clip(__u64 ts)
{
	__u64 end = window_end_ns;

	if (ts < window_start_ns)
		ts = window_start_ns;
	if (end && ts > end)
		ts = end;
	return ts;
}

/* The window's part of [from, to]. */
static __always_inline __u64 span(__u64 from, __u64 to)
{
	return to > from ? clip(to) - clip(from) : 0;
}

static __always_inline __u32 off_state(bool preempt, unsigned int state)
{
	if (preempt || state == TASK_RUNNING)
		return WPROF_OFF_RUNQ;
	/* TASK_IDLE (uninterruptible + noload) is an idle kthread, not I/O */
	if ((state & TASK_UNINTERRUPTIBLE) && !(state & TASK_NOLOAD))
		return WPROF_OFF_DISK;
	return WPROF_OFF_SLEEP;
}

/*
 * Where a new thread entry is put together (too large for the BPF stack):
 * per CPU, one for the scheduler's events (interrupts off), one for the
 * programs that run with them on (an interrupt's wakeup may come in
 * meanwhile), one for the iterators (sleepable).
 */
enum { NEW_SCHED, NEW_TASK, NEW_ITER, NEW_CNT };

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, NEW_CNT);
	__type(key, __u32);
	__type(value, struct wprof_thread);
} thread_new SEC(".maps") __weak;

/* A zeroed entry in slot `slot` of thread_new, or NULL. */
static __always_inline struct wprof_thread *thread_blank(__u32 slot)
{
	struct wprof_thread *th = bpf_map_lookup_elem(&thread_new, &slot);

	if (th)
		__builtin_memset(th, 0, sizeof(*th));
	return th;
}

/*
 * Entries of ended threads that a new thread of the same tid took over
 * before user space drained them (the pids wrapped around): user space
 * takes them from here, each a thread of its own.
 */
struct {
	__uint(type, BPF_MAP_TYPE_QUEUE);
	__uint(max_entries, 256);
	__type(value, struct wprof_thread);
} reused_threads SEC(".maps") __weak;

/*
 * @old, the entry of an ended thread whose tid a new task now has: hand it
 * to user space (reused_threads); the caller then makes the entry the new
 * task's. False if another CPU does (the CAS on start_id decides); an event
 * of the new task on another CPU meanwhile may still land in the old entry:
 * a window of a few instructions, once per reuse.
 */
static __always_inline bool thread_reuse(struct wprof_thread *old, __u32 start_id, __u32 slot)
{
	__u32 old_id = old->start_id;
	struct wprof_thread *th;

	if (__sync_val_compare_and_swap(&old->start_id, old_id, start_id) != old_id)
		return false;
	th = thread_blank(slot);
	if (th) {
		__builtin_memcpy(th, old, sizeof(*th));
		th->start_id = old_id;
	}
	if (!th || bpf_map_push_elem(&reused_threads, th, 0))
		stat_add(WPROF_STAT_REUSED_LOST, 1);
	return true;
}

static __always_inline struct wprof_thread *thread_get(struct task_struct *t, __u32 pid,
						       __u32 tid, __u64 now, __u32 slot)
{
	struct wprof_thread *th;
	__u32 start_id = 0;
	bool reused;
	long err;

	th = bpf_map_lookup_elem(&threads, &tid);
	/* an ended thread's entry: only its last switch-out may use it, not a new task */
	if (th && !(th->exit_ns && th->start_id != (start_id = task_start_id(t))))
		return th;
	reused = th != NULL;
	if (reused && !thread_reuse(th, start_id, slot))
		return bpf_map_lookup_elem(&threads, &tid);
	if (!reused)
		start_id = task_start_id(t);
	th = thread_blank(slot);
	if (!th)
		return NULL;
	th->pid = pid;
	th->tid = tid;
	th->start_id = start_id;
	/* a thread first seen now existed since its start or the window's */
	th->first_ns = clip(BPF_CORE_READ(t, start_time));
	if (th->first_ns > now)
		th->first_ns = now;
	BPF_CORE_READ_STR_INTO(&th->comm, t, comm);
	err = bpf_map_update_elem(&threads, &tid, th, reused ? BPF_ANY : BPF_NOEXIST);
	if (err && err != -EEXIST) {
		stat_add(WPROF_STAT_THREADS_FULL, 1);
		return NULL;
	}
	return bpf_map_lookup_elem(&threads, &tid);
}

/* The kernel stack of a task that is not running (BTF task pointer only). */
static __always_inline __u64 task_kernel_stack(struct task_struct *task, __u32 slot)
{
	struct wprof_stack *st = scratch_stack(slot);
	long n;

	if (!st)
		return 0;
	n = bpf_get_task_stack(task, st->ips, sizeof(st->ips), 0);
	if (n < 0) {
		stat_add(WPROF_STAT_KSTACK_ERR, 1);
		return 0;
	}
	st->nr = n / sizeof(__u64);
	return store_stack(st, false);
}

static __always_inline bool part_kept(__u64 ns)
{
	return ns >= min_block_ns && ns <= max_block_ns;
}

/* One part of a walked interval, added to its stacks with the interval's weight. */
static __always_inline void add_part(struct wprof_thread *th, __u64 ustack, __u64 kstack,
				     __u32 state, __u64 ns, __u64 weight, bool waker)
{
	if (!ns || !part_kept(ns))
		return;
	/* a blocked part with a known waker goes to `wakes` instead */
	if (!waker || !record_wakers || !(th->waker_ustack_id | th->waker_kstack_id)) {
		if (!account(th->pid, th->tid, th->start_id, ustack, kstack, state, ns, weight))
			th->lost_ns += ns;
	} else {
		struct wprof_wake_key key = {
			.blocked = {
				.pid = th->pid,
				.tid = th->tid,
				.ustack_id = ustack,
				.kstack_id = kstack,
				.state = state,
				.start_id = th->start_id,
			},
			.waker_ustack_id = th->waker_ustack_id,
			.waker_kstack_id = th->waker_kstack_id,
			.waker_pid = th->waker_pid,
		};

		__builtin_memcpy(key.waker_comm, th->waker_comm, sizeof(key.waker_comm));
		if (!add_val(active_map(&wakes), &key, ns, weight, WPROF_STAT_WAKES_FULL))
			th->lost_ns += ns;
	}
}

/*
 * Add a walked interval's parts to its stacks: blocked (in its state) and
 * waiting for a CPU. A global function: the verifier checks it once, not at
 * every one of its calls.
 */
__weak __noinline int add_interval(struct wprof_thread *th, const struct wprof_interval *iv,
				   __u64 ustack)
{
	if (!th || !iv)
		return 0;
	add_part(th, ustack, iv->kstack_id, iv->state, iv->ns[0], iv->weight, true);
	add_part(th, ustack, iv->kstack_id, WPROF_OFF_RUNQ, iv->ns[1], iv->weight, false);
	return 0;
}

/*
 * Take the thread's pending interval into `iv` (the caller then owns it), or
 * false when there is none, it is not the one that began at `start` (if
 * `start` is not 0), or someone else (its resume, the window-end iterator)
 * took it first. An interval's start is unique to it: a take that succeeds
 * took the interval it copied.
 */
static __always_inline bool take_pending(struct wprof_thread *th, struct wprof_interval *iv,
					 __u64 start)
{
	__u64 s = th->pend.start;

	if (!s || (start && s != start))
		return false;
	*iv = th->pend;
	return __sync_val_compare_and_swap(&th->pend.start, s, 0) == s && iv->start == s;
}

/*
 * Add the pending interval that began at `start` (0: whichever), if still
 * there, with user stack `ustack` (walked as the thread resumed:
 * WPROF_STAT_USER_LATE; or 0, no longer walkable: WPROF_STAT_USER_LOST,
 * counted).
 */
static __always_inline void settle_pending(struct wprof_thread *th, __u64 start, __u64 ustack,
					   __u32 stat)
{
	struct wprof_interval iv;

	if (!take_pending(th, &iv, start))
		return;
	stat_add(stat, 1);
	add_interval(th, &iv, ustack);
}

static __always_inline void drop_pending(struct wprof_thread *th)
{
	settle_pending(th, 0, 0, WPROF_STAT_USER_LOST);
}

#endif /* WPROF_THREAD_BPF_H */
