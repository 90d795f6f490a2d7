// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "profile.h"
#include "util.h"

/* frames: tag + comm + user + kernel */
#define MAX_FRAMES (2 + 2 * WPROF_MAX_STACK_DEPTH)
#define NAME_LEN 256

static const char *const state_tags[WPROF_STATE_CNT] = {
	[WPROF_ON_CPU] = "on-cpu",
	[WPROF_OFF_SLEEP] = "off-cpu:sleep",
	[WPROF_OFF_DISK] = "off-cpu:disk",
	[WPROF_OFF_RUNQ] = "off-cpu:runqueue",
};

struct builder {
	struct profile *p;
	struct session *s;
	struct symbolizer *sym;
	const struct record_opts *o;
	struct folded *out;
	char (*names)[NAME_LEN]; /* MAX_FRAMES names */
	struct wprof_stack stack;
};

static int cmp_tid(const void *a, const void *b)
{
	const struct thread_acct *x = a, *y = b;

	return x->tid < y->tid ? -1 : x->tid > y->tid;
}

static struct thread_acct *find_thread(const struct profile *p, __u32 tid)
{
	struct thread_acct key = { .tid = tid };

	return bsearch(&key, p->threads, p->nr_threads, sizeof(key), cmp_tid);
}

static int collect_thread(const struct wprof_thread *t, void *ctx)
{
	struct profile *p = ctx;
	struct thread_acct *n = realloc(p->threads, (p->nr_threads + 1) * sizeof(*n));

	if (!n)
		return -ENOMEM;
	p->threads = n;
	n = &p->threads[p->nr_threads++];
	memset(n, 0, sizeof(*n));
	n->pid = t->pid;
	n->tid = t->tid;
	memcpy(n->comm, t->comm, sizeof(n->comm));
	n->comm[sizeof(n->comm) - 1] = '\0';
	n->on_ns = t->on_ns;
	return 0;
}

