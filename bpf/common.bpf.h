/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Maps, settings and helpers shared by wprof's BPF programs. Each .bpf.c
 * includes this header; the definitions are __weak so that the static linker
 * (bpftool gen object) merges them into one map / one setting.
 */
#ifndef WPROF_COMMON_BPF_H
#define WPROF_COMMON_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "wprof.h"

#ifndef EEXIST
#define EEXIST 17
#endif
#ifndef EBUSY
#define EBUSY 16
#endif
#ifndef EINVAL
#define EINVAL 22
#endif
#ifndef ENOSPC
#define ENOSPC 28
#endif

/* Settings, written by user space before load. */
const volatile __u32 filter_mode __weak = WPROF_FILTER_ALL;
const volatile bool follow_children __weak = false;
const volatile bool user_stacks __weak = true;
const volatile bool kernel_stacks __weak = true;
const volatile bool record_wakers __weak = false;
/* Off-CPU parts shorter or longer than these are not added to stacks. */
const volatile __u64 min_block_ns __weak = 0;
const volatile __u64 max_block_ns __weak = ~0ULL;
/*
 * Off-CPU intervals shorter than this have their stacks walked with
 * probability length / walk_tau_ns (see struct wprof_val); 0: every one.
 */
const volatile __u64 walk_tau_ns __weak = 0;
/* Off-CPU intervals this long or longer are sent whole (struct wprof_long_block); 0: none. */
const volatile __u64 long_block_ns __weak = 0;
/*
 * sched_exit_tp is attached (tp_btf, 6.16+) and the window-end iterator
 * loads: user stacks that hold still can be walked as their thread resumes.
 */
const volatile bool resume_walk __weak = false;
/*
 * ... and it is done by a BPF task work (6.18+) the switch-in schedules for
 * the walked intervals alone, not by a program on sched_exit_tp at every
 * switch (bpf/sched.bpf.c: resume_work_run()).
 */
const volatile bool resume_task_work __weak = false;
/*
 * The window-end iterator runs (snapshot_end): it takes each live thread's
 * name then, so switches need not copy it.
 */
const volatile bool end_iter __weak = false;
/*
 * --check-deferred: walk a user stack left to its thread's resume at
 * switch-out too, and count the resume walks that differ.
 */
const volatile bool check_deferred __weak = false;
/* --stats: time each kind of switch (on a sample of the switches: WPROF_TIMED_EVERY) */
const volatile bool time_kinds __weak = false;
/* switches are timed by the stamp of tp_sched_entry (bpf/sched.bpf.c: switch_time()) */
const volatile bool entry_stamp __weak = false;
/*
 * An interval's wait for a CPU is the scheduler's own count of it (sched_info,
 * read at the switch-in: thread.bpf.h, queued_since()), not the time from its
 * sched_wakeup event: no program runs at wakeups unless --wakers. Set by user
 * space where the kernel's BTF shows the way from a task to its run queue.
 */
const volatile bool runq_sched_info __weak = false;
/*
 * ... and switches are timed by the run queue's clock, as __schedule() read
 * it (bpf/sched.bpf.c: switch_time()), not by a clock read at each.
 */
const volatile bool switch_rq_clock __weak = false;
/*
 * Each run's steal (time the hypervisor ran something else on the vCPU) is
 * read from the run queue's steal clock and kept out of on-CPU time. Set by
 * user space where the kernel accounts it (CONFIG_PARAVIRT_TIME_ACCOUNTING).
 */
const volatile bool steal_time __weak = false;
/*
 * A wait for a CPU in a cgroup over its CPU quota is told apart
 * (WPROF_OFF_THROTTLED): from the throttled time its group's run queue sums
 * (bpf/thread.bpf.h: throttle_out()). Set by user space where the kernel
 * has that sum (CONFIG_CFS_BANDWIDTH, 6.6 on).
 */
