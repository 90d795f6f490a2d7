// SPDX-License-Identifier: GPL-2.0-only
/*
 * The store of what was drained from the BPF maps while recording: values
 * of one key taken in several drains add up (counts, times, weights) and
 * keep the largest max; a stack is kept once; a thread that ended comes back
 * with every field the profile reads, its histogram included, from the
 * compact form it is kept in.
 */
#include <errno.h>
#include <stdlib.h>

#include "hmap.h"
#include "store.h"
#include "threadtime.h"
#include "unit.h"
#include "util.h"

struct seen {
	int n;
	struct wprof_key k;
	struct wprof_val v;
	struct wprof_thread t[2];
};

static int one_count(const struct wprof_key *k, const struct wprof_val *v, void *ctx)
{
	struct seen *s = ctx;

	if (k->tid == 7) {
		s->k = *k;
		s->v = *v;
	}
	s->n++;
	return 0;
}

static int one_thread(const struct wprof_thread *t, void *ctx)
{
	struct seen *s = ctx;

	if (s->n < 2)
		s->t[s->n] = *t;
	s->n++;
	return 0;
}

static void test_counts(void)
{
	struct store *st = store__new(false);
	struct wprof_key a = { .pid = 1, .tid = 7, .ustack_id = 11, .kstack_id = 12, .state = 1 };
	struct wprof_key b = a;
	struct wprof_val v1 = { .count = 2, .total_ns = 300, .max_ns = 200, .weight = 5 };
	struct wprof_val v2 = { .count = 1, .total_ns = 50, .max_ns = 50, .weight = 1 };
	struct seen s = {};

	if (!CHECK(st != NULL, "store__new"))
		return;
	b.tid = 8;
	CHECK(!store__add_count(st, &a, &v1), "add a");
	CHECK(!store__add_count(st, &b, &v2), "add b");
	CHECK(!store__add_count(st, &a, &v2), "add a again (a later drain)");
	store__for_each_count(st, one_count, &s);
	CHECK_EQ_U64(s.n, 2, "two keys");
	CHECK_EQ_U64(s.k.ustack_id, 11, "the key comes back");
	CHECK_EQ_U64(s.v.count, 3, "counts add up");
	CHECK_EQ_U64(s.v.total_ns, 350, "times add up");
	CHECK_EQ_U64(s.v.weight, 6, "weights add up");
	CHECK_EQ_U64(s.v.max_ns, 200, "the largest max stays");
	store__free(st);
}

static void test_stacks(void)
{
	struct store *st = store__new(false);
	struct wprof_stack in = { .nr = 3, .ips = { 10, 20, 30 } }, out;

	if (!CHECK(st != NULL, "store__new"))
		return;
	CHECK(!store__add_stack(st, 99, &in), "add");
	in.ips[0] = 11; /* the same id again is the same stack: the first copy stays */
	CHECK(!store__add_stack(st, 99, &in), "add again");
	CHECK_EQ_U64(store__nr_stacks(st), 1, "kept once");
	CHECK(!store__stack(st, 99, &out), "found");
	CHECK_EQ_U64(out.nr, 3, "frames");
	CHECK_EQ_U64(out.ips[0], 10, "first copy");
	CHECK_EQ_U64(out.ips[2], 30, "last frame");
	CHECK(store__stack(st, 98, &out) == -ENOENT, "unknown id: -ENOENT");
	store__free(st);
}

static void test_threads(void)
{
	struct store *st = store__new(false);
	struct wprof_thread live = { .pid = 5, .tid = 6, .off_since_ns = 123 }, ended = {};
	struct seen s = {};

	if (!CHECK(st != NULL, "store__new"))
		return;
	ended.pid = 5;
	ended.tid = 9;
	snprintf(ended.comm, sizeof(ended.comm), "worker");
	ended.exit_ns = 1000;
	ended.on_ns = 400;
	ended.off_ns[WPROF_OFF_SLEEP] = 300;
	ended.off_ns[WPROF_OFF_RUNQ] = 20;
	ended.kept_ns[WPROF_OFF_SLEEP] = 250;
	ended.blocks = 4;
	ended.max_block_ns = 150;
	ended.lost_ns = 7;
	ended.hist[0] = 3;
	ended.hist[5] = 1;
	ended.hist[WPROF_HIST_SLOTS - 1] = 2;
	CHECK(!store__add_thread(st, &live), "add a live thread");
	CHECK(!store__add_thread(st, &ended), "add an ended one");
	CHECK_EQ_U64(store__nr_threads(st), 2, "two threads");
	store__for_each_thread(st, one_thread, &s);
	CHECK_EQ_U64(s.n, 2, "both come back");
	CHECK_EQ_U64(s.t[0].off_since_ns, 123, "the live one whole");
	CHECK(!memcmp(&s.t[1], &ended, sizeof(ended)), "the ended one as it was");
	store__free(st);
}

