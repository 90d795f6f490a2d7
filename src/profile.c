// SPDX-License-Identifier: GPL-2.0-only
/*
 * A recording's lines and per-thread accounting, built from the drained maps:
 * exact on-CPU and off-CPU times per thread, shared out to stacks by samples.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "longblocks.h"
#include "profile.h"
#include "safestr.h"
#include "stackcap.h"
#include "util.h"

/* tag, pid, tid, comm, user + kernel frames of two stacks, "--", waker comm */
#define MAX_FRAMES (6 + 4 * WPROF_MAX_STACK_DEPTH)
#define NAME_LEN SYMBOLIZER_NAME_LEN

/* what wprof writes, report and diff read back whole */
_Static_assert(MAX_FRAMES <= STACKCAP_FRAMES && MAX_FRAMES * NAME_LEN <= STACKCAP_BYTES,
	       "a line wprof writes would be cut when read back");

static const char *const state_tags[WPROF_STATE_CNT] = {
	[WPROF_ON_CPU] = "on-cpu",
	[WPROF_OFF_SLEEP] = "off-cpu:sleep",
	[WPROF_OFF_DISK] = "off-cpu:disk",
	[WPROF_OFF_RUNQ] = "off-cpu:runqueue",
	[WPROF_STEAL] = "steal",
};

/*
 * The time of one output line, kept until all lines of its thread are known:
 * a thread's lines are weighed together (see weigh_group()).
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

static int cmp_tid(const void *a, const void *b)
{
	const struct thread_acct *x = a, *y = b;

	return x->tid < y->tid ? -1 : x->tid > y->tid;
}

/* Threads are sorted by tid, then start_id: one tid may be two threads (pids wrapped). */
static int cmp_thread(const void *a, const void *b)
{
	const struct thread_acct *x = a, *y = b;

	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	return x->start_id < y->start_id ? -1 : x->start_id > y->start_id;
}

static struct thread_acct *find_thread(const struct profile *p, __u32 tid, __u32 start_id)
{
	struct thread_acct key = { .tid = tid, .start_id = start_id };

	return bsearch(&key, p->threads, p->nr_threads, sizeof(key), cmp_thread);
}

static struct thread_acct *new_thread(struct profile *p, __u32 pid, __u32 tid, __u32 start_id)
{
	struct thread_acct *n = realloc(p->threads, (p->nr_threads + 1) * sizeof(*n));

	if (!n)
		return NULL;
	p->threads = n;
	n = &p->threads[p->nr_threads++];
	memset(n, 0, sizeof(*n));
	profile__note_tid(p, tid);
	n->pid = pid;
	n->tid = tid;
	n->start_id = start_id;
	return n;
}

static struct proc_hist *hist_get(struct profile *p, __u32 pid)
{
	struct proc_hist *h;

	for (size_t i = 0; i < p->nr_hists; i++)
		if (p->hists[i].pid == pid)
			return &p->hists[i];
	h = realloc(p->hists, (p->nr_hists + 1) * sizeof(*h));
	if (!h)
		return NULL;
	p->hists = h;
	h = &p->hists[p->nr_hists++];
	memset(h, 0, sizeof(*h));
	h->pid = pid;
	return h;
}

static void hist_add(struct profile *p, __u32 pid, __u64 ns)
{
	struct proc_hist *h = hist_get(p, pid);
	if (h)
		h->slots[wprof_hist_slot(ns / 1000)]++;
}

/*
 * The off-CPU interval a thread still has open at the window's end, split as
 * close_interval() in bpf/sched.bpf.c splits it: the blocked part (0 for a
 * runqueue interval) and the wait for a CPU after it, each clipped to the
 * window (a thread seen only before the window opened kept the times it was
 * seen at). False when no interval is open.
 */
static bool open_interval(const struct wprof_thread *th, const struct session *s, __u64 *blocked,
			  __u64 *runq)
{
	__u64 start = session__window_start_ns(s), end = session__window_end_ns(s);
	__u64 from = th->off_since_ns, split;

	if (th->exit_ns || !from || end <= from || th->off_state > WPROF_OFF_RUNQ)
		return false;
	split = wprof_interval_split(from, end, th->wake_ns, th->off_state);
	from = from < start ? start : from;
	split = split < start ? start : split;
	*blocked = split - from;
	*runq = end - split;
	return true;
}

static bool in_block_range(const struct record_opts *o, __u64 ns)
{
	return ns >= o->min_block_ns && ns <= o->max_block_ns;
}

/* A thread's blocks by length, into its process's histogram. */
static int hist_sum(struct profile *p, const struct wprof_thread *th)
{
	struct proc_hist *h = NULL;

	for (int i = 0; i < WPROF_HIST_SLOTS; i++) {
		if (!th->hist[i])
			continue;
		if (!h && !(h = hist_get(p, th->pid)))
			return -ENOMEM;
		h->slots[i] += th->hist[i];
	}
	return 0;
}

/*
 * A /proc comm file into @buf: the name, any bytes but NUL (a newline in
 * it too: only the one the kernel ends the file with goes). False if none.
 */
static bool read_comm(const char *path, char *buf, size_t size)
{
	int n = read_small_file(path, buf, size);

	if (n <= 0)
		return false;
	if (buf[n - 1] == '\n')
		buf[n - 1] = '\0';
	return true;
}

/*
 * --slice: the thread's time in its last slice (its accumulators), and what
 * is still open at the window's end (its run, or its interval) by slice.
 */
static int collect_times(struct builder *b, const struct wprof_thread *th)
{
	__u64 start = session__window_start_ns(b->s), end = session__window_end_ns(b->s);
	__u64 len = session__slice_ns(b->s), blocked, runq, from, last[WPROF_STATE_CNT];
	struct threadtimes *tt = &b->p->times;
	int err;

	if (!opts__thread_times(b->o))
		return 0;
	thread_time__last(th, last);
	err = threadtimes__add(tt, th->pid, th->tid, th->start_id, th->acc_slice, 1, last);
	if (!err && !th->exit_ns && th->oncpu_since_ns && end > th->oncpu_since_ns) {
		from = th->oncpu_since_ns > start ? th->oncpu_since_ns : start;
		err = threadtimes__add_part(tt, th->pid, th->tid, th->start_id, len, WPROF_ON_CPU,
					    from - start, end - from);
	}
	if (err || !open_interval(th, b->s, &blocked, &runq))
		return err;
	from = th->off_since_ns > start ? th->off_since_ns : start;
	err = threadtimes__add_part(tt, th->pid, th->tid, th->start_id, len, th->off_state,
				    from - start, blocked);
	if (!err)
		err = threadtimes__add_part(tt, th->pid, th->tid, th->start_id, len,
					    WPROF_OFF_RUNQ, from - start + blocked, runq);
	return err;
}