const volatile bool throttle_time __weak = false;
/* Kernel frames to leave out of the walk at sched_switch (tracing machinery). */
const volatile __u32 switch_kstack_skip __weak = 0;
/*
 * The window, written by user space: its start once every program is
 * attached (0 before: events then only set each thread's state, so that
 * its state when the window opens is known), its end before any is
 * detached (0 while open). Times are clipped to it where they are used.
 */
__u64 window_start_ns __weak = 0;
__u64 window_end_ns __weak = 0;
/*
 * A fixed set of up to WPROF_MAX_FIXED_IDS pids (or tids) is compared here
 * instead of looked up in `targets`: every switch on the machine asks twice
 * whether a task is a target, and most answers are no.
 */
#define WPROF_MAX_FIXED_IDS 16
const volatile __u32 fixed_ids[WPROF_MAX_FIXED_IDS] __weak = {};
const volatile __u32 nr_fixed_ids __weak = 0;
/* `-- CMD`: the child is a target, but only from its exec of CMD on */
__u32 exec_gate_tgid __weak = 0;

/* tgid (or tid, with WPROF_FILTER_TID) -> 1 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32);
	__type(value, __u8);
} targets SEC(".maps") __weak;

/*
 * stack id (hash of the frames) -> frames, ~1 KiB each. Preallocated: without
 * it, bpf_mem_alloc runs dry in the middle of a burst of new stacks at
 * sched_switch (-ENOMEM), and stacks would be lost.
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, __u64);
	__type(value, struct wprof_stack);
} stacks SEC(".maps") __weak;

/*
 * Times by stacks. The programs add to the map in slot 0 of `counts`; user
 * space drains them while recording by putting the other map of the pair
 * there: that update waits for every program running to finish
 * (synchronize_rcu()), after which nothing writes the map taken out, and it
 * is read and emptied whole. The values are added to in place, without
 * atomics (see add_piece()): taking entries out of a map that is still
 * written, even with BPF_MAP_LOOKUP_AND_DELETE_ELEM, could lose an addition
 * made through a pointer looked up just before.
 */
struct counts_map {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);
	__type(key, struct wprof_key);
	__type(value, struct wprof_val);
};
struct counts_map counts_a SEC(".maps") __weak;
struct counts_map counts_b SEC(".maps") __weak;

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__uint(max_entries, 1);
	__type(key, __u32);
	__array(values, struct counts_map);
} counts SEC(".maps") __weak;

/*
 * Ended threads' entries, until user space drains them: taken from their
 * slots (below) by their last switch-outs. Not preallocated: most recordings
 * see few threads end.
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 32768);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, __u32);
	__type(value, struct wprof_thread);
} threads SEC(".maps") __weak;

/*
 * Live threads' entries, in an array: a lookup there is inlined by the
 * verifier, where a hash lookup is two calls (the lookup, and memcmp() in
 * it). A thread's entry is in its slot, tid & slot_mask, or, where another
 * thread has that, in one of SLOT_PROBES slots of the overflow part (from
 * slot_over on) that its tid hashes to (bpf/thread.bpf.h: thread_lookup()).
 * An ended thread's entry moves to `threads` (its last switch-out), which
 * user space drains; user space sizes the array and reads it, and writes
 * neither.
 */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 49152);
	__type(key, __u32);
	__type(value, struct wprof_thread);
} thread_slots SEC(".maps") __weak;

/* per slot of the first part: held while an entry of its tids is made or moved out */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 16384);
	__type(key, __u32);
	__type(value, __u32);
} slot_locks SEC(".maps") __weak;

const volatile __u32 slot_mask __weak = 16383;
/*
 * Drains so far: user space adds one after each drain's switch of maps,
 * which waits for every program running (bpf/thread.bpf.h: slot_claim()).
 */
__u64 slot_epoch __weak = 0;
const volatile __u32 slot_over __weak = 16384;
const volatile __u32 slot_over_mask __weak = 32767;
const volatile __u32 slot_over_shift __weak = 17; /* 32 - log2(slot_over_mask + 1) */