struct taken {
	int threads, counts, counts_first; /* counts handed over before every thread was */
	__u32 tids[4];
};

static int take_thread(const struct wprof_thread *t, void *ctx)
{
	struct taken *tk = ctx;

	if (tk->threads < 4)
		tk->tids[tk->threads] = t->tid;
	tk->threads++;
	return 0;
}

static int take_count(const struct wprof_key *k, const struct wprof_val *v, void *ctx)
{
	struct taken *tk = ctx;

	tk->counts++;
	tk->counts_first += tk->threads < 2;
	return 0;
}

/* What session__retire() does after each drain: ripen, then take the ripe. */
static int after_drain(struct store *st, struct taken *tk)
{
	store__ripen(st);
	return store__take_ended(st, take_thread, take_count, tk);
}

static int count_keys(const struct wprof_key *k, const struct wprof_val *v, void *ctx)
{
	(*(int *)ctx)++;
	return 0;
}

/*
 * Ended threads are handed over a drain after they came, with
 * all their keys after all of them, and then gone; live threads, other
 * threads' keys and a thread of a reused tid (another start_id) stay.
 */
static void test_take_ended(void)
{
	struct store *st = store__new(false);
	struct wprof_thread live = { .pid = 5, .tid = 6 }, e1 = { .pid = 5, .tid = 7, .exit_ns = 9 };
	struct wprof_thread e2 = { .pid = 8, .tid = 8, .exit_ns = 9, .start_id = 2 };
	struct wprof_key k = { .pid = 5, .tid = 7, .ustack_id = 1, .state = WPROF_OFF_SLEEP };
	struct wprof_val v = { .count = 1, .total_ns = 10 };
	struct taken tk = {};
	int left = 0;

	if (!CHECK(st != NULL, "store__new"))
		return;
	store__add_thread(st, &live);
	store__add_thread(st, &e1);
	store__add_count(st, &k, &v); /* e1's, two states */
	k.state = WPROF_OFF_RUNQ;
	store__add_count(st, &k, &v);
	k.tid = 6; /* the live thread's */
	store__add_count(st, &k, &v);
	CHECK_EQ_S64(after_drain(st, &tk), 0, "first call");
	CHECK_EQ_U64(tk.threads + tk.counts, 0, "nothing handed over at the first call: "
		     "a drain's grace");
	store__add_thread(st, &e2);
	k.pid = k.tid = 8; /* e2's key, and one of an earlier thread of its tid */
	k.start_id = 2;
	store__add_count(st, &k, &v);
	k.start_id = 1;
	store__add_count(st, &k, &v);
	CHECK_EQ_S64(after_drain(st, &tk), 0, "second call");
	CHECK(tk.threads == 1 && tk.tids[0] == 7, "the thread there at the first call, alone");
	CHECK_EQ_U64(tk.counts, 2, "its two keys");
	CHECK_EQ_U64(tk.counts_first, 2, "handed over after the threads");
	store__for_each_count(st, count_keys, &left);
	CHECK_EQ_U64(left, 3, "the live thread's key and tid 8's two stay");
	CHECK_EQ_U64(store__nr_threads(st), 2, "the live one and e2 stay");
	tk = (struct taken){};
	after_drain(st, &tk);
	CHECK(tk.threads == 1 && tk.tids[0] == 8 && tk.counts == 1,
	      "e2 the call after, with its key, not its tid's earlier thread's");
	left = 0;
	store__for_each_count(st, count_keys, &left);
	CHECK_EQ_U64(left, 2, "two keys left");
	tk = (struct taken){};
	after_drain(st, &tk);
	CHECK_EQ_U64(tk.threads + tk.counts, 0, "nothing is handed over twice");
	store__free(st);
}

