// SPDX-License-Identifier: GPL-2.0-only
/*
 * The BPF side of one recording: load (the programs each kernel can take),
 * attach, the events ring, detach. Draining the maps: drain.c; --stats:
 * bpfstats.c; the struct they share: session_priv.h.
 */
#include <errno.h>
#include <signal.h>
#include <linux/perf_event.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "held.h"
#include "heldring.h"
#include "procmaps.h"
#include "hmap.h"
#include "longblocks.h"
#include "session.h"
#include "session_priv.h"
#include "pyproc.h"
#include "tphooks.h"
#include "store.h"
#include "util.h"
#include "wprof.skel.h"

#define DEFAULT_BTF "/sys/kernel/btf/vmlinux"
/*
 * Thread slots (bpf/common.bpf.h: thread_slots): one per tid modulo
 * THREAD_SLOTS, then THREAD_SLOTS_OVER for the threads whose slot another
 * has (powers of two; 27 MB in all). WPROF_THREAD_SLOTS=few: 64 of the
 * first kind, so that the overflow part is tested.
 */
#define THREAD_SLOTS 16384
#define THREAD_SLOTS_OVER_BITS 15
#define THREAD_SLOTS_OVER (1u << THREAD_SLOTS_OVER_BITS)



static int libbpf_verbosity;

static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	if (level == LIBBPF_DEBUG && libbpf_verbosity < 2)
		return 0;
	if (!libbpf_verbosity)
		return 0;
	return vfprintf(stderr, fmt, ap);
}

/*
 * The kernel's BTF (or --btf FILE), parsed once: it is checked here, and
 * what the kernel has (tracepoints, kfuncs) is looked up in it while the
 * programs are set up. NULL and errno set after one line saying why.
 */
static struct btf *load_btf(const char *path)
{
	const char *p = path ? path : DEFAULT_BTF;
	struct btf *btf;
	int err;

	if (access(p, R_OK)) {
		err = -errno;
		if (path)
			pr_err("cannot read BTF file %s: %s", p, strerror(-err));
		else
			pr_err("kernel has no BTF (%s: %s); it needs CONFIG_DEBUG_INFO_BTF=y, "
			       "or pass --btf FILE", p, strerror(-err));
		errno = -err;
		return NULL;
	}
	btf = btf__parse(p, NULL);
	if (!btf) {
		char msg[128];

		err = -errno;
		libbpf_strerror(err, msg, sizeof(msg));
		pr_err("%s is not valid BTF (%s); pass a vmlinux BTF file with --btf", p, msg);
		errno = -err;
		return NULL;
	}
	return btf;
}

/*
 * Whether the kernel has tracepoint `name`: sched_entry_tp, which times
 * switches, and sched_exit_tp, where a thread's user stack is walked as it
 * resumes (see bpf/sched.bpf.c), are in 6.16 and later.
 */
static bool has_tracepoint(const struct btf *btf, const char *name)
{
	char type[64];

	snprintf(type, sizeof(type), "btf_trace_%s", name);
	return btf__find_by_name_kind(btf, type, BTF_KIND_TYPEDEF) > 0;
}

/*
 * Whether the resume walk can be a task work (6.18+; see bpf/sched.bpf.c):
 * the kfunc that schedules it, and the one that keeps its walk on its CPU.
 */
static bool has_resume_task_work(const struct btf *btf)
{
	return btf__find_by_name_kind(btf, "bpf_task_work_schedule_resume_impl",
				      BTF_KIND_FUNC) > 0 &&
	       btf__find_by_name_kind(btf, "bpf_preempt_disable", BTF_KIND_FUNC) > 0;
}

/* Whether the kernel's struct @type has a member @member. */
static bool has_member(const struct btf *btf, const char *type, const char *member)
{
	int id = btf__find_by_name_kind(btf, type, BTF_KIND_STRUCT);
	const struct btf_member *m;
	const struct btf_type *t;

	if (id <= 0)
		return false;
	t = btf__type_by_id(btf, id);
	m = btf_members(t);
	for (int i = 0; i < btf_vlen(t); i++, m++)
		if (!strcmp(btf__name_by_offset(btf, m->name_off), member))
			return true;
	return false;
}