/* --wakers only (max_entries is set to 1 otherwise); drained as `counts` */
struct wakes_map {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 32768);
	__type(key, struct wprof_wake_key);
	__type(value, struct wprof_val);
};
struct wakes_map wakes_a SEC(".maps") __weak;
struct wakes_map wakes_b SEC(".maps") __weak;

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__uint(max_entries, 1);
	__type(key, __u32);
	__array(values, struct wakes_map);
} wakes SEC(".maps") __weak;

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, WPROF_STAT_CNT);
	__type(key, __u32);
	__type(value, __u64);
} stats SEC(".maps") __weak;

/* exec and fork of targets, so that user space captures their mappings at once */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 512 * 1024);
} events SEC(".maps") __weak;

/* long off-CPU intervals (struct wprof_long_block); sized by user space */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 256 * 1024);
} blocks SEC(".maps") __weak;

/* Unwind rows of every file the targets map; user space writes them through mmap(). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, 1);	/* sized by user space before load */
	__type(key, __u32);
	__type(value, struct wprof_unwind_row);
} unwind_rows SEC(".maps") __weak;

/* tgid -> its executable mappings and their rows */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 8192);
	__type(key, __u32);
	__type(value, struct wprof_proc_maps);
} proc_maps SEC(".maps") __weak;

/* all zero: the source of placeholder entries in proc_maps */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct wprof_proc_maps);
} proc_maps_blank SEC(".maps") __weak;

/* Walk user stacks with the code's CFI (else: frame pointers only, --no-cfi). */
const volatile bool cfi_walk __weak = true;

#define PF_KTHREAD 0x00200000
#define PF_USER_WORKER 0x00004000

/*
 * Scratch space for one stack walk. One slot per context that can walk a
 * stack, because a sample (hrtimer interrupt) can land while a wakeup program
 * runs on the same CPU. sched_switch runs with interrupts off,
 * sched_exit_tp (SCRATCH_RESUME) with them on and preemption off, and so
 * does the resume task work, which turns preemption off for its walk. The
 * start and end snapshots' walks (SCRATCH_ITER) may sleep halfway: user space
 * runs those iterators one at a time, from one thread (run_iter()).
 */
enum { SCRATCH_SWITCH, SCRATCH_SAMPLE, SCRATCH_WAKE, SCRATCH_ITER, SCRATCH_RESUME, SCRATCH_CNT };
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, SCRATCH_CNT);
	__type(key, __u32);
	__type(value, struct wprof_stack);
} scratch SEC(".maps") __weak;

static __always_inline void stat_add(__u32 idx, __u64 n)
{
	__u64 *v = bpf_map_lookup_elem(&stats, &idx);

	if (v)
		*v += n; /* per-CPU: no atomics needed */
}

static __always_inline void notify_event(const struct wprof_event *e)
{
	if (bpf_ringbuf_output(&events, (void *)e, sizeof(*e), 0))
		stat_add(WPROF_STAT_EVENTS_LOST, 1);
}

static __always_inline void notify(__u32 pid, __u32 kind)
{
	struct wprof_event e = { .pid = pid, .kind = kind };

	notify_event(&e);
}

static __always_inline bool is_target(__u32 tgid, __u32 tid)
{
	if (tid == 0 || tgid == exec_gate_tgid) /* the idle task; CMD before exec */
		return false;
	if (filter_mode == WPROF_FILTER_ALL)
		return true;
	if (nr_fixed_ids) {
		__u32 id = filter_mode == WPROF_FILTER_PID ? tgid : tid;

		for (int i = 0; i < WPROF_MAX_FIXED_IDS; i++) {
			if (i >= nr_fixed_ids)
				break;
			if (fixed_ids[i] == id)
				return true;
		}
		return false;
	}
	if (filter_mode == WPROF_FILTER_PID)
		return bpf_map_lookup_elem(&targets, &tgid) != NULL;
	return bpf_map_lookup_elem(&targets, &tid) != NULL;
}

