// SPDX-License-Identifier: GPL-2.0-only
/*
 * A recording's per-thread accounting and lines, built from the drained maps:
 * exact on-CPU and off-CPU times per thread, each line's time from the maps'
 * keys, and the passes in order: the lines are weighed (profile_weigh.c),
 * then named and added to the output (profile_names.c).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "longblocks.h"
#include "profile.h"
#include "profile_priv.h"
#include "util.h"

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

struct thread_acct *profile_find_thread(const struct profile *p, __u32 tid, __u32 start_id)
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

	if (th->exit_ns || !from || end <= from || th->off_state == WPROF_ON_CPU ||
	    th->off_state == WPROF_STEAL || th->off_state >= WPROF_STATE_CNT)
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
		if (th->off_state != WPROF_OFF_THROTTLED) { /* a block, as close_interval()'s */
			t->blocks++;
			if (blocked > t->max_block_ns)
				t->max_block_ns = blocked;
			if (opts__hists(b->o))
				hist_add(b->p, th->pid, blocked);
		}
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
	return profile_find_thread(b->p, tid, start_id);
}

static struct thread_acct *thread_of(struct builder *b, const struct wprof_key *k)
{
	struct thread_acct *t = profile_find_thread(b->p, k->tid, k->start_id);

	return t ? t : sampled_thread(b, k->pid, k->tid, k->start_id);
}

/* Pass 2: every line's time, weighed later; nothing is symbolized yet. */
int builder_add_line(struct builder *b, const struct wprof_key *k,
		     const struct wprof_wake_key *wk, __u64 count, __u64 ns, __u64 max_ns)
{
	const struct wprof_key *key = wk ? &wk->blocked : k;
	struct thread_acct *t = profile_find_thread(b->p, key->tid, key->start_id);
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
	err = builder_add_line(b, k, wk, count, v->total_ns, v->max_ns);
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
	t = profile_find_thread(b->p, k->tid, k->start_id);

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
	/*
	 * steal a sample measured at its stacks: time, not samples
	 * (builder_add_steal() has those)
	 */
	if (k->state == WPROF_STEAL)
		return builder_add_line(b, k, NULL, 0, v->total_ns, v->max_ns);
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
		err = builder_add_line(b, k, NULL, last, pc[i].ns, last ? ns : 0);
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
	struct thread_acct *t = profile_find_thread(b->p, th->tid, th->start_id);
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

/* Weigh and symbolize the lines added, then the threads that ran unsampled; retire them all. */
static int emit_all(struct builder *b, bool all)
{
	struct profile *p = b->p;
	int err = builder_add_unwalked(b);

	if (!err)
		err = builder_add_steal(b);
	if (!err)
		err = builder_weigh_lines(b);
	for (size_t i = 0; i < b->nr_lines && !err; i++)
		err = builder_emit_line(b, &b->lines[i]);
	if (!err)
		err = builder_resolve_blocks(b, all);
	for (size_t i = 0; i < p->nr_threads && !err; i++) {
		struct thread_acct *t = &p->threads[i];

		if (t->retired)
			continue;
		if (t->selected && profile__ran_unsampled(t))
			err = builder_emit_unsampled(b, t);
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