/*
 * Whether the programs can read a thread's wait for a CPU from the scheduler
 * (bpf/thread.bpf.h: queued_ns()): the way from a task to its run queue is
 * its CFS entity's queue's `rq` (CONFIG_FAIR_GROUP_SCHED).
 */
static bool has_runq_sched_info(const struct btf *btf)
{
	return has_member(btf, "sched_entity", "cfs_rq") && has_member(btf, "cfs_rq", "rq") &&
	       has_member(btf, "sched_info", "last_queued");
}

/*
 * Whether the programs can read each CPU's steal clock: its run queue's
 * (CONFIG_PARAVIRT_TIME_ACCOUNTING), reached from a task as the waits are.
 */
static bool has_steal_clock(const struct btf *btf)
{
	return has_member(btf, "rq", "prev_steal_time_rq") && has_runq_sched_info(btf);
}

/*
 * Whether the programs can tell a wait in a throttled cgroup: its group's run
 * queue sums the time it was throttled (CONFIG_CFS_BANDWIDTH, 6.6 on), a
 * task's entity tells its group's run queue (bpf/thread.bpf.h: throttle_out()).
 */
static bool has_throttle_clock(const struct btf *btf)
{
	return has_member(btf, "cfs_rq", "throttled_clock_self_time") &&
	       has_member(btf, "cfs_rq", "throttled_clock_self") &&
	       has_member(btf, "sched_entity", "parent") && has_runq_sched_info(btf);
}

/*
 * Whether switches are timed by the run queue's clock (bpf/sched.bpf.c:
 * switch_time()), which nothing on sched_switch delays: no stamp, and no
 * look at the other programs there, is needed then.
 */
static bool rq_clock_time(const struct record_opts *o, const struct btf *btf)
{
	return o->runq == RUNQ_AUTO && o->switch_time == SWITCH_TIME_AUTO &&
	       has_runq_sched_info(btf);
}

/*
 * `wakeup`: run-queue waits are timed from wakeups (sched_wakeup); `waking`:
 * --wakers, recorded at sched_waking, in the waker's context.
 */
static void set_autoload(struct wprof_bpf *skel, bool raw_tp, bool snapshot, bool entry_tp,
			 bool exit_tp, bool wakeup, bool waking)
{
	bpf_program__set_autoload(skel->progs.snapshot_threads, snapshot);
	bpf_program__set_autoload(skel->progs.snapshot_end, snapshot);
	bpf_program__set_autoload(skel->progs.tp_sched_entry, !raw_tp && entry_tp);
	bpf_program__set_autoload(skel->progs.tp_sched_exit, exit_tp);
	bpf_program__set_autoload(skel->progs.tp_switch, !raw_tp);
	bpf_program__set_autoload(skel->progs.tp_wakeup, !raw_tp && wakeup);
	bpf_program__set_autoload(skel->progs.tp_waking, !raw_tp && waking);
	bpf_program__set_autoload(skel->progs.tp_wakeup_new, !raw_tp);
	bpf_program__set_autoload(skel->progs.tp_fork, !raw_tp);
	bpf_program__set_autoload(skel->progs.tp_exec, !raw_tp);
	bpf_program__set_autoload(skel->progs.raw_exec, raw_tp);
	bpf_program__set_autoload(skel->progs.raw_switch, raw_tp);
	bpf_program__set_autoload(skel->progs.raw_wakeup, raw_tp && wakeup);
	bpf_program__set_autoload(skel->progs.raw_waking, raw_tp && waking);
	bpf_program__set_autoload(skel->progs.raw_wakeup_new, raw_tp);
	bpf_program__set_autoload(skel->progs.raw_fork, raw_tp);
}