/* FNV-1a over 64-bit words, then a finalizer; 0 is reserved for "no stack". */
static __always_inline __u64 hash_stack(const struct wprof_stack *st, __u32 nr)
{
	__u64 h = 0xcbf29ce484222325ULL;

	for (__u32 i = 0; i < WPROF_MAX_STACK_DEPTH; i++) {
		if (i >= nr)
			break;
		h ^= st->ips[i];
		h *= 0x100000001b3ULL;
	}
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdULL;
	h ^= h >> 33;
	return h ? h : 1;
}

/* A task's start as /proc/PID/stat says it (USER_HZ is 100 on every Linux ABI). */
static __always_inline __u64 start_ticks(struct task_struct *t)
{
	return BPF_CORE_READ(t, start_boottime) / (1000000000ULL / 100);
}

/* Keep the walked stack `st` in `stacks` once; its id, or 0 if it is lost. */
static __always_inline __u64 store_stack(struct wprof_stack *st, bool user)
{
	__u64 id;
	long err;

	if (st->nr == 0)
		return 0;
	if (st->nr >= WPROF_MAX_STACK_DEPTH)
		stat_add(user ? WPROF_STAT_USTACK_TRUNC : WPROF_STAT_KSTACK_TRUNC, 1);
	id = hash_stack(st, st->nr);
	if (bpf_map_lookup_elem(&stacks, &id))
		return id;
	err = bpf_map_update_elem(&stacks, &id, st, BPF_NOEXIST);
	if (err && err != -EEXIST) {
		stat_add(WPROF_STAT_STACKS_FULL, 1);
		return 0;
	}
	return id;
}

static __always_inline struct wprof_stack *scratch_stack(__u32 slot)
{
	return bpf_map_lookup_elem(&scratch, &slot);
}

/*
 * Walk the current task's kernel stack and return its id, or 0 when it was
 * lost (counted). User stacks: see unwind.bpf.h.
 */
static __always_inline __u64 kernel_stack(void *ctx, __u32 slot, __u32 skip)
{
	struct wprof_stack *st = scratch_stack(slot);
	long n;

	if (!st)
		return 0;
	n = bpf_get_stack(ctx, st->ips, sizeof(st->ips), skip & BPF_F_SKIP_FIELD_MASK);
	if (n < 0) {
		stat_add(WPROF_STAT_KSTACK_ERR, 1);
		return 0;
	}
	st->nr = n / sizeof(__u64);
	return store_stack(st, false);
}

/* The map of `counts` or `wakes` the programs add to now (NULL: none yet). */
static __always_inline void *active_map(void *outer)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(outer, &zero);
}

/*
 * Add one interval (or one sample) of `delta_ns` to `key` in `map`, standing
 * for `weight` / WPROF_WEIGHT_ONE intervals like it. False if the map is full.
 */
/*
 * Add a piece of @whole_ns of off-CPU time, @delta_ns of it, or a sample
 * (@delta_ns 0), to the value of @key; the interval is counted (its count,
 * weight and length) when @counted.
 */
static __always_inline bool add_piece(void *map, const void *key, __u64 delta_ns,
				      __u64 whole_ns, __u64 weight, bool counted, __u32 full_stat)
{
	struct wprof_val *val, zero = {};
	long err;

	if (!map) {
		stat_add(full_stat, 1);
		stat_add(WPROF_STAT_DROPPED_NS, delta_ns);
		return false;
	}
	val = bpf_map_lookup_elem(map, key);
	if (!val) {
		err = bpf_map_update_elem(map, key, &zero, BPF_NOEXIST);
		if (err && err != -EEXIST) {
			stat_add(full_stat, 1);
			stat_add(WPROF_STAT_DROPPED_NS, delta_ns);
			return false;
		}
		val = bpf_map_lookup_elem(map, key);
		if (!val)
			return false;
	}
	/*
	 * No atomics: a key holds one thread's time, and a thread's intervals
	 * close (switch-in) and its samples fire on the one CPU it runs on.
	 */
	val->total_ns += (delta_ns * weight) >> WPROF_WEIGHT_SHIFT;
	if (weight == WPROF_WEIGHT_ONE)
		val->exact_ns += delta_ns;
	if (!counted)
		return true;
	val->count++;
	val->weight += weight;
	if (whole_ns > val->max_ns)
		val->max_ns = whole_ns;
	return true;
}