/* Pass 1: the BPF side's exact totals, plus what is still open at the end. */
static int collect_thread(const struct wprof_thread *th, void *ctx)
{
	struct builder *b = ctx;
	__u64 start = session__window_start_ns(b->s), end = session__window_end_ns(b->s);
	struct thread_acct *t = new_thread(b->p, th->pid, th->tid, th->start_id);
	__u64 blocked, runq;

	if (!t)
		return -ENOMEM;
	memcpy(t->comm, th->comm, sizeof(t->comm));
	t->comm[sizeof(t->comm) - 1] = '\0';
	t->on_ns = th->on_ns;
	memcpy(t->off_ns, th->off_ns, sizeof(t->off_ns));
	t->blocks = th->blocks;
	t->max_block_ns = th->max_block_ns;
	memcpy(t->kept_ns, th->kept_ns, sizeof(t->kept_ns));
	t->lost_lines = th->lost_ns > 0;
	if (opts__hists(b->o) && hist_sum(b->p, th))
		return -ENOMEM;
	if (!th->exit_ns && th->oncpu_since_ns && end > th->oncpu_since_ns)
		t->on_ns += end - (th->oncpu_since_ns < start ? start : th->oncpu_since_ns);
	/* the runs' steal (the window-end iterator added the open run's) is not on-CPU */
	if (t->off_ns[WPROF_STEAL] > t->on_ns)
		t->off_ns[WPROF_STEAL] = t->on_ns;
	t->on_ns -= t->off_ns[WPROF_STEAL];
	if (collect_times(b, th))
		return -ENOMEM;
	if (!open_interval(th, b->s, &blocked, &runq))
		return 0;
	if (blocked) {
		t->off_ns[th->off_state] += blocked;
		t->blocks++;
		if (blocked > t->max_block_ns)
			t->max_block_ns = blocked;
		if (opts__hists(b->o))
			hist_add(b->p, th->pid, blocked);
		if (in_block_range(b->o, blocked))
			t->kept_ns[th->off_state] += blocked;
	}
	t->off_ns[WPROF_OFF_RUNQ] += runq;
	if (runq && in_block_range(b->o, runq))
		t->kept_ns[WPROF_OFF_RUNQ] += runq;
	return 0;
}

static void finish_thread(const struct profile *p, const struct record_opts *o,
			  struct thread_acct *t)
{
	/* any thread of tid pid: the name is the process's, whichever it was */
	const struct thread_acct *main = bsearch(&(struct thread_acct){ .tid = t->pid }, p->threads,
						 p->nr_threads, sizeof(*t), cmp_tid);
	char path[64], comm[WPROF_COMM_LEN + 1];

	t->wall_ns = t->on_ns;
	t->on_us = t->wall_us = ns_to_us(t->on_ns);
	for (int k = 1; k < WPROF_STATE_CNT; k++) {
		t->wall_ns += t->off_ns[k];
		t->off_us[k] = ns_to_us(t->off_ns[k]);
		t->wall_us += t->off_us[k];
	}
	if (main && main->comm[0]) {
		memcpy(t->pcomm, main->comm, sizeof(t->pcomm));
	} else {
		snprintf(path, sizeof(path), "/proc/%u/comm", t->pid);
		if (!read_comm(path, comm, sizeof(comm)))
			snprintf(comm, sizeof(comm), "%s", t->comm);
		memcpy(t->pcomm, comm, sizeof(t->pcomm));
		t->pcomm[sizeof(t->pcomm) - 1] = '\0';
	}
	/* before add_count(): sampled_thread() sets samples to 1 for a thread only samples saw */
	t->idle = t->on_ns == 0 && t->off_ns[WPROF_STEAL] == 0 && t->samples == 0;
	t->selected = profile__selects(t, o->thread_glob, o->comm_glob, o->no_idle_threads);
}


/* A thread seen only in samples (it never switched): named from /proc. */
static struct thread_acct *sampled_thread(struct builder *b, __u32 pid, __u32 tid,
					       __u32 start_id)
{
	char path[64], comm[WPROF_COMM_LEN + 1] = "";
	struct thread_acct *t = new_thread(b->p, pid, tid, start_id);

	if (!t)
		return NULL;
	snprintf(path, sizeof(path), "/proc/%u/task/%u/comm", pid, tid);
	if (!read_comm(path, comm, sizeof(comm)))
		snprintf(comm, sizeof(comm), "tid-%u", tid);
	snprintf(t->comm, sizeof(t->comm), "%s", comm);
	t->samples = 1; /* so that --no-idle-threads keeps it */
	finish_thread(b->p, b->o, t);
	t->samples = 0;
	qsort(b->p->threads, b->p->nr_threads, sizeof(*t), cmp_thread);
	return find_thread(b->p, tid, start_id);
}

/* The frame a user walk that stopped early ends with (see enum wprof_cut). */
static const char *cut_name(__u64 ip)
{
	static const char *const names[WPROF_CUT_CNT] = {
		[WPROF_CUT_NO_TABLE] = "[frame pointers only: code not loaded yet]",
		[WPROF_CUT_NO_CODE] = "[cut: return address not in code]",
		[WPROF_CUT_BAD_RULE] = "[cut: unsupported unwind rule]",
		[WPROF_CUT_READ] = "[cut: stack unreadable]",
		[WPROF_CUT_LOOP] = "[cut: stack loops]",
		[WPROF_CUT_DEPTH] = "[cut: too deep]",
		[WPROF_CUT_COPY] = "[cut: past the stack copied]",
	};
	__u64 cut = ip - WPROF_FRAME_CUT;

	return cut < WPROF_CUT_CNT && names[cut] ? names[cut] : "[cut]";
}