static int try_load(struct session *s, const struct btf *kbtf, bool raw_tp, bool snapshot)
{
	LIBBPF_OPTS(bpf_object_open_opts, oo, .btf_custom_path = s->opts->btf_path);
	const struct record_opts *o = s->opts;
	bool late, exit_tp, task_work;
	__u32 first;
	__u64 t0;
	struct wprof_bpf *skel;
	int err;

	skel = wprof_bpf__open_opts(&oo);
	if (!skel)
		return -errno;
	skel->rodata->filter_mode = o->filter;
	/* a fixed target set (not one that grows with forks) is compared, not looked up */
	if (!o->cmd && o->nr_ids <= ARRAY_SIZE(skel->rodata->fixed_ids)) {
		for (size_t i = 0; i < o->nr_ids; i++)
			skel->rodata->fixed_ids[i] = o->ids[i];
		skel->rodata->nr_fixed_ids = o->nr_ids;
	}
	skel->rodata->follow_children = o->cmd != NULL;
	skel->rodata->user_stacks = o->user_stacks;
	skel->rodata->kernel_stacks = o->kernel_stacks;
	skel->rodata->record_wakers = o->wakers;
	skel->rodata->cfi_walk = o->user_stacks && !o->no_cfi;
	bpf_map__set_max_entries(skel->maps.unwind_rows, skel->rodata->cfi_walk ? s->max_rows : 1);
	if (!skel->rodata->cfi_walk)
		bpf_map__set_max_entries(skel->maps.proc_maps, 1);
	skel->rodata->min_block_ns = o->min_block_ns;
	skel->rodata->long_block_ns = o->long_block_ns;
	skel->rodata->slice_ns = o->slice_ns;
	skel->rodata->thread_times = opts__thread_times(o);
	if (!o->long_block_ns)
		bpf_map__set_max_entries(skel->maps.blocks, getpagesize());
	skel->rodata->max_block_ns = o->max_block_ns;
	if (!o->wakers) {
		/* the kernel compares the size of an array in a map of maps, not of a hash */
		bpf_map__set_max_entries(skel->maps.wakes_a, 1);
		bpf_map__set_max_entries(skel->maps.wakes_b, 1);
	}
	/*
	 * Stacks left to the window's end need its iterator; without it (old
	 * kernels) every interval is walked at its switches.
	 */
	skel->rodata->walk_tau_ns = snapshot ? o->exact_above_ns : 0;
	skel->rodata->time_kinds = o->bpf_stats;
	skel->rodata->end_iter = snapshot;
	skel->rodata->check_deferred = o->check_deferred;
	skel->rodata->hold_stacks = skel->rodata->cfi_walk && !o->check_deferred && !o->no_held;
	skel->rodata->check_held = skel->rodata->hold_stacks && o->check_held;
	if (!skel->rodata->hold_stacks)
		bpf_map__set_max_entries(skel->maps.held_stacks, getpagesize());
	/*
	 * User stacks left to their thread's resume need a program on
	 * sched_exit_tp or a BPF task work to walk them, and the window-end
	 * iterator for the intervals still open at the end. The program runs
	 * at every switch of the machine, whoever it is for; the task work
	 * costs the walked intervals alone. The program also walks the stacks
	 * of the resumes the kernel gives no sched_switch event for, which the
	 * task work cannot see (their time stays exact; see the README). With
	 * -p, -t and -a, the task work: its saving is a program run at every
	 * switch of the machine (on a VM whose program runs cost what a
	 * sched_exit_tp run costs, a third of wprof's BPF time per switch of a
	 * pinned pipe under -a: 614 ns with the program, 398 with the task
	 * work), where those resumes are a few a second. With -- CMD, the
	 * program: the command's short-lived children lose a few percent of
	 * their stacks to those resumes (sym_forked.sh), and a command's run
	 * is where the whole of its stacks is wanted. The task work walks
	 * with the unwinder's tables alone (it has no program context for a
	 * frame-pointer walk).
	 */
	late = !raw_tp && snapshot && o->user_stacks;
	exit_tp = late && has_tracepoint(kbtf, "sched_exit_tp");
	task_work = late && skel->rodata->cfi_walk && has_resume_task_work(kbtf);
	if (o->resume_walk == RESUME_WALK_TASK_WORK && late && !task_work) {
		pr_err("WPROF_RESUME_WALK=task_work: this kernel has no BPF task works "
		       "(Linux 6.18+), or stacks are walked by frame pointers alone (--no-cfi)");
		wprof_bpf__destroy(skel);
		return -EINVAL;
	}
	skel->rodata->resume_task_work = task_work &&
		(o->resume_walk == RESUME_WALK_TASK_WORK ||
		 (o->resume_walk == RESUME_WALK_AUTO && (!o->cmd || !exit_tp)));
	skel->rodata->resume_walk = skel->rodata->resume_task_work ||
				    (exit_tp && o->resume_walk != RESUME_WALK_TASK_WORK);
	first = o->few_slots ? 64 : THREAD_SLOTS;
	bpf_map__set_max_entries(skel->maps.thread_slots, first + THREAD_SLOTS_OVER);
	bpf_map__set_max_entries(skel->maps.slot_locks, first);
	skel->rodata->slot_mask = first - 1;
	skel->rodata->slot_over = first;
	skel->rodata->slot_over_mask = THREAD_SLOTS_OVER - 1;
	skel->rodata->slot_over_shift = 32 - THREAD_SLOTS_OVER_BITS;
	/* an entry per live thread that had a walk left to its resume: as many as slots */
	bpf_map__set_max_entries(skel->maps.resume_works,
				 skel->rodata->resume_task_work ? first + THREAD_SLOTS_OVER : 1);
	skel->rodata->entry_stamp = !raw_tp && s->want_entry &&
				    has_tracepoint(kbtf, "sched_entry_tp");
	/* no program at every wakeup, unless --wakers needs their wakers' stacks */
	skel->rodata->runq_sched_info = o->runq == RUNQ_AUTO && has_runq_sched_info(kbtf);
	skel->rodata->switch_rq_clock = rq_clock_time(o, kbtf);
	skel->rodata->steal_time = !o->no_steal && has_steal_clock(kbtf);
	skel->rodata->throttle_time = !o->no_throttle && has_throttle_clock(kbtf);
	skel->rodata->ran_instead = !o->no_ran_instead;
	if (o->no_ran_instead)
		bpf_map__set_max_entries(skel->maps.ran, 1);
	skel->rodata->python_frames = !o->no_python;
	set_autoload(skel, raw_tp, snapshot, skel->rodata->entry_stamp,
		     skel->rodata->resume_walk && !skel->rodata->resume_task_work,
		     !skel->rodata->runq_sched_info, o->wakers);
	t0 = now_ns();
	err = wprof_bpf__load(skel);
	s->load_ns += now_ns() - t0;
	if (!err)
		err = session_set_active(skel->maps.counts, skel->maps.counts_b);
	if (!err)
		err = session_set_active(skel->maps.wakes, skel->maps.wakes_b);
	if (err) {
		wprof_bpf__destroy(skel);
		return err;
	}
	s->counts_spare_a = s->wakes_spare_a = true;
	s->skel = skel;
	s->raw_tp = raw_tp;
	s->runq_wakeup = !skel->rodata->runq_sched_info;
	s->entry_stamp = skel->rodata->entry_stamp;
	s->steal_time = skel->rodata->steal_time;
	s->snapshot = snapshot;
	return 0;
}

