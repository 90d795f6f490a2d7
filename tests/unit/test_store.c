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

int main(void)
{
	test_counts();
	test_stacks();
	test_threads();
	test_take_ended();
	test_take_fails();
	test_sweep();
	return unit_done();
}