static bool is_tracing_frame(const char *name)
{
	static const char *const prefixes[] = {
		"bpf_prog_", "bpf_trace_run", "__bpf_trace_", "__traceiter_", "trace_call_bpf",
	};

	for (size_t i = 0; i < ARRAY_SIZE(prefixes); i++)
		if (!strncmp(name, prefixes[i], strlen(prefixes[i])))
			return true;
	return false;
}

static char *next_name(struct builder *b)
{
	return b->nr < MAX_FRAMES ? b->names[b->nr++] : NULL;
}

static void put_name(struct builder *b, const char *name)
{
	char *n = next_name(b);

	if (n)
		snprintf(n, NAME_LEN, "%s", name);
}

/*
 * Note that the frames @names[0..@n) of @pid came from @so (NULL: no file's),
 * as the lines will hold them. Failing (ENOMEM) only costs pprof a mapping.
 */
static void note_origin(struct builder *b, __u32 pid, char (*names)[NAME_LEN], int n,
			const struct sym_origin *so)
{
	char clean[SAFESTR_SIZE(NAME_LEN)];

	if (!so || !opts__frame_origins(b->o))
		return;
	if (so != b->last_origin) {
		b->last_idx = origins__add(&b->p->origins, so->path, so->build_id);
		b->last_origin = b->last_idx < 0 ? NULL : so;
	}
	if (b->last_idx < 0)
		return;
	for (int i = 0; i < n; i++) {
		folded__sanitize(clean, sizeof(clean), names[i]);
		origins__note(&b->p->origins, pid, clean, strlen(clean), b->last_idx);
	}
}

/*
 * A user frame and the calls inlined at it, as frames of their own: the
 * outer function first when root first. Returns symbolizer__user()'s
 * verdict on the outer name, or -1 when nothing fit.
 */
static int add_inlined(struct builder *b, __u32 pid, __u64 ip, bool leaf_first)
{
	int room = MAX_FRAMES - (int)b->nr, n, ret;
	char name[NAME_LEN];

	if (room <= 0)
		return -1;
	n = symbolizer__user_frames(b->sym, pid, ip, true, &b->names[b->nr], room);
	if (n <= 0)
		return -1;
	if (leaf_first) /* the innermost call first */
		for (int i = 0; i < n / 2; i++) {
			memcpy(name, b->names[b->nr + i], NAME_LEN);
			memcpy(b->names[b->nr + i], b->names[b->nr + n - 1 - i], NAME_LEN);
			memcpy(b->names[b->nr + n - 1 - i], name, NAME_LEN);
		}
	ret = symbolizer__user(b->sym, pid, ip, name, sizeof(name));
	note_origin(b, pid, &b->names[b->nr], n, symbolizer__user_origin(b->sym, pid, ip));
	b->nr += n;
	return ret;
}

/*
 * Append the names of stack `id` (leaf first in the map), root first unless
 * `leaf_first`. Return addresses point after the call: name ip - 1 so a call
 * at a function's end is not given to the next function.
 */
static void add_stack(struct builder *b, __u32 pid, __u64 id, bool kernel, bool leaf_first)
{
	struct wprof_stack *st = &b->stack;
	int first = 0;

	if (!id)
		return;
	if (session__stack(b->s, id, !kernel, st)) {
		b->p->stacks_missing++;
		return;
	}
	if (kernel) {
		/* the tracing machinery sits at the leaf of switch-time stacks */
		for (; first < (int)st->nr; first++) {
			char name[NAME_LEN];

			symbolizer__kernel(b->sym, st->ips[first], name, sizeof(name));
			if (!is_tracing_frame(name))
				break;
		}
	}
	for (int n = 0; n < (int)st->nr - first && b->nr < MAX_FRAMES; n++) {
		int i = leaf_first ? first + n : (int)st->nr - 1 - n;
		__u64 ip = st->ips[i] - (i > first ? 1 : 0);
		char *name = b->names[b->nr];
		int ret;

		if (kernel) {
			/*
			 * The kernel leaves the scheduler and lock code out of
			 * a sleeping task's stack (threads blocked when the
			 * window opens): leave it out of every stack, so that
			 * one wait is one stack.
			 */
			if (symbolizer__kernel_is_sched(b->sym, st->ips[i]))
				continue;
			ret = symbolizer__kernel(b->sym, ip, name, NAME_LEN - 4);
			strcat(name, "_[k]");
			note_origin(b, ORIGIN_ANY_PID, &b->names[b->nr], 1,
				    symbolizer__kernel_origin(b->sym));
		} else if (WPROF_IS_HELD(st->ips[i])) {
			continue; /* not one of session__stack()'s: never a frame */
		} else if (st->ips[i] >= WPROF_FRAME_CUT) {
			snprintf(name, NAME_LEN, "%s", cut_name(st->ips[i]));
			b->nr++;
			continue;
		} else if (b->o->inlines) {
			ret = add_inlined(b, pid, ip, leaf_first);
			if (ret < 0)
				continue;
			b->p->frames_total++;
			b->p->frames_unnamed += ret != 0;
			continue;
		} else {
			ret = symbolizer__user(b->sym, pid, ip, name, NAME_LEN);
			note_origin(b, pid, &b->names[b->nr], 1,
				    symbolizer__user_origin(b->sym, pid, ip));
		}
		b->p->frames_total++;
		if (ret != 0)
			b->p->frames_unnamed++;
		b->nr++;
	}
}

static const char *tag_of(const struct record_opts *o, __u32 state)
{
	/* --no-states folds the off-CPU states; steal is none of them */
	return state != WPROF_ON_CPU && state != WPROF_STEAL && o->no_states ? "off-cpu" :
										 state_tags[state];
}