/*
 * The unwind rows' array cannot grow once loaded; user space gives back the
 * room of code no live process maps (unwtab.c), so it must hold what live
 * processes map at once, with room to spare for what is being given back:
 * 8M rows (64 MiB: over twice what a build with clang peaks at, see the
 * README's Memory section), or twice what the processes known before load
 * map. WPROF_UNWIND_ROWS=few: 131072 rows (1 MiB), whatever is known.
 */
static __u32 rows_capacity(const struct record_opts *o, size_t known)
{
	size_t n = 2 * known > (8U << 20) ? 2 * known : (8U << 20);

	if (o->few_rows)
		return 1U << 17;
	return n > (64U << 20) ? 64U << 20 : n;
}

static int map_rows(struct session *s)
{
	struct bpf_map *m = s->skel->maps.unwind_rows;
	long page = sysconf(_SC_PAGESIZE);
	void *p;

	if (!s->skel->rodata->cfi_walk)
		return 0;
	s->rows_len = ((size_t)bpf_map__max_entries(m) * sizeof(*s->rows) + page - 1) / page * page;
	p = mmap(NULL, s->rows_len, PROT_READ | PROT_WRITE, MAP_SHARED, bpf_map__fd(m), 0);
	if (p == MAP_FAILED) {
		int err = -errno;

		pr_err("cannot map the unwind table: %s", strerror(-err));
		return err;
	}
	s->rows = p;
	return 0;
}