/* Threads known only from samples (never switched) still get an entry. */
static int add_sampled_thread(struct profile *p, const struct wprof_key *k)
{
	char path[64], comm[WPROF_COMM_LEN + 1] = "";
	struct thread_acct *n = realloc(p->threads, (p->nr_threads + 1) * sizeof(*n));

	if (!n)
		return -ENOMEM;
	p->threads = n;
	n = &p->threads[p->nr_threads++];
	memset(n, 0, sizeof(*n));
	n->pid = k->pid;
	n->tid = k->tid;
	snprintf(path, sizeof(path), "/proc/%u/task/%u/comm", k->pid, k->tid);
	if (read_small_file(path, comm, sizeof(comm)) > 0)
		comm[strcspn(comm, "\n")] = '\0';
	else
		snprintf(comm, sizeof(comm), "tid-%u", k->tid);
	snprintf(n->comm, sizeof(n->comm), "%s", comm);
	qsort(p->threads, p->nr_threads, sizeof(*n), cmp_tid);
	return 0;
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

/*
 * Append the names of stack `id` (leaf first in the map) root first. Return
 * addresses point after the call: name ip - 1 so a call at a function's end
 * is not given to the next function.
 */
static int add_stack(struct builder *b, __u32 pid, __u64 id, bool kernel, size_t *nr)
{
	struct wprof_stack *st = &b->stack;
	bool at_root = true;
	int first = 0, err;

	if (!id)
		return 0;
	err = session__stack(b->s, id, st);
	if (err) {
		b->p->stacks_missing++;
		return 0;
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
	for (int i = st->nr - 1; i >= first && *nr < MAX_FRAMES; i--) {
		__u64 ip = st->ips[i] - (i > first ? 1 : 0);
		char *name = b->names[*nr];
		int ret;

		if (kernel) {
			ret = symbolizer__kernel(b->sym, ip, name, NAME_LEN - 4);
			strcat(name, "_[k]");
		} else {
			ret = symbolizer__user(b->sym, pid, ip, name, NAME_LEN);
			/*
			 * A frame-pointer walk that passes through code built
			 * without frame pointers can read a random word as the
			 * outermost return addresses. At the root end, one that
			 * points into no mapping is not code: drop it, counted.
			 */
			if (at_root && ret == 1 && !strncmp(name, "[unmapped]", 10)) {
				b->p->frames_bogus++;
				continue;
			}
			at_root = false;
		}
		b->p->frames_total++;
		if (ret != 0)
			b->p->frames_unnamed++;
		(*nr)++;
	}
	return 0;
}

static int emit(struct builder *b, const struct wprof_key *k, __u32 state, __u64 weight_us)
{
	const char *frames[MAX_FRAMES];
	const char *tag = state_tags[state];
	struct thread_acct *t = find_thread(b->p, k->tid);
	size_t nr = 0;
	int err;

	if (state != WPROF_ON_CPU && b->o->no_states)
		tag = "off-cpu";
	if (!b->o->tag_leaf)
		snprintf(b->names[nr++], NAME_LEN, "%s", tag);
	snprintf(b->names[nr++], NAME_LEN, "%s", t ? t->comm : "?");
	err = add_stack(b, k->pid, k->ustack_id, false, &nr);
	if (!err)
		err = add_stack(b, k->pid, k->kstack_id, true, &nr);
	if (err)
		return err;
	if (nr == (size_t)(1 + !b->o->tag_leaf))
		snprintf(b->names[nr++], NAME_LEN, "[no stack]");
	if (b->o->tag_leaf && nr < MAX_FRAMES)
		snprintf(b->names[nr++], NAME_LEN, "%s", tag);
	for (size_t i = 0; i < nr; i++)
		frames[i] = b->names[i];
	return folded__add(b->out, frames, nr, weight_us);
}

static int add_count(const struct wprof_key *k, const struct wprof_val *v, void *ctx)
{
	struct builder *b = ctx;
	struct thread_acct *t = find_thread(b->p, k->tid);
	__u64 ns;
	int err;

	if (k->state >= WPROF_STATE_CNT)
		return 0;
	if (!t) {
		err = add_sampled_thread(b->p, k);
		if (err)
			return err;
		t = find_thread(b->p, k->tid);
	}
	if (k->state == WPROF_ON_CPU) {
		t->samples += v->count;
		ns = v->count * b->p->period_ns;
	} else {
		t->off_ns[k->state] += v->total_ns;
		if (k->state != WPROF_OFF_RUNQ)
			t->blocks += v->count;
		ns = v->total_ns;
	}
	return emit(b, k, k->state, (ns + 500) / 1000);
}

/* Close what is still open at the window's end, as the BPF side would have. */
static int close_open(const struct wprof_thread *th, void *ctx)
{
	struct builder *b = ctx;
	__u64 end = session__window_end_ns(b->s);
	struct thread_acct *t = find_thread(b->p, th->tid);
	struct wprof_key k = {
		.pid = th->pid, .tid = th->tid,
		.ustack_id = th->ustack_id, .kstack_id = th->kstack_id,
	};
	__u64 start = th->off_since_ns, wake = th->wake_ns, last;
	int err = 0;

	if (!t)
		return 0;
	last = th->exit_ns ? th->exit_ns : end;
	t->wall_ns = last > th->first_ns ? last - th->first_ns : 0;
	if (th->exit_ns)
		return 0;
	if (th->oncpu_since_ns && end > th->oncpu_since_ns)
		t->on_ns += end - th->oncpu_since_ns;
	if (!start || end <= start)
		return 0;
	if (th->off_state != WPROF_OFF_RUNQ && wake && wake >= start && wake <= end) {
		t->off_ns[th->off_state] += wake - start;
		t->off_ns[WPROF_OFF_RUNQ] += end - wake;
		t->blocks++;
		err = emit(b, &k, th->off_state, (wake - start + 500) / 1000);
		if (!err)
			err = emit(b, &k, WPROF_OFF_RUNQ, (end - wake + 500) / 1000);
	} else {
		t->off_ns[th->off_state] += end - start;
		if (th->off_state != WPROF_OFF_RUNQ)
			t->blocks++;
		err = emit(b, &k, th->off_state, (end - start + 500) / 1000);
	}
	return err;
}

int profile__build(struct profile *p, struct session *s, struct symbolizer *sym,
		   const struct record_opts *o, struct folded *out)
{
	struct builder b = { .p = p, .s = s, .sym = sym, .o = o, .out = out };
	int err;

	memset(p, 0, sizeof(*p));
	p->period_ns = NSEC_PER_SEC / o->freq_hz;
	p->window_ns = session__window_end_ns(s) - session__window_start_ns(s);
	b.names = calloc(MAX_FRAMES, NAME_LEN);
	if (!b.names)
		return -ENOMEM;
	err = session__for_each_thread(s, collect_thread, p);
	if (!err) {
		qsort(p->threads, p->nr_threads, sizeof(*p->threads), cmp_tid);
		err = session__for_each_count(s, add_count, &b);
	}
	if (!err)
		err = session__for_each_thread(s, close_open, &b);
	free(b.names);
	return err;
}

static __u64 off_total(const struct thread_acct *t)
{
	return t->off_ns[WPROF_OFF_SLEEP] + t->off_ns[WPROF_OFF_DISK] + t->off_ns[WPROF_OFF_RUNQ];
}

static double pct(__u64 part, __u64 whole)
{
	return whole ? 100.0 * part / whole : 0.0;
}

/* One table row: the shares are of on + off, which is the wall time. */
static void print_row(FILE *f, const char *indent, const char *what, __u32 id, const char *comm,
		      const struct thread_acct *t)
{
	__u64 all = t->on_ns + off_total(t);

	fprintf(f,
		"wprof: %s%s %u (%s): wall %.3f s, on-CPU %.1f%%, runqueue %.1f%%, sleep %.1f%%, "
		"disk %.1f%%, %llu blocks\n",
		indent, what, id, comm, all / 1e9, pct(t->on_ns, all),
		pct(t->off_ns[WPROF_OFF_RUNQ], all), pct(t->off_ns[WPROF_OFF_SLEEP], all),
		pct(t->off_ns[WPROF_OFF_DISK], all), (unsigned long long)t->blocks);
}

static __u64 wall_of(const struct thread_acct *t)
{
	return t->on_ns + off_total(t);
}

static int cmp_wall_desc(const void *a, const void *b)
{
	__u64 x = wall_of(a), y = wall_of(b);

	return x > y ? -1 : x < y;
}

/* Processes, each the sum of its threads, by wall time; then their threads. */
size_t profile__processes(const struct profile *p, struct thread_acct **out)
{
	struct thread_acct *procs = calloc(p->nr_threads + 1, sizeof(*procs));
	size_t nr = 0;

	*out = procs;
	if (!procs)
		return 0;
	for (size_t i = 0; i < p->nr_threads; i++) {
		const struct thread_acct *t = &p->threads[i];
		struct thread_acct *pr = NULL;

		for (size_t j = 0; j < nr && !pr; j++)
			if (procs[j].pid == t->pid)
				pr = &procs[j];
		if (!pr) {
			pr = &procs[nr++];
			pr->pid = pr->tid = t->pid;
		}
		/* named after its main thread, else its first thread */
		if (t->tid == t->pid || !pr->comm[0])
			memcpy(pr->comm, t->comm, sizeof(pr->comm));
		pr->on_ns += t->on_ns;
		pr->wall_ns += t->wall_ns;
		pr->samples += t->samples;
		pr->blocks += t->blocks;
		for (int k = 1; k < WPROF_STATE_CNT; k++)
			pr->off_ns[k] += t->off_ns[k];
	}
	qsort(procs, nr, sizeof(*procs), cmp_wall_desc);
	return nr;
}

void profile__print_summary(const struct profile *p, struct session *s, FILE *f)
{
	struct thread_acct *procs, *threads;
	__u64 st[WPROF_STAT_CNT];
	size_t nr_procs;

	session__stats(s, st);
	nr_procs = profile__processes(p, &procs);
	threads = malloc((p->nr_threads + 1) * sizeof(*threads));
	if (threads && p->nr_threads) {
		memcpy(threads, p->threads, p->nr_threads * sizeof(*threads));
		qsort(threads, p->nr_threads, sizeof(*threads), cmp_wall_desc);
	}
	for (size_t i = 0; i < nr_procs; i++) {
		print_row(f, "", "pid", procs[i].pid, procs[i].comm, &procs[i]);
		for (size_t j = 0; threads && j < p->nr_threads; j++)
			if (threads[j].pid == procs[i].pid)
				print_row(f, "  ", "tid", threads[j].tid, threads[j].comm,
					  &threads[j]);
	}
	free(threads);
	free(procs);
	fprintf(f, "wprof: recorded %.3f s, %zu processes, %zu threads\n", p->window_ns / 1e9,
		nr_procs, p->nr_threads);
	fprintf(f, "wprof: %llu samples, %llu context switches, %llu wakeups\n",
		(unsigned long long)st[WPROF_STAT_SAMPLES],
		(unsigned long long)st[WPROF_STAT_SWITCHES],
		(unsigned long long)st[WPROF_STAT_WAKEUPS]);
	fprintf(f, "wprof: stack cache: %llu switches reused their last stacks, %llu of them "
		"walked to check, %llu mismatches\n",
		(unsigned long long)st[WPROF_STAT_CACHE_HITS] + st[WPROF_STAT_CACHE_CHECKS],
		(unsigned long long)st[WPROF_STAT_CACHE_CHECKS],
		(unsigned long long)st[WPROF_STAT_CACHE_MISMATCH]);
	fprintf(f,
		"wprof: lost: %llu user stack errors, %llu kernel stack errors, "
		"%llu user stacks truncated, %llu kernel stacks truncated, "
		"%llu stack map full, %llu counts map full (%.3f s dropped), "
		"%llu thread map full, %llu stacks missing, %llu of %llu frames unnamed, "
		"%llu bogus root frames dropped\n",
		(unsigned long long)st[WPROF_STAT_USTACK_ERR],
		(unsigned long long)st[WPROF_STAT_KSTACK_ERR],
		(unsigned long long)st[WPROF_STAT_USTACK_TRUNC],
		(unsigned long long)st[WPROF_STAT_KSTACK_TRUNC],
		(unsigned long long)st[WPROF_STAT_STACKS_FULL],
		(unsigned long long)st[WPROF_STAT_COUNTS_FULL], st[WPROF_STAT_DROPPED_NS] / 1e9,
		(unsigned long long)st[WPROF_STAT_THREADS_FULL],
		(unsigned long long)p->stacks_missing, (unsigned long long)p->frames_unnamed,
		(unsigned long long)p->frames_total, (unsigned long long)p->frames_bogus);
}

void profile__free(struct profile *p)
{
	free(p->threads);
	memset(p, 0, sizeof(*p));
}