/* Start a line: TAG (unless at the leaf), [PID, TID for json], COMM, stacks. */
static void begin(struct builder *b, const struct wprof_key *k, const struct thread_acct *t)
{
	char num[16];

	b->nr = 0;
	if (!b->o->tag_leaf)
		put_name(b, tag_of(b->o, k->state));
	if (opts__line_ids(b->o)) {
		snprintf(num, sizeof(num), "%u", k->pid);
		put_name(b, num);
		snprintf(num, sizeof(num), "%u", k->tid);
		put_name(b, num);
	}
	put_name(b, t->comm);
	add_stack(b, k->pid, k->ustack_id, false, false);
	add_stack(b, k->pid, k->kstack_id, true, false);
}

/* End a line and add it, its time in the slices its key says (none: not known). */
static int end(struct builder *b, const struct wprof_key *k, size_t prefix, __u64 us,
	       __u64 count, __u64 max_us)
{
	const char *frames[MAX_FRAMES];
	struct folded_piece piece = {
		.slice = k->slice, .span = k->span, .weight = us, .count = count, .max = max_us,
	};

	if (b->nr == prefix)
		put_name(b, "[no stack]");
	if (b->o->tag_leaf)
		put_name(b, tag_of(b->o, k->state));
	for (size_t i = 0; i < b->nr; i++)
		frames[i] = b->names[i];
	return folded__add_piece(b->out, frames, b->nr, &piece);
}

static size_t prefix_len(const struct builder *b)
{
	return !b->o->tag_leaf + 1 + (opts__line_ids(b->o) ? 2 : 0);
}

static struct thread_acct *thread_of(struct builder *b, const struct wprof_key *k)
{
	struct thread_acct *t = find_thread(b->p, k->tid, k->start_id);

	return t ? t : sampled_thread(b, k->pid, k->tid, k->start_id);
}

/* Pass 2: every line's time, weighed later; nothing is symbolized yet. */
static int add_line(struct builder *b, const struct wprof_key *k,
		    const struct wprof_wake_key *wk, __u64 count, __u64 ns, __u64 max_ns)
{
	const struct wprof_key *key = wk ? &wk->blocked : k;
	struct thread_acct *t = find_thread(b->p, key->tid, key->start_id);
	struct line *l;

	if (b->nr_lines == b->cap_lines) {
		size_t cap = b->cap_lines ? 2 * b->cap_lines : 1024;

		l = realloc(b->lines, cap * sizeof(*l));
		if (!l)
			return -ENOMEM;
		b->lines = l;
		b->cap_lines = cap;
	}
	l = &b->lines[b->nr_lines++];
	memset(l, 0, sizeof(*l));
	if (wk)
		l->k = *wk;
	else
		l->k.blocked = *k;
	l->wake = wk != NULL;
	l->count = count;
	l->ns = ns;
	l->exact_ns = ns;
	l->max_ns = max_ns;
	if (t && key->state < WPROF_STATE_CNT)
		t->has_lines[key->state] = true;
	return 0;
}

/* A map value's line: off-CPU intervals walked as a sample stand for more. */
static int add_val_line(struct builder *b, const struct wprof_key *k,
			const struct wprof_wake_key *wk, const struct wprof_val *v)
{
	const struct wprof_key *key = wk ? &wk->blocked : k;
	__u64 count = v->count;
	int err;

	if (key->state != WPROF_ON_CPU)
		count = (v->weight + WPROF_WEIGHT_ONE / 2) >> WPROF_WEIGHT_SHIFT;
	err = add_line(b, k, wk, count, v->total_ns, v->max_ns);
	if (!err && key->state != WPROF_ON_CPU) {
		b->lines[b->nr_lines - 1].exact_ns = v->exact_ns < v->total_ns ? v->exact_ns :
										v->total_ns;
		if (v->weight != v->count * WPROF_WEIGHT_ONE)
			b->lines[b->nr_lines - 1].estimated = true;
	}
	return err;
}

static int add_count(const struct wprof_key *k, const struct wprof_val *v, void *ctx)
{
	struct builder *b = ctx;
	struct thread_acct *t;

	/* a thread's exact time by slice: no line of its own */
	if (k->state == WPROF_KEY_TIME)
		return threadtimes__add(&b->p->times, k->pid, k->tid, k->start_id, k->slice,
					k->span, ((const struct wprof_time *)v)->ns);
	t = find_thread(b->p, k->tid, k->start_id);

	/*
	 * Its lines are made (its row may be gone since, profile__compact()):
	 * cannot happen, see store__take_ended()
	 */
	if ((t && t->retired) || (!t && profile__dropped(b->p, k->tid, k->start_id))) {
		b->p->late_keys++;
		return 0;
	}
	if (!t && !(t = sampled_thread(b, k->pid, k->tid, k->start_id)))
		return -ENOMEM;
	if (k->state >= WPROF_STATE_CNT || !t->selected)
		return 0;
	if (k->state == WPROF_ON_CPU)
		t->samples += v->count;
	/* steal a sample measured at its stacks: time, not samples (add_steal() has those) */
	if (k->state == WPROF_STEAL)
		return add_line(b, k, NULL, 0, v->total_ns, v->max_ns);
	return add_val_line(b, k, NULL, v);
}

/* --wakers: blocked time whose waker is known, in lines of their own. */
static int add_wake(const struct wprof_wake_key *k, const struct wprof_val *v, void *ctx)
{
	struct builder *b = ctx;
	struct thread_acct *t = thread_of(b, &k->blocked);

	if (!t)
		return -ENOMEM;
	if (t->retired) {
		b->p->late_keys++;
		return 0;
	}
	if (k->blocked.state >= WPROF_STATE_CNT || !t->selected)
		return 0;
	return add_val_line(b, NULL, k, v);
}

/* The part of an interval open at the window's end, @ns from @from on, in its slices. */
static int add_open_part(struct builder *b, struct wprof_key *k, __u64 from, __u64 ns)
{
	struct slice_part pc[3] = { { 0, 1, ns } };
	__u64 start = session__window_start_ns(b->s);
	int n = 1, err = 0;

	if (session__slice_ns(b->s))
		n = slices__split(session__slice_ns(b->s), from > start ? from - start : 0, ns, pc);
	for (int i = 0; i < n && !err; i++) {
		bool last = i == n - 1;

		k->slice = pc[i].slice;
		k->span = pc[i].span;
		err = add_line(b, k, NULL, last, pc[i].ns, last ? ns : 0);
	}
	return err;
}