int session__unwind_maps(struct session *s, struct wprof_unwind_row **rows, __u32 *max_rows,
			 int *procs_fd)
{
	*rows = s->rows;
	*max_rows = s->rows ? bpf_map__max_entries(s->skel->maps.unwind_rows) : 0;
	*procs_fd = bpf_map__fd(s->skel->maps.proc_maps);
	return s->rows ? 0 : -ENOENT;
}

/*
 * Whether to time switches at the entry of __schedule() (see switch_time()
 * in bpf/sched.bpf.c). The stamp costs a program run at every __schedule(),
 * as much as a third of the BPF time of a switch. It buys accuracy only when
 * something runs on sched_switch before wprof's program and takes longer for
 * some switches than for others: another profiler that walks the stacks of
 * its own targets as they leave the CPU delays the switch-ins that follow
 * them and not the rest, moving run time into run-queue time for the threads
 * that come on after its targets. Handlers attached after wprof's run after
 * it; so the BPF programs found on sched_switch now decide, unless
 * WPROF_SWITCH_TIME does. Not called where switches are timed by the run
 * queue's clock (rq_clock_time()): nothing on the tracepoint moves that, and
 * the look at every process's open files is not paid for.
 */
static void choose_switch_time(struct session *s)
{
	struct tphooks hooks;
	int err;

	if (s->opts->switch_time != SWITCH_TIME_AUTO) {
		s->want_entry = s->opts->switch_time == SWITCH_TIME_ENTRY;
		snprintf(s->entry_why, sizeof(s->entry_why), "WPROF_SWITCH_TIME=entry");
		return;
	}
	err = tphooks__find("sched_switch", &hooks);
	if (err) {
		/* not knowing what runs before wprof's program: the safe side */
		s->want_entry = true;
		snprintf(s->entry_why, sizeof(s->entry_why),
			 "the BPF programs on sched_switch could not be listed: %s", strerror(-err));
		return;
	}
	s->want_entry = hooks.nr > 0;
	snprintf(s->entry_why, sizeof(s->entry_why), "%zu other BPF program%s on sched_switch "
		 "run%s before wprof's: %s%s", hooks.nr, hooks.nr == 1 ? "" : "s",
		 hooks.nr == 1 ? "s" : "", hooks.first, hooks.nr > 1 ? ", ..." : "");
}

int session__open(const struct record_opts *opts, size_t unwind_rows, struct session **out)
{
	struct session *s;
	struct btf *kbtf;
	int err;

	libbpf_verbosity = opts->verbose;
	libbpf_set_print(libbpf_print);
	kbtf = load_btf(opts->btf_path);
	if (!kbtf)
		return -errno;
	s = calloc(1, sizeof(*s));
	if (s) {
		s->store = store__new(opts__thread_times(opts));
		s->held = held__new();
		s->blocks = longblocks__new(opts->long_block_ns ? LONG_BLOCKS_MAX : 0);
	}
	if (!s || !s->store || !s->held || !s->blocks) {
		if (s) {
			store__free(s->store);
			held__free(s->held);
			longblocks__free(s->blocks);
		}
		free(s);
		btf__free(kbtf);
		return -ENOMEM;
	}
	s->opts = opts;
	s->stats_fd = -1;
	s->max_rows = rows_capacity(opts, unwind_rows);
	if (!rq_clock_time(opts, kbtf))
		choose_switch_time(s);
	/*
	 * tp_btf is preferred; there is no reliable probe for it (bpftool's says
	 * "no" where it works), so try it and fall back to raw_tp.
	 */
	err = opts->raw_tp ? -EOPNOTSUPP : try_load(s, kbtf, false, true);
	if (err && err != -EPERM && err != -EACCES)
		err = try_load(s, kbtf, true, true);
	/* sleepable task iterators need 5.18: without, no start-edge snapshot */
	if (err && err != -EPERM && err != -EACCES)
		err = try_load(s, kbtf, true, false);
	btf__free(kbtf);
	if (err) {
		if ((err == -EPERM || err == -EACCES) && !geteuid())
			pr_err("the kernel's verifier refused wprof's BPF programs: %s "
			       "(run with -v for its log)", strerror(-err));
		else if (err == -EPERM || err == -EACCES)
			pr_err("loading BPF needs CAP_BPF, CAP_PERFMON and CAP_SYS_RESOURCE "
			       "(run as root)");
		else {
			char msg[128];

			libbpf_strerror(err, msg, sizeof(msg));
			pr_err("cannot load the BPF programs: %s (run with -v for libbpf's log)",
			       msg);
		}
		store__free(s->store);
		held__free(s->held);
		free(s);
		return err;
	}
	err = map_rows(s);
	if (err) {
		session__free(s);
		return err;
	}
	*out = s;
	return 0;
}