static int fail_thread(const struct wprof_thread *t, void *ctx)
{
	(*(int *)ctx)++;
	return -ENOMEM;
}

static int no_count(const struct wprof_key *k, const struct wprof_val *v, void *ctx)
{
	(*(int *)ctx) += 100;
	return 0;
}

/* A callback that fails: what was handed over is gone all the same, never handed over twice. */
static void test_take_fails(void)
{
	struct store *st = store__new(false);
	struct wprof_thread e = { .pid = 5, .tid = 7, .exit_ns = 9 };
	struct wprof_key k = { .pid = 5, .tid = 7, .ustack_id = 1, .state = WPROF_OFF_SLEEP };
	struct wprof_val v = { .count = 1, .total_ns = 10 };
	struct taken tk = {};
	int calls = 0, left = 0;

	if (!CHECK(st != NULL, "store__new"))
		return;
	store__add_thread(st, &e);
	store__add_count(st, &k, &v);
	store__ripen(st);
	store__ripen(st);
	CHECK_EQ_S64(store__take_ended(st, fail_thread, no_count, &calls), -ENOMEM,
		     "the callback's error comes back");
	CHECK_EQ_U64(calls, 1, "the thread was handed over once, its key not after the failure");
	CHECK_EQ_U64(store__nr_threads(st), 0, "the thread is gone");
	store__for_each_count(st, count_keys, &left);
	CHECK_EQ_U64(left, 0, "its key is gone");
	CHECK_EQ_S64(after_drain(st, &tk), 0, "the next drain");
	CHECK_EQ_U64(tk.threads + tk.counts, 0, "nothing is handed over again");
	store__free(st);
}

/* A stack is freed at the second sweep in a row that finds it unused, not the first. */
static void test_sweep(void)
{
	struct store *st = store__new(false);
	struct wprof_stack s = { .nr = 1, .ips = { 1 } }, out;
	struct hmap used = {};
	void *old;

	if (!CHECK(st != NULL, "store__new"))
		return;
	for (__u64 id = 1; id <= 3; id++)
		store__add_stack(st, id, &s);
	hmap__put(&used, 1, 0, (void *)1, &old);
	CHECK_EQ_S64(store__sweep_stacks(st, &used), 0, "first sweep: nothing freed");
	hmap__put(&used, 2, 0, (void *)1, &old); /* 2 named again */
	CHECK_EQ_S64(store__sweep_stacks(st, &used), 1, "second sweep: one freed");
	CHECK(store__stack(st, 3, &out) == -ENOENT, "the one unused twice in a row");
	CHECK(!store__stack(st, 1, &out) && !store__stack(st, 2, &out), "the others stay");
	hmap__clear(&used);
	CHECK_EQ_S64(store__sweep_stacks(st, &used), 0, "2 unused once since it was named: stays");
	CHECK_EQ_S64(store__sweep_stacks(st, &used), 2, "then both go");
	CHECK_EQ_U64(store__nr_stacks(st), 0, "none left");
	/*
	 * Drained again (walked again since the last drain): a key of it may
	 * not be written yet, so it counts as named then.
	 */
	store__add_stack(st, 4, &s);
	CHECK_EQ_S64(store__sweep_stacks(st, &used), 0, "unused once");
	store__add_stack(st, 4, &s);
	CHECK_EQ_S64(store__sweep_stacks(st, &used), 0, "drained again since: unused once again");
	CHECK_EQ_S64(store__sweep_stacks(st, &used), 1, "then it goes");
	store__free(st);
}

/* What a store has, by (state, slice, span): sums of each field. */
struct by_slice {
	struct wprof_key k[16];
	struct wprof_val v[16];
	int n;
};

static int collect(const struct wprof_key *k, const struct wprof_val *v, void *ctx)
{
	struct by_slice *b = ctx;

	if (b->n < 16) {
		b->k[b->n] = *k;
		b->v[b->n] = *v;
	}
	b->n++;
	return 0;
}

static const struct wprof_val *find(const struct by_slice *b, __u32 state, __u32 slice,
				    __u32 span)
{
	for (int i = 0; i < b->n && i < 16; i++)
		if (b->k[i].state == state && b->k[i].slice == slice && b->k[i].span == span)
			return &b->v[i];
	return NULL;
}