/*
 * A long block still going at the window's end, with the stacks of @k: one
 * that began in the window (a thread blocked all along is idle, said so).
 */
static int add_open_block(struct builder *b, const struct wprof_thread *th,
			  const struct wprof_key *k, __u64 blocked, __u64 runq)
{
	struct wprof_long_block lb = {
		.pid = th->pid, .tid = th->tid, .start_id = th->start_id, .state = th->off_state,
		.start = th->off_since_ns, .ns = { blocked, runq },
		.ustack_id = k->ustack_id, .kstack_id = k->kstack_id,
	};
	struct longblocks *all = session__long_blocks(b->s);

	/* as the BPF side keeps them: of an interval one of whose parts the filters keep */
	if (!b->o->long_block_ns || blocked + runq < b->o->long_block_ns ||
	    th->off_since_ns <= session__window_start_ns(b->s) ||
	    !((blocked && in_block_range(b->o, blocked)) || (runq && in_block_range(b->o, runq))))
		return 0;
	return longblocks__add(all, &lb, true);
}

/*
 * Part @i (blocked, then waiting for a CPU) of a walked interval whose user
 * stack recording stopped before, from @from on, by slice as the BPF side
 * splits it (its last piece counts it).
 */
static int add_pending_part(struct builder *b, struct wprof_key *k,
			    const struct wprof_interval *iv, __u64 from, int i)
{
	struct slice_part pc[3] = { { 0, 1, iv->ns[i] } };
	__u64 start = session__window_start_ns(b->s);
	int n = 1, err = 0;

	if (session__slice_ns(b->s))
		n = slices__split(session__slice_ns(b->s), from > start ? from - start : 0, iv->ns[i], pc);
	for (int j = 0; j < n && !err; j++) {
		bool last = j == n - 1;
		struct wprof_val v = {
			.count = last,
			.weight = last ? iv->weight : 0,
			.max_ns = last ? iv->ns[i] : 0,
			.total_ns = (pc[j].ns * iv->weight) >> WPROF_WEIGHT_SHIFT,
			.exact_ns = iv->weight == WPROF_WEIGHT_ONE ? pc[j].ns : 0,
		};

		k->slice = pc[j].slice;
		k->span = pc[j].span;
		err = add_val_line(b, k, NULL, &v);
	}
	return err;
}

/* A long block walked but for its user stack, which recording stopped before. */
static int add_pending_block(struct builder *b, const struct wprof_thread *th)
{
	struct wprof_long_block lb = {
		.pid = th->pid, .tid = th->tid, .start_id = th->start_id, .state = th->pend.state,
		.start = th->pend.start, .ns = { th->pend.ns[0], th->pend.ns[1] },
		.kstack_id = th->pend.kstack_id,
	};

	if (!b->o->long_block_ns || long_block__ns(&lb) < b->o->long_block_ns)
		return 0;
	return longblocks__add(session__long_blocks(b->s), &lb, false);
}

/*
 * The intervals still open at the window's end, with the stacks walked for
 * them then (bpf/snapshot.bpf.c) if the thread did not run meanwhile; and
 * walked intervals whose user stack was left to a syscall exit that did not
 * come before the programs were detached (counted).
 */
static int add_open(const struct wprof_thread *th, void *ctx)
{
	struct builder *b = ctx;
	struct thread_acct *t = find_thread(b->p, th->tid, th->start_id);
	struct wprof_key k = {
		.pid = th->pid, .tid = th->tid, .start_id = th->start_id,
		.ustack_id = th->walk & WPROF_WALK_USER ? th->ustack_id : 0,
		.kstack_id = th->walk & WPROF_WALK_KERNEL ? th->kstack_id : 0,
	};
	__u64 blocked, runq, from, start = session__window_start_ns(b->s);
	int err = 0;

	if (!t || !t->selected)
		return 0;
	if (th->pend.start) {
		b->p->pending_lost++;
		k.ustack_id = 0;
		k.kstack_id = th->pend.kstack_id;
		err = add_pending_block(b, th);
		from = th->pend.start > start ? th->pend.start : start;
		for (int i = 0; i < 2 && !err; i++) {
			k.state = i ? WPROF_OFF_RUNQ : th->pend.state;
			if (th->pend.ns[i] && in_block_range(b->o, th->pend.ns[i]))
				err = add_pending_part(b, &k, &th->pend, from, i);
			from += th->pend.ns[i];
		}
	}
	if (err || !open_interval(th, b->s, &blocked, &runq))
		return err;
	if (th->end_gen && th->end_gen == th->off_since_ns) {
		k.ustack_id = th->end_ustack_id;
		k.kstack_id = th->end_kstack_id;
	} else if ((th->walk & (WPROF_WALK_USER | WPROF_WALK_KERNEL)) !=
		   (WPROF_WALK_USER | WPROF_WALK_KERNEL)) {
		b->p->open_unwalked++;
	}
	err = add_open_block(b, th, &k, blocked, runq);
	from = th->off_since_ns > start ? th->off_since_ns : start;
	if (!err && blocked && in_block_range(b->o, blocked)) {
		k.state = th->off_state;
		err = add_open_part(b, &k, from, blocked);
	}
	k.state = WPROF_OFF_RUNQ;
	if (!err && runq && in_block_range(b->o, runq))
		err = add_open_part(b, &k, from + blocked, runq);
	return err;
}

static int cmp_line(const void *a, const void *b);

/* The steal line of key `k` that samples measured (sorted lines, before `n`); NULL: none. */
static struct line *measured_steal(struct builder *b, size_t n, const struct wprof_key *k)
{
	struct line want;

	memset(&want, 0, sizeof(want)); /* compared whole, padding too */
	want.k.blocked = *k;
	want.k.blocked.state = WPROF_STEAL;
	return n ? bsearch(&want, b->lines, n, sizeof(want), cmp_line) : NULL;
}

/*
 * A thread's steal lines: those samples measured (bpf/thread.bpf.h:
 * steal_sample()), one per key, and one for each of its other on-CPU stacks
 * for the rest of its steal. Each has the samples of its stacks (count): a
 * line of one sample is one sample's, whole; weigh_group() shares the rest
 * out by them.
 */