void session__gate_until_exec(struct session *s, __u32 tgid)
{
	s->skel->bss->exec_gate_tgid = tgid;
}

static void on_held(void *ctx, const void *data, size_t size)
{
	struct session *s = ctx;
	const struct wprof_held *h = data;
	struct wprof_stack st;

	if (size < sizeof(*h))
		return;
	if (!h->check) {
		held__add(s->held, data, size); /* what it cannot keep, it counts */
		return;
	}
	/* the kernel's walk: in its map still, or drained into the store */
	if (bpf_map_lookup_elem(bpf_map__fd(s->skel->maps.stacks), &h->stack_id, &st) &&
	    store__stack(s->store, h->stack_id, &st))
		return;
	held__add_check(s->held, h, &st);
}

static void on_held_maps(void *ctx, __u32 pid, __u64 start_ticks, struct proc_maps *maps)
{
	struct session *s = ctx;

	if (s->maps_fn)
		s->maps_fn(s->event_ctx, pid, start_ticks, maps);
	else
		procmaps__free(maps);
}

static int on_event(void *ctx, void *data, size_t size)
{
	struct session *s = ctx;
	const struct wprof_event *e = data;

	if (size < sizeof(*e) || !s->event_fn)
		return 0;
	return s->event_fn(e, s->event_ctx);
}

static int on_long_block(void *ctx, void *data, size_t size)
{
	struct session *s = ctx;
	int err;

	if (size < sizeof(struct wprof_long_block))
		return 0;
	err = longblocks__add(s->blocks, data, false);
	if (err && !s->blocks_err)
		s->blocks_err = err;
	return 0;
}

int session__set_event_fn(struct session *s, session_event_fn fn, session_maps_fn maps_fn,
			  void *ctx)
{
	s->event_fn = fn;
	s->maps_fn = maps_fn;
	s->event_ctx = ctx;
	s->events = ring_buffer__new(bpf_map__fd(s->skel->maps.events), on_event, s, NULL);
	if (!s->events)
		return -errno;
	if (s->opts->long_block_ns) {
		s->blocks_rb = ring_buffer__new(bpf_map__fd(s->skel->maps.blocks), on_long_block,
						s, NULL);
		if (!s->blocks_rb)
			return -errno;
	}
	if (!s->skel->rodata->hold_stacks)
		return 0;
	return heldring__start(bpf_map__fd(s->skel->maps.held_stacks), &s->heldring);
}

struct held *session__held(struct session *s)
{
	return s->held;
}

int session__event_fd(const struct session *s)
{
	return s->events ? ring_buffer__epoll_fd(s->events) : -1;
}

int session__held_fd(const struct session *s)
{
	return heldring__ready_fd(s->heldring);
}

void session__take_held(struct session *s)
{
	heldring__take(s->heldring, on_held, on_held_maps, s);
}

int session__consume_events(struct session *s)
{
	int n;

	/*
	 * The held stacks first: an event may have the maps read again, and a
	 * copy taken before it is walked with the maps it replaces (record.c:
	 * snapshot())
	 */
	heldring__take(s->heldring, on_held, on_held_maps, s);
	n = s->events ? ring_buffer__consume(s->events) : 0;
	session__consume_blocks(s);
	return n < 0 ? n : 0;
}