/* Slices of the window (--slice), slice_ns long; 0: one, the whole window. */
const volatile __u64 slice_ns __weak = 0;
/* ... and each thread's time by slice is kept (add_time()) */
const volatile bool thread_times __weak = false;

/*
 * The slice @ts is in: one before the window's start (or before it opened)
 * in the first, one after its end in the last.
 */
static __always_inline __u32 slice_of(__u64 ts)
{
	__u64 end = window_end_ns;

	if (!slice_ns || !window_start_ns || ts <= window_start_ns)
		return 0;
	if (end && ts >= end)
		ts = end > window_start_ns ? end - 1 : window_start_ns;
	return (ts - window_start_ns) / slice_ns;
}

/*
 * Add @ns of off-CPU time from @from on (in the window) to @key (a struct
 * wprof_key, or a key that begins with one), split at slice edges: at most
 * three pieces (see struct wprof_key), the last counting the interval.
 */
static __always_inline bool add_sliced(void *map, void *key, __u64 from, __u64 ns,
				       __u64 weight, __u32 full_stat)
{
	struct wprof_key *k = key;
	__u32 s0 = slice_of(from), s1 = slice_of(from + (ns ? ns - 1 : 0));
	__u64 edge0, edge1;
	bool ok = true;

	if (s0 >= s1) {
		k->slice = s0;
		k->span = 1;
		return add_piece(map, key, ns, ns, weight, true, full_stat);
	}
	edge0 = window_start_ns + (__u64)(s0 + 1) * slice_ns;
	edge1 = window_start_ns + (__u64)s1 * slice_ns;
	k->slice = s0;
	k->span = 1;
	ok &= add_piece(map, key, edge0 - from, ns, weight, false, full_stat);
	if (s1 > s0 + 1) {
		k->slice = s0 + 1;
		k->span = s1 - s0 - 1;
		ok &= add_piece(map, key, edge1 - edge0, ns, weight, false, full_stat);
	}
	k->slice = s1;
	k->span = 1;
	ok &= add_piece(map, key, from + ns - edge1, ns, weight, true, full_stat);
	return ok;
}

/* What tells a task from an earlier one of the same tid (struct wprof_key). */
static __always_inline __u32 task_start_id(struct task_struct *t)
{
	return BPF_CORE_READ(t, start_time);
}

/*
 * A sample at @now (@delta_ns: the steal it measured), or @delta_ns of
 * off-CPU time from @now on.
 */
static __always_inline bool account(__u32 pid, __u32 tid, __u32 start_id, __u64 ustack,
				    __u64 kstack, __u32 state, __u64 now, __u64 delta_ns,
				    __u64 weight)
{
	struct wprof_key key = {
		.pid = pid,
		.tid = tid,
		.ustack_id = ustack,
		.kstack_id = kstack,
		.state = state,
		.start_id = start_id,
		.slice = slice_of(now),
		.span = 1,
	};

	if (state == WPROF_ON_CPU || state == WPROF_STEAL)
		return add_piece(active_map(&counts), &key, delta_ns, delta_ns, weight, true,
				 WPROF_STAT_COUNTS_FULL);
	return add_sliced(active_map(&counts), &key, now, delta_ns, weight,
			  WPROF_STAT_COUNTS_FULL);
}

#endif /* WPROF_COMMON_BPF_H */