static int add_steal(struct builder *b)
{
	size_t n = 0, i;

	/* no thread with steal (a machine without): no steal line to make or merge */
	for (i = 0; i < b->p->nr_threads && !b->p->threads[i].off_us[WPROF_STEAL]; i++)
		;
	if (i == b->p->nr_threads)
		return 0;
	/* the measured ones, sorted and one per key (a key comes once per drain of the maps) */
	if (b->nr_lines)
		qsort(b->lines, b->nr_lines, sizeof(*b->lines), cmp_line);
	for (size_t i = 0; i < b->nr_lines; i++) {
		struct line *l = &b->lines[i], *last = n ? &b->lines[n - 1] : NULL;

		if (last && !l->wake && !last->wake && l->k.blocked.state == WPROF_STEAL &&
		    !memcmp(&l->k.blocked, &last->k.blocked, sizeof(l->k.blocked))) {
			last->ns += l->ns;
			last->exact_ns += l->exact_ns;
			if (l->max_ns > last->max_ns)
				last->max_ns = l->max_ns;
			continue;
		}
		b->lines[n++] = *l;
	}
	b->nr_lines = n;
	for (size_t i = 0; i < n; i++) {
		struct wprof_key k = b->lines[i].k.blocked;
		const struct thread_acct *t;
		struct line *m;
		int err;

		if (b->lines[i].wake || k.state != WPROF_ON_CPU)
			continue;
		t = find_thread(b->p, k.tid, k.start_id);
		if (!t || t->retired || !t->off_us[WPROF_STEAL])
			continue;
		m = measured_steal(b, n, &k);
		if (m) {
			m->count += b->lines[i].count;
			continue;
		}
		k.state = WPROF_STEAL;
		err = add_line(b, &k, NULL, b->lines[i].count, 0, 0);
		if (err)
			return err;
	}
	return 0;
}

/* Off-CPU time of a thread and state none of whose intervals was walked. */
static int add_unwalked(struct builder *b)
{
	for (size_t i = 0; i < b->p->nr_threads; i++) {
		const struct thread_acct *t = &b->p->threads[i];

		for (int s = WPROF_OFF_SLEEP; s <= WPROF_OFF_RUNQ && t->selected && !t->retired; s++) {
			struct wprof_key k = {
				.pid = t->pid, .tid = t->tid, .start_id = t->start_id, .state = s,
			};
			int err;

			if (t->has_lines[s] || !ns_to_us(t->kept_ns[s]))
				continue;
			err = add_line(b, &k, NULL, 0, t->kept_ns[s], 0);
			if (err)
				return err;
			b->lines[b->nr_lines - 1].unwalked = true;
			b->p->unwalked_groups++;
			b->p->unwalked_us += ns_to_us(t->kept_ns[s]);
		}
	}
	return 0;
}

/* Lines by thread and state; within those by key, so ties split the same way every time. */
static int cmp_line(const void *a, const void *b)
{
	const struct line *x = a, *y = b;
	const struct wprof_key *kx = &x->k.blocked, *ky = &y->k.blocked;

	if (kx->tid != ky->tid)
		return kx->tid < ky->tid ? -1 : 1;
	if (kx->start_id != ky->start_id)
		return kx->start_id < ky->start_id ? -1 : 1;
	if (kx->state != ky->state)
		return kx->state < ky->state ? -1 : 1;
	if (x->wake != y->wake)
		return x->wake ? 1 : -1;
	return memcmp(&x->k, &y->k, sizeof(x->k));
}

/*
 * The shares of a thread's steal lines: the steal samples measured at a
 * line's stacks (its ns), and the rest of the thread's steal split by the
 * samples of the lines add_steal() made (count).
 */
static void steal_shares(const struct thread_acct *t, const struct line *l, size_t n,
			 __u64 samples, __u64 *shares)
{
	__u64 measured = 0, total = t ? t->off_us[WPROF_STEAL] * 1000 : 0, rest;

	for (size_t i = 0; i < n; i++)
		measured += l[i].ns;
	rest = total > measured ? total - measured : 0;
	for (size_t i = 0; i < n; i++)
		shares[i] = l[i].ns + (samples ? (__u64)((double)rest * l[i].count / samples) : 0);
}

/*
 * Weigh the `n` lines of one thread and state in whole us that add up
 * exactly, rounding by largest remainder (see util.h):
 * - on-CPU: the thread's exact on-CPU time, split by samples: sampling only
 *   tells where the time went, the switch events tell how much there was.
 *   A thread with samples but no switch-timed time (its entry was lost)
 *   falls back to a sampling period per sample.
 * - off-CPU: each line its own time, rounded so that the lines sum to their
 *   total rounded once, not line by line. Where intervals were walked as a
 *   sample (--exact-above), the lines' weighed times are estimates: they are
 *   scaled to the exact time of the thread in that state.
 * `max_us` is what one sample weighs (on-CPU) or the longest interval,
 * rounded down (off-CPU); the whole weight when the line is one sample or
 * interval.
 */