void session__consume_blocks(struct session *s)
{
	if (s->blocks_rb)
		ring_buffer__consume(s->blocks_rb);
}

struct longblocks *session__long_blocks(struct session *s)
{
	return s->blocks;
}

int session__long_blocks_err(const struct session *s)
{
	return s->blocks_err;
}

int session__add_target(struct session *s, __u32 id)
{
	__u8 one = 1;

	if (bpf_map__update_elem(s->skel->maps.targets, &id, sizeof(id), &one, sizeof(one),
				 BPF_ANY))
		return -errno;
	return 0;
}

/* Online CPUs from "0-3,5,7-8". */
static int online_cpus(bool **online, int *nr)
{
	char buf[1024], *p;
	int n = libbpf_num_possible_cpus(), err;

	if (n <= 0)
		return n ? n : -EINVAL;
	*online = calloc(n, sizeof(**online));
	if (!*online)
		return -ENOMEM;
	*nr = n;
	err = read_small_file("/sys/devices/system/cpu/online", buf, sizeof(buf));
	if (err < 0) {
		/* no sysfs: assume every possible CPU is online */
		for (int i = 0; i < n; i++)
			(*online)[i] = true;
		return 0;
	}
	for (p = buf; *p && *p != '\n';) {
		char *end;
		long a = strtol(p, &end, 10), b = a;

		if (end == p)
			break;
		if (*end == '-')
			b = strtol(end + 1, &end, 10);
		for (long i = a; i <= b && i < n; i++)
			(*online)[i] = true;
		p = *end == ',' ? end + 1 : end;
	}
	return 0;
}

static int attach_sampler(struct session *s)
{
	struct perf_event_attr attr = {
		.type = PERF_TYPE_SOFTWARE,
		.size = sizeof(attr),
		.config = PERF_COUNT_SW_CPU_CLOCK,
		/* a fixed period in ns, so that every sample weighs the same */
		.sample_period = NSEC_PER_SEC / s->opts->freq_hz,
	};
	bool *online = NULL;
	int nr = 0, err;

	err = online_cpus(&online, &nr);
	if (err)
		return err;
	s->links = calloc(nr, sizeof(*s->links));
	s->pfds = calloc(nr, sizeof(*s->pfds));
	if (!s->links || !s->pfds) {
		err = -ENOMEM;
		goto out;
	}
	for (int cpu = 0; cpu < nr; cpu++) {
		struct bpf_link *link;
		int fd;

		if (!online[cpu])
			continue;
		fd = syscall(__NR_perf_event_open, &attr, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);
		if (fd < 0) {
			err = -errno;
			pr_err("cannot open a cpu-clock perf event on CPU %d: %s%s", cpu,
			       strerror(-err),
			       err == -EACCES || err == -EPERM ? " (needs CAP_PERFMON; run as root)" :
			       "");
			goto out;
		}
		link = bpf_program__attach_perf_event(s->skel->progs.on_cpu_sample, fd);
		if (!link) {
			err = -errno;
			close(fd);
			pr_err("cannot attach the sampler on CPU %d: %s", cpu, strerror(-err));
			goto out;
		}
		s->pfds[s->nr_links] = fd;
		s->links[s->nr_links++] = link;
	}
out:
	free(online);
	return err;
}

/*
 * Run one of the task iterators of bpf/snapshot.bpf.c over every task: at
 * the window's start (after attach, so that a thread either switched since
 * and has an entry, or is still in the state read here) and at its end
 * (before detach).
 */
static int run_iter(struct session *s, struct bpf_program *prog)
{
	struct bpf_link *link;
	char buf[64];
	int fd, err = 0;

	if (!s->snapshot)
		return 0;
	link = bpf_program__attach_iter(prog, NULL);
	if (!link)
		return -errno;
	fd = bpf_iter_create(bpf_link__fd(link));
	if (fd < 0) {
		err = -errno;
	} else {
		while (read(fd, buf, sizeof(buf)) > 0)
			;
		close(fd);
	}
	bpf_link__destroy(link);
	return err;
}