static void test_coarsen_parts(void)
{
	struct slice_part p[3];

	CHECK_EQ_S64(slices__coarsen(5, 1, 1, p), 1, "one slice: one part");
	CHECK(p[0].slice == 2 && p[0].span == 1 && p[0].ns == 1, "slice 5 is coarse slice 2");
	CHECK_EQ_S64(slices__coarsen(3, 10, 2, p), 3, "slices 3-12 in fours: three parts");
	CHECK(p[0].slice == 0 && p[0].span == 1 && p[0].ns == 1, "slice 3 in coarse 0");
	CHECK(p[1].slice == 1 && p[1].span == 2 && p[1].ns == 8, "4-11 are coarse 1-2");
	CHECK(p[2].slice == 3 && p[2].span == 1 && p[2].ns == 1, "12 in coarse 3");
	CHECK_EQ_S64(slices__coarsen(4, 4, 2, p), 1, "slices 4-7 are coarse slice 1 whole");
	CHECK(p[0].slice == 1 && p[0].span == 1 && p[0].ns == 4, "and all four are in it");
	CHECK_EQ_S64(slices__coarsen(2, 4, 1, p), 2, "slices 2-5 in twos: two parts");
	CHECK(p[0].slice == 1 && p[0].span == 1 && p[0].ns == 2, "2-3 are coarse 1");
	CHECK(p[1].slice == 2 && p[1].span == 1 && p[1].ns == 2, "4-5 are coarse 2");
	CHECK_EQ_S64(slices__coarsen(7, 0, 1, p), 0, "span 0: not in time, no part");
}

/*
 * store__coarsen(): keys of one slice go to the slice twice as long that
 * holds it, merged; a key over several slices has its times shared out by
 * slice and its counts in its last; keys added later, and the threads' last
 * slices, follow; nothing is lost.
 */
static void test_coarsen(void)
{
	struct store *st = store__new(true);
	struct wprof_key k = { .pid = 1, .tid = 7, .ustack_id = 11, .state = WPROF_OFF_SLEEP };
	struct wprof_val a = { .count = 1, .total_ns = 100, .max_ns = 100, .weight = 65536,
			       .exact_ns = 100 };
	struct wprof_val mid = { .total_ns = 400, .exact_ns = 400 };
	struct wprof_time tm = { .ns = { 30, 0, 69 } }; /* as a value: count 30, max_ns 69 */
	struct wprof_thread th = { .pid = 1, .tid = 7, .acc_slice = 9 };
	struct by_slice b = {};
	const struct wprof_val *v;
	struct seen s = {};

	if (!CHECK(st != NULL, "store__new"))
		return;
	k.slice = 5, k.span = 1;
	CHECK(!store__add_count(st, &k, &a), "slice 5");
	k.slice = 4;
	CHECK(!store__add_count(st, &k, &a), "slice 4");
	k.slice = 1, k.span = 4; /* slices 1-4, none of its own counts */
	CHECK(!store__add_count(st, &k, &mid), "slices 1-4");
	k.state = WPROF_KEY_TIME, k.slice = 3, k.span = 3; /* a thread's time over 3-5 */
	CHECK(!store__add_count(st, &k, (const struct wprof_val *)&tm), "a time key");
	CHECK(!store__add_thread(st, &th), "a live thread");
	CHECK(!store__coarsen(st), "coarsen");
	CHECK_EQ_U64(store__shift(st), 1, "slices twice as long");
	/* added after: slice 7 of the BPF side is coarse slice 3 */
	k.state = WPROF_OFF_SLEEP, k.slice = 7, k.span = 1;
	CHECK(!store__add_count(st, &k, &a), "slice 7 after");
	store__for_each_count(st, collect, &b);
	CHECK_EQ_S64(b.n, 6, "keys: coarse 0, 1, 2, 3 of the sleep, two of the time");
	v = find(&b, WPROF_OFF_SLEEP, 0, 1);
	CHECK(v && v->total_ns == 100 && v->exact_ns == 100 && v->count == 0,
	      "coarse 0: fine slice 1's share of the run, no count");
	v = find(&b, WPROF_OFF_SLEEP, 1, 1);
	CHECK(v && v->total_ns == 200 && v->count == 0, "coarse 1: fine 2-3's share");
	v = find(&b, WPROF_OFF_SLEEP, 2, 1);
	CHECK(v && v->total_ns == 300 && v->exact_ns == 300 && v->count == 2 &&
		      v->max_ns == 100 && v->weight == 2 * 65536,
	      "coarse 2: fine 4 and 5 merged, with fine 4's share of the run, counts of both");
	v = find(&b, WPROF_OFF_SLEEP, 3, 1);
	CHECK(v && v->total_ns == 100 && v->count == 1, "coarse 3: the one added later");
	v = find(&b, WPROF_KEY_TIME, 1, 1);
	CHECK(v && v->count == 10 && v->max_ns == 23, "the time key's fine 3 in coarse 1 (a third)");
	v = find(&b, WPROF_KEY_TIME, 2, 1);
	CHECK(v && v->count == 20 && v->max_ns == 46, "and fine 4-5 in coarse 2, the rest");
	store__for_each_thread(st, one_thread, &s);
	CHECK_EQ_U64(s.t[0].acc_slice, 4, "the thread's last slice: 9 is coarse 4");
	th.tid = 8, th.exit_ns = 5, th.acc_slice = 11;
	CHECK(!store__add_thread(st, &th), "an ended thread after");
	s = (struct seen){};
	store__for_each_thread(st, one_thread, &s);
	CHECK_EQ_U64(s.t[1].acc_slice, 5, "its last slice: 11 is coarse 5");
	store__free(st);
}