static int weigh_group(struct builder *b, struct line *l, size_t n, __u64 *shares,
		       __u64 *parts)
{
	const struct thread_acct *t = find_thread(b->p, l->k.blocked.tid, l->k.blocked.start_id);
	__u32 state = l->k.blocked.state;
	/* steal as on-CPU time is, by samples, but for what they measured (steal_shares()) */
	bool on = state == WPROF_ON_CPU || state == WPROF_STEAL;
	__u64 samples = 0, total = 0, one = 0, exact = 0, estimated = 0;
	int err;

	for (size_t i = 0; i < n; i++) {
		shares[i] = on ? l[i].count : l[i].ns;
		samples += l[i].count;
		b->p->estimated_lines += l[i].estimated;
		exact += on ? 0 : l[i].exact_ns;
		estimated += on ? 0 : l[i].ns - l[i].exact_ns;
	}
	if (state == WPROF_STEAL)
		steal_shares(t, l, n, samples, shares);
	/*
	 * The exact parts keep their time; what the intervals walked as a
	 * sample stand for (the rest of the thread's time in the state) is
	 * shared out among them by their weighed time.
	 */
	if (!on && t && estimated && t->kept_ns[state] > exact) {
		double scale = (double)(t->kept_ns[state] - exact) / estimated;

		for (size_t i = 0; i < n; i++)
			shares[i] = l[i].exact_ns + (__u64)((l[i].ns - l[i].exact_ns) * scale);
	}
	if (state == WPROF_STEAL) {
		total = t ? t->off_us[WPROF_STEAL] : 0;
	} else if (on && t && (t->on_ns || t->off_ns[WPROF_STEAL])) {
		total = t->on_us;
	} else if (on) {
		total = ns_to_us(samples * b->p->period_ns);
		b->p->untimed_threads += samples > 0;
	} else if (t) {
		/*
		 * The walked intervals' (weighed) time, scaled to the exact
		 * time they stand for: with intervals walked as a sample, and
		 * the short ones not walked, the lines are estimates.
		 */
		total = ns_to_us(t->kept_ns[state]);
	}
	if (on && samples)
		one = total / samples;
	err = on || t ? apportion(total, shares, n, parts) : round_ns_to_us(shares, n, parts);
	if (err)
		return err;
	/*
	 * An off-CPU line may be a piece of its intervals (the part in one
	 * slice): their whole length is its max; the folded line it goes to
	 * keeps its max within its weight.
	 */
	for (size_t i = 0; i < n; i++) {
		l[i].us = parts[i];
		l[i].max_us = on ? (l[i].count == 1 ? parts[i] : one) : l[i].max_ns / 1000;
		if (on && l[i].max_us > l[i].us)
			l[i].max_us = l[i].us;
	}
	return 0;
}

static int weigh_lines(struct builder *b)
{
	__u64 *shares = malloc((b->nr_lines + 1) * sizeof(*shares));
	__u64 *parts = malloc((b->nr_lines + 1) * sizeof(*parts));
	int err = 0;

	if (!shares || !parts) {
		err = -ENOMEM;
		goto out;
	}
	/* no lines (a command that exited at once): qsort() of NULL is undefined */
	if (b->nr_lines)
		qsort(b->lines, b->nr_lines, sizeof(*b->lines), cmp_line);
	for (size_t i = 0, j; i < b->nr_lines && !err; i = j) {
		const struct wprof_key *k = &b->lines[i].k.blocked;

		for (j = i + 1; j < b->nr_lines && b->lines[j].k.blocked.tid == k->tid &&
				b->lines[j].k.blocked.start_id == k->start_id &&
				b->lines[j].k.blocked.state == k->state; j++)
			;
		err = weigh_group(b, &b->lines[i], j - i, shares, parts);
	}
out:
	free(shares);
	free(parts);
	return err;
}

/* Pass 3: symbolize every line and add it with its weight. */
static int emit_line(struct builder *b, const struct line *l)
{
	const struct wprof_wake_key *k = &l->k;
	const struct thread_acct *t = find_thread(b->p, k->blocked.tid, k->blocked.start_id);
	char comm[WPROF_COMM_LEN + 1];

	if (!t)
		return -ENOENT; /* every line's thread was found or made when it was added */
	begin(b, &k->blocked, t);
	if (l->unwalked)
		put_name(b, t->lost_lines ? "[stacks lost: map full]" : "[not walked]");
	if (!l->wake)
		/* steal a sample measured that rounds to nothing: no line of count 0 */
		return l->us || l->count || k->blocked.state != WPROF_STEAL ?
			       end(b, &k->blocked, prefix_len(b), l->us, l->count, l->max_us) : 0;
	/* the blocked stack, "--", the waker's stacks leaf first, its name */
	if (b->nr == prefix_len(b))
		put_name(b, "[no stack]");
	put_name(b, "--");
	add_stack(b, 0, k->waker_kstack_id, true, true);
	add_stack(b, k->waker_pid, k->waker_ustack_id, false, true);
	memcpy(comm, k->waker_comm, WPROF_COMM_LEN);
	comm[WPROF_COMM_LEN] = '\0';
	put_name(b, comm);
	return end(b, &k->blocked, 0, l->us, l->count, l->max_us);
}

/*
 * A thread that ran without being sampled (shorter than a sampling period,
 * or unlucky) still shows its on-CPU time: count 0, no stack.
 */
static int emit_unsampled(struct builder *b, const struct thread_acct *t)
{
	struct wprof_key k = {
		.pid = t->pid, .tid = t->tid, .start_id = t->start_id, .state = WPROF_ON_CPU,
	};
	int err = 0;

	b->p->unsampled_threads++;
	b->p->unsampled_us += t->on_us + t->off_us[WPROF_STEAL];
	for (int i = 0; i < 2 && !err; i++) {
		__u64 us = i ? t->off_us[WPROF_STEAL] : t->on_us;

		k.state = i ? WPROF_STEAL : WPROF_ON_CPU;
		if (!us)
			continue;
		begin(b, &k, t);
		put_name(b, "[unsampled]");
		err = end(b, &k, prefix_len(b), us, 0, 0);
	}
	return err;
}

void profile__init(struct profile *p, const struct record_opts *o)
{
	memset(p, 0, sizeof(*p));
	p->period_ns = NSEC_PER_SEC / o->freq_hz;
}

/* The threads not retired yet (all of them at first), sorted and finished. */
static void finish_threads(struct builder *b)
{
	struct profile *p = b->p;

	if (p->nr_threads)
		qsort(p->threads, p->nr_threads, sizeof(*p->threads), cmp_thread);
	for (size_t i = 0; i < p->nr_threads; i++)
		if (!p->threads[i].retired)
			finish_thread(p, b->o, &p->threads[i]);
}

/* The names b->names[from..b->nr), sanitized and joined by ';', into a new string. */
static char *join_names(struct builder *b, size_t from)
{
	char clean[SAFESTR_SIZE(NAME_LEN)];
	size_t len = 0, n;
	char *out = NULL, *grown;

	for (size_t i = from; i < b->nr; i++) {
		folded__sanitize(clean, sizeof(clean), b->names[i]);
		n = strlen(clean);
		grown = realloc(out, len + n + 2);
		if (!grown) {
			free(out);
			return NULL;
		}
		out = grown;
		if (len)
			out[len++] = ';';
		memcpy(out + len, clean, n + 1);
		len += n;
	}
	return out;
}