int session__start(struct session *s)
{
	int err;

	if (s->opts->bpf_stats) {
		s->stats_fd = bpf_enable_stats(BPF_STATS_RUN_TIME);
		if (s->stats_fd < 0)
			pr_err("cannot enable BPF run-time stats: %s; --stats will show nothing",
			       strerror(errno));
	}
	err = wprof_bpf__attach(s->skel);
	if (err) {
		pr_err("cannot attach to the scheduler tracepoints: %s", strerror(-err));
		return err;
	}
	err = attach_sampler(s);
	if (err)
		return err;
	s->running = true;
	/*
	 * The window opens once every program is attached (that takes 4-6 ms
	 * here), so that no switch or wakeup in it goes unseen; what the
	 * programs saw before only told them each thread's state.
	 */
	s->start_ns = now_ns();
	s->skel->bss->window_start_ns = s->start_ns;
	err = run_iter(s, s->skel->progs.snapshot_threads);
	if (err)
		pr_err("cannot snapshot the threads at the window's start: %s", strerror(-err));
	return err;
}

void session__stop(struct session *s)
{
	int err;

	if (!s->running)
		return;
	/*
	 * The window closes before anything is detached (that takes 2-9 ms
	 * here): the programs clip what they see after it to its end, where
	 * user space closes what is still open. Detach everything before the
	 * maps are read, so that nothing writes them then.
	 */
	s->end_ns = now_ns();
	s->skel->bss->window_end_ns = s->end_ns;
	/* the stacks of what is still open, while the programs still see every switch */
	err = run_iter(s, s->skel->progs.snapshot_end);
	if (err)
		pr_err("cannot walk the stacks of the threads blocked at the window's end: %s",
		       strerror(-err));
	for (int i = 0; i < s->nr_links; i++) {
		bpf_link__destroy(s->links[i]);
		close(s->pfds[i]);
		s->links[i] = NULL;
	}
	s->nr_links = 0;
	wprof_bpf__detach(s->skel);
	heldring__stop(s->heldring); /* what is left in its ring: taken by the last consume */
	s->running = false;
	/* everything left in the maps, now that nothing writes them */
	err = session__drain(s, true);
	if (err < 0)
		pr_err("cannot read the recorded data from the BPF maps: %s", strerror(-err));
}

__u64 session__window_start_ns(const struct session *s)
{
	return s->start_ns;
}

__u64 session__window_end_ns(const struct session *s)
{
	return s->end_ns ? s->end_ns : now_ns();
}

const char *session__attach_kind(const struct session *s)
{
	return s->raw_tp ? "raw_tp" : "tp_btf";
}

bool session__steal_time(const struct session *s)
{
	return s->steal_time;
}

bool session__runq_wakeup(const struct session *s)
{
	return s->runq_wakeup;
}

const char *session__switch_timing(const struct session *s, char *buf, size_t size)
{
	if (s->entry_stamp)
		snprintf(buf, size, "switches are timed where __schedule() starts (%s)",
			 s->entry_why);
	else if (s->want_entry && !s->raw_tp)
		snprintf(buf, size, "switches are timed by wprof's sched_switch program, late by "
			 "what runs there before it (%s; this kernel has no sched_entry_tp)",
			 s->entry_why);
	else
		return NULL;
	return buf;
}

int session__set_python(struct session *s, struct pyproc *py)
{
	if (!s->skel->rodata->python_frames)
		return 0;
	s->py = py;
	return pyproc__bind(py, bpf_map__fd(s->skel->maps.py_procs),
			    bpf_map__fd(s->skel->maps.py_codes));
}

struct pyproc *session__python(const struct session *s)
{
	return s->py;
}

void session__free(struct session *s)
{
	if (!s)
		return;
	session__stop(s);
	ring_buffer__free(s->events);
	ring_buffer__free(s->blocks_rb);
	longblocks__free(s->blocks);
	heldring__free(s->heldring);
	if (s->rows)
		munmap(s->rows, s->rows_len);
	wprof_bpf__destroy(s->skel);
	store__free(s->store);
	held__free(s->held);
	if (s->stats_fd >= 0)
		close(s->stats_fd);
	free(s->links);
	free(s->pfds);
	free(s);
}