/* threadtimes__coarsen(): each thread's rows in slices twice as long, nothing lost. */
static void test_coarsen_times(void)
{
	struct threadtimes tt = {};
	__u64 a[WPROF_STATE_CNT] = { 10, 20 }, b[WPROF_STATE_CNT] = { 0, 0, 0, 300 };
	__u64 ns[WPROF_STATE_CNT];
	const struct thread_time *t;

	CHECK(!threadtimes__add(&tt, 1, 7, 0, 2, 1, a), "slice 2");
	CHECK(!threadtimes__add(&tt, 1, 7, 0, 3, 1, a), "slice 3");
	CHECK(!threadtimes__add(&tt, 1, 7, 0, 4, 3, b), "slices 4-6");
	CHECK(!threadtimes__add(&tt, 1, 8, 0, 0, 1, a), "another thread's slice 0");
	/* a retired thread's rows come in a drain's order: 3, 1, 2, 0 */
	CHECK(!threadtimes__add(&tt, 1, 9, 0, 3, 1, a), "slice 3");
	CHECK(!threadtimes__add(&tt, 1, 9, 0, 1, 1, a), "slice 1");
	CHECK(!threadtimes__add(&tt, 1, 9, 0, 2, 1, a), "slice 2");
	CHECK(!threadtimes__add(&tt, 1, 9, 0, 0, 1, a), "slice 0");
	CHECK(!threadtimes__coarsen(&tt), "coarsen");
	t = threadtimes__get(&tt, 7, 0);
	if (!CHECK(t != NULL, "the thread is there"))
		return;
	CHECK_EQ_U64(t->nr, 3, "rows: coarse 1 (fine 2-3 merged), 2 (fine 4-5), 3 (fine 6)");
	CHECK(t->rows[0].slice == 1 && t->rows[0].span == 1 && t->rows[0].ns[0] == 20 &&
		      t->rows[0].ns[1] == 40, "coarse 1 has both");
	thread_time__sum(t, 2, 3, ns);
	CHECK_EQ_U64(ns[3], 200, "coarse 2 has fine 4-5's share of the run");
	thread_time__sum(t, 3, 4, ns);
	CHECK_EQ_U64(ns[3], 100, "coarse 3 has fine 6's");
	t = threadtimes__get(&tt, 8, 0);
	CHECK(t && t->nr == 1 && t->rows[0].slice == 0 && t->rows[0].ns[1] == 20,
	      "the other thread's slice 0 stays coarse 0");
	t = threadtimes__get(&tt, 9, 0);
	CHECK(t && t->nr == 2 && t->rows[0].slice == 0 && t->rows[0].ns[1] == 40 &&
		      t->rows[1].slice == 1 && t->rows[1].ns[1] == 40,
	      "rows out of order: merged all the same, two of two slices each");
	threadtimes__free(&tt);
}

int main(void)
{
	test_coarsen_times();
	test_coarsen_parts();
	test_coarsen();
	test_counts();
	test_stacks();
	test_threads();
	test_take_ended();
	test_take_fails();
	test_sweep();
	return unit_done();
}