/*
 * A long block's frames, as its line has them (no tag, no name), and its
 * waker's. Not counted in the frame counters: its line's frames are.
 */
static int resolve_block(struct builder *b, struct long_block *lb)
{
	const struct wprof_long_block *k = &lb->b;
	__u64 total = b->p->frames_total, unnamed = b->p->frames_unnamed;
	__u64 missing = b->p->stacks_missing;
	char comm[WPROF_COMM_LEN + 1];

	symbolizer__quiet(b->sym, true);
	b->nr = 0;
	add_stack(b, k->pid, k->ustack_id, false, false);
	add_stack(b, k->pid, k->kstack_id, true, false);
	if (!b->nr)
		put_name(b, "[no stack]");
	lb->stack = join_names(b, 0);
	if (lb->stack && (k->waker_ustack_id || k->waker_kstack_id)) {
		b->nr = 0;
		add_stack(b, 0, k->waker_kstack_id, true, true);
		add_stack(b, k->waker_pid, k->waker_ustack_id, false, true);
		memcpy(comm, k->waker_comm, WPROF_COMM_LEN);
		comm[WPROF_COMM_LEN] = '\0';
		put_name(b, comm);
		lb->waker = join_names(b, 0);
	}
	symbolizer__quiet(b->sym, false);
	b->p->frames_total = total;
	b->p->frames_unnamed = unnamed;
	b->p->stacks_missing = missing;
	lb->resolved = true;
	return lb->stack ? 0 : -ENOMEM;
}

/*
 * Name the long blocks of the threads whose lines are being made (all of
 * them: @all), while their processes' files are still known; leave out
 * those of threads not selected.
 */
static int resolve_blocks(struct builder *b, bool all)
{
	struct longblocks *lbs = session__long_blocks(b->s);
	int err = 0;

	session__consume_blocks(b->s);
	for (size_t i = 0; i < longblocks__nr(lbs) && !err; i++) {
		struct long_block *lb = longblocks__at(lbs, i);
		const struct thread_acct *t = find_thread(b->p, lb->b.tid, lb->b.start_id);

		if (lb->resolved || lb->gone || (!all && (!t || t->retired)))
			continue;
		if (t && !t->selected) {
			lb->gone = true;
			continue;
		}
		if (t)
			memcpy(lb->comm, t->comm, sizeof(lb->comm));
		else
			snprintf(lb->comm, sizeof(lb->comm), "tid-%u", lb->b.tid);
		err = resolve_block(b, lb);
	}
	longblocks__sweep(lbs);
	return err;
}

/* Weigh and symbolize the lines added, then the threads that ran unsampled; retire them all. */
static int emit_all(struct builder *b, bool all)
{
	struct profile *p = b->p;
	int err = add_unwalked(b);

	if (!err)
		err = add_steal(b);
	if (!err)
		err = weigh_lines(b);
	for (size_t i = 0; i < b->nr_lines && !err; i++)
		err = emit_line(b, &b->lines[i]);
	if (!err)
		err = resolve_blocks(b, all);
	for (size_t i = 0; i < p->nr_threads && !err; i++) {
		struct thread_acct *t = &p->threads[i];

		if (t->retired)
			continue;
		if (t->selected && profile__ran_unsampled(t))
			err = emit_unsampled(b, t);
		t->retired = true;
	}
	return err;
}

static int builder_init(struct builder *b, struct profile *p, struct session *s,
			struct symbolizer *sym, const struct record_opts *o, struct folded *out)
{
	*b = (struct builder){ .p = p, .s = s, .sym = sym, .o = o, .out = out };
	b->names = calloc(MAX_FRAMES, NAME_LEN);
	return b->names ? 0 : -ENOMEM;
}

static void builder_free(struct builder *b)
{
	free(b->lines);
	free(b->names);
}

/* store__take_ended() hands over ended threads (collect_thread()), then their keys. */
static int retire_count(const struct wprof_key *k, const struct wprof_val *v, void *ctx)
{
	struct builder *b = ctx;

	if (!b->finished) {
		finish_threads(b);
		b->finished = true;
	}
	return add_count(k, v, ctx);
}

int profile__retire(struct profile *p, struct session *s, struct symbolizer *sym,
		    const struct record_opts *o, size_t min_threads, struct folded *out,
		    struct hmap *busy)
{
	struct builder b;
	size_t before = p->nr_threads;
	int ret = builder_init(&b, p, s, sym, o, out), err;

	if (!ret)
		ret = session__retire(s, min_threads, collect_thread, retire_count, &b, busy);
	err = ret < 0 ? ret : 0;
	if (ret > 0 && !b.finished)
		finish_threads(&b); /* threads without a key */
	if (ret > 0 && p->nr_threads > before)
		err = emit_all(&b, false);
	/*
	 * On failure the threads handed over are gone from the session: their
	 * rows stay, retired, so that the end neither makes them again nor adds
	 * a key of theirs (late_keys); the caller says their lines are missing.
	 */
	for (size_t i = 0; err && i < p->nr_threads; i++)
		p->threads[i].retired = true;
	builder_free(&b);
	return err ? err : ret;
}

int profile__build(struct profile *p, struct session *s, struct symbolizer *sym,
		   const struct record_opts *o, struct folded *out)
{
	struct builder b;
	size_t selected = 0;
	int err = builder_init(&b, p, s, sym, o, out);

	if (err)
		return err;
	p->window_ns = session__window_end_ns(s) - session__window_start_ns(s);
	err = session__for_each_thread(s, collect_thread, &b);
	if (err)
		goto out;
	finish_threads(&b);
	for (size_t i = 0; i < p->nr_threads; i++)
		selected += p->threads[i].selected;
	p->threads_left_out = p->nr_threads - selected + p->dropped_left_out;
	err = session__for_each_count(s, add_count, &b);
	if (!err && o->wakers)
		err = session__for_each_wake(s, add_wake, &b);
	if (!err)
		err = session__for_each_thread(s, add_open, &b);
	if (!err)
		err = emit_all(&b, true);
out:
	builder_free(&b);
	return err;
}
