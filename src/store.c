// SPDX-License-Identifier: GPL-2.0-only
/* What the drains took out of the kernel's maps, summed per key: see store.h. */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "hmap.h"
#include "store.h"
#include "threadtime.h"
#include "util.h"

/*
 * One key and its summed value. Keys are hashed into an hmap; keys of the
 * same hash (never seen, but possible) are chained.
 */
struct sum {
	struct sum *next;
	struct wprof_val val;
	char key[]; /* struct wprof_key or wprof_wake_key: only as long as it is */
};

/*
 * What the profile reads of a thread that ended (see collect_thread() and
 * add_open() in profile.c): a third of struct wprof_thread, most of which
 * describes the interval a live thread is in. Its histogram is kept sparse:
 * the counts of the slots set in hist_mask, in order.
 */
struct ended_thread {
	__u32 pid, tid, start_id;
	char comm[WPROF_COMM_LEN];
	__u64 first_ns, exit_ns, on_ns, blocks, max_block_ns, lost_ns;
	__u64 off_ns[WPROF_STATE_CNT], kept_ns[WPROF_STATE_CNT];
	__u32 hist_mask;
	__u32 acc_slice;
	/*
	 * its histogram's slots that are not 0 (hist_mask), then, where the
	 * store keeps threads' times by slice, its time in its last slice
	 * (WPROF_STATE_CNT __u64, at the next 8-byte boundary)
	 */
	__u32 hist[];
};

/* Where an ended thread's time in its last slice is, after its @n hist slots. */
static void *acc_of(const struct ended_thread *e, __u32 n)
{
	return (char *)e->hist + (n * sizeof(e->hist[0]) + 7) / 8 * 8;
}

/* A stack's frames, no more than it has (most are far shorter than the limit). */
struct frames {
	__u32 nr;
	__u32 unused_sweeps; /* store__sweep_stacks() that found nothing using it, in a row */
	__u64 ips[];
};

struct store {
	struct hmap counts, wakes; /* hash of the key -> struct sum chain */
	struct hmap stacks;        /* id -> struct frames */
	struct wprof_thread *threads; /* as the kernel had them at the end */
	size_t nr_threads, cap_threads;
	struct ended_thread **ended;  /* taken while recording */
	size_t nr_ended, cap_ended;
	/* the first nr_marked were there at the last store__ripen(), nr_ripe at the one before */
	size_t nr_marked, nr_ripe;
	bool keep_times; /* ended threads keep their time in their last slice */
	/* the keys' slices are the BPF side's, 2^shift of them as one (store__coarsen()) */
	__u32 shift;
};

struct store *store__new(bool keep_times)
{
	struct store *st = calloc(1, sizeof(struct store));

	if (st)
		st->keep_times = keep_times;
	return st;
}

static void free_sums(struct hmap *h)
{
	for (size_t i = 0; i < h->cap; i++) {
		struct sum *s = h->slots[i].val, *next;

		for (; s; s = next) {
			next = s->next;
			free(s);
		}
	}
	hmap__clear(h);
}

void store__free(struct store *st)
{
	if (!st)
		return;
	free_sums(&st->counts);
	free_sums(&st->wakes);
	for (size_t i = 0; i < st->stacks.cap; i++)
		free(st->stacks.slots[i].val);
	hmap__clear(&st->stacks);
	free(st->threads);
	for (size_t i = 0; i < st->nr_ended; i++)
		free(st->ended[i]);
	free(st->ended);
	free(st);
}

/* Sum @v into @to, values of key @key (a struct wprof_key first). */
static void merge(const void *key, struct wprof_val *to, const struct wprof_val *v)
{
	/* a thread's time by slice (struct wprof_time): a sum by state */
	if (((const struct wprof_key *)key)->state == WPROF_KEY_TIME) {
		_Static_assert(sizeof(struct wprof_time) == sizeof(struct wprof_val),
			       "a time key's value is a counts value");
		struct wprof_time *t = (struct wprof_time *)to;
		const struct wprof_time *u = (const struct wprof_time *)v;

		for (int i = 0; i < WPROF_STATE_CNT; i++)
			t->ns[i] += u->ns[i];
		return;
	}
	to->count += v->count;
	to->total_ns += v->total_ns;
	to->weight += v->weight;
	to->exact_ns += v->exact_ns;
	if (v->max_ns > to->max_ns)
		to->max_ns = v->max_ns;
}

/* The sum of @key (@len bytes, hash @hash) in @h, or NULL. */
static struct sum *find_sum(const struct hmap *h, __u64 hash, const void *key, size_t len)
{
	for (struct sum *s = hmap__get(h, hash, 0); s; s = s->next)
		if (!memcmp(s->key, key, len))
			return s;
	return NULL;
}

/* Put @s, of a key @h does not have, at the head of its hash's chain. */
static int link_sum(struct hmap *h, __u64 hash, struct sum *s)
{
	void *old;

	s->next = hmap__get(h, hash, 0);
	return hmap__put(h, hash, 0, s, &old);
}

/* Sum @s (its key @len bytes) into @h, where a sum of its key takes it (@s freed then). */
static int insert_sum(struct hmap *h, struct sum *s, size_t len)
{
	__u64 hash = hmap__hash_bytes(s->key, len);
	struct sum *t = find_sum(h, hash, s->key, len);

	if (!t)
		return link_sum(h, hash, s);
	merge(s->key, &t->val, &s->val);
	free(s);
	return 0;
}

/* @key of @len bytes */
static int add_sum(struct hmap *h, const void *key, size_t len, const struct wprof_val *v)
{
	__u64 hash = hmap__hash_bytes(key, len);
	struct sum *s = find_sum(h, hash, key, len);
	int err;

	if (s) {
		merge(key, &s->val, v);
		return 0;
	}
	s = malloc(sizeof(*s) + len);
	if (!s)
		return -ENOMEM;
	memcpy(s->key, key, len);
	s->val = *v;
	err = link_sum(h, hash, s);
	if (err)
		free(s);
	return err;
}

/*
 * @v's share of @part (slices__coarsen()) of its key's @span slices: times
 * shared out by slices (@left: what is left of each of the VAL_SUMS sums), what
 * counts intervals to the last part, as the BPF side's last piece has it.
 */
/* The sums of a struct wprof_val, or of a struct wprof_time (the same size) */
#define VAL_SUMS ((int)(sizeof(struct wprof_val) / sizeof(__u64)))
_Static_assert(sizeof(struct wprof_val) == VAL_SUMS * sizeof(__u64), "sums only");

static void share_val(const void *key, const struct wprof_val *v, const struct slice_part *part,
		      __u32 span, __u64 left[VAL_SUMS], bool last, struct wprof_val *out)
{
	__u64 in[VAL_SUMS], x[VAL_SUMS];

	memcpy(in, v, sizeof(in));
	for (int i = 0; i < VAL_SUMS; i++)
		x[i] = slices__share(in[i], part, span, &left[i], last);
	memcpy(out, x, sizeof(*out));
	if (((const struct wprof_key *)key)->state == WPROF_KEY_TIME)
		return;
	out->count = last ? v->count : 0;
	out->weight = last ? v->weight : 0;
	out->max_ns = last ? v->max_ns : 0;
}

/*
 * Add @v to @key (@len bytes, a struct wprof_key first) in @h, its slices
 * 2^@shift times as long: one key, or one per part of them.
 */
static int add_coarse(struct hmap *h, const void *key, size_t len, const struct wprof_val *v,
		      __u32 shift)
{
	const struct wprof_key *k = key;
	struct slice_part parts[3];
	union {
		struct wprof_wake_key wk;
		struct wprof_key k;
	} c;
	__u64 left[VAL_SUMS];
	int n, err = 0;

	n = shift ? slices__coarsen(k->slice, k->span, shift, parts) : 0;
	if (!n)
		return add_sum(h, key, len, v);
	memcpy(&c, key, len);
	memcpy(left, v, sizeof(left));
	for (int i = 0; i < n && !err; i++) {
		struct wprof_val x;

		share_val(key, v, &parts[i], k->span, left, i == n - 1, &x);
		c.k.slice = parts[i].slice;
		c.k.span = parts[i].span;
		err = add_sum(h, &c, len, &x);
	}
	return err;
}

int store__add_count(struct store *st, const struct wprof_key *k, const struct wprof_val *v)
{
	return add_coarse(&st->counts, k, sizeof(*k), v, st->shift);
}

int store__add_wake(struct store *st, const struct wprof_wake_key *k, const struct wprof_val *v)
{
	return add_coarse(&st->wakes, k, sizeof(*k), v, st->shift);
}

/* Every sum of @h (keys of @len bytes) in slices twice as long. */
static int coarsen_sums(struct hmap *h, size_t len)
{
	struct sum **all = NULL;
	size_t nr = 0, cap = 0;
	int err = 0;

	for (size_t i = 0; i < h->cap && !err; i++)
		for (struct sum *s = h->slots[i].val; s && !err; s = s->next)
			if (!(err = array_reserve(&all, &cap, nr, sizeof(*all), 1024)))
				all[nr++] = s;
	if (err) {
		free(all);
		return err; /* nothing changed */
	}
	hmap__clear(h);
	for (size_t i = 0; i < nr; i++) {
		struct sum *s = all[i];
		struct wprof_key *k = (struct wprof_key *)s->key;
		struct slice_part parts[3];
		int n = slices__coarsen(k->slice, k->span, 1, parts);

		if (!err && n > 1) {
			err = add_coarse(h, s->key, len, &s->val, 1);
			free(s);
			continue;
		}
		if (n == 1) {
			k->slice = parts[0].slice;
			k->span = parts[0].span;
		}
		if (err || (err = insert_sum(h, s, len)))
			free(s); /* the recording fails: see store__coarsen() */
	}
	free(all);
	return err;
}

int store__coarsen(struct store *st)
{
	int err = coarsen_sums(&st->counts, sizeof(struct wprof_key));

	if (!err)
		err = coarsen_sums(&st->wakes, sizeof(struct wprof_wake_key));
	if (err)
		return err;
	st->shift++;
	for (size_t i = 0; i < st->nr_threads; i++)
		st->threads[i].acc_slice >>= 1;
	for (size_t i = 0; i < st->nr_ended; i++)
		st->ended[i]->acc_slice >>= 1;
	return 0;
}

__u32 store__shift(const struct store *st)
{
	return st->shift;
}

int store__add_stack(struct store *st, __u64 id, const struct wprof_stack *s)
{
	__u32 nr = s->nr > WPROF_MAX_STACK_DEPTH ? WPROF_MAX_STACK_DEPTH : s->nr;
	struct frames *f;
	void *old;
	int err;

	f = hmap__get(&st->stacks, id, 0);
	if (f) {
		/* walked again since the last drain: a key of it may be on its way */
		f->unused_sweeps = 0;
		return 0;
	}
	f = malloc(sizeof(*f) + nr * sizeof(f->ips[0]));
	if (!f)
		return -ENOMEM;
	f->nr = nr;
	f->unused_sweeps = 0;
	memcpy(f->ips, s->ips, nr * sizeof(f->ips[0]));
	err = hmap__put(&st->stacks, id, 0, f, &old);
	if (err)
		free(f);
	return err;
}

static int add_ended(struct store *st, const struct wprof_thread *t)
{
	struct ended_thread *e;
	__u32 mask = 0, n = 0;

	for (int i = 0; i < WPROF_HIST_SLOTS; i++)
		if (t->hist[i]) {
			mask |= 1U << i;
			n++;
		}
	if (st->nr_ended == st->cap_ended) {
		size_t cap = st->cap_ended ? 2 * st->cap_ended : 256;
		struct ended_thread **a = realloc(st->ended, cap * sizeof(*a));

		if (!a)
			return -ENOMEM;
		st->ended = a;
		st->cap_ended = cap;
	}
	e = malloc(sizeof(*e) + (n * sizeof(e->hist[0]) + 7) / 8 * 8 +
		   (st->keep_times ? WPROF_STATE_CNT * sizeof(__u64) : 0));
	if (!e)
		return -ENOMEM;
	e->pid = t->pid;
	e->tid = t->tid;
	e->start_id = t->start_id;
	memcpy(e->comm, t->comm, sizeof(e->comm));
	e->first_ns = t->first_ns;
	e->exit_ns = t->exit_ns;
	e->on_ns = t->on_ns;
	e->blocks = t->blocks;
	e->max_block_ns = t->max_block_ns;
	e->lost_ns = t->lost_ns;
	e->acc_slice = t->acc_slice >> st->shift;
	memcpy(e->off_ns, t->off_ns, sizeof(e->off_ns));
	memcpy(e->kept_ns, t->kept_ns, sizeof(e->kept_ns));
	e->hist_mask = mask;
	n = 0;
	for (int i = 0; i < WPROF_HIST_SLOTS; i++)
		if (mask & (1U << i))
			e->hist[n++] = t->hist[i];
	if (st->keep_times) {
		__u64 last[WPROF_STATE_CNT];

		thread_time__last(t, last);
		memcpy(acc_of(e, n), last, sizeof(last));
	}
	st->ended[st->nr_ended++] = e;
	return 0;
}

/* The entry of an ended thread back, as the kernel had it (what else it had is not read). */
static void expand(const struct store *st, const struct ended_thread *e, struct wprof_thread *t)
{
	__u32 n = 0;

	memset(t, 0, sizeof(*t));
	t->pid = e->pid;
	t->tid = e->tid;
	t->start_id = e->start_id;
	memcpy(t->comm, e->comm, sizeof(t->comm));
	t->first_ns = e->first_ns;
	t->exit_ns = e->exit_ns;
	t->on_ns = e->on_ns;
	t->blocks = e->blocks;
	t->max_block_ns = e->max_block_ns;
	t->lost_ns = e->lost_ns;
	memcpy(t->off_ns, e->off_ns, sizeof(t->off_ns));
	memcpy(t->kept_ns, e->kept_ns, sizeof(t->kept_ns));
	for (int i = 0; i < WPROF_HIST_SLOTS; i++)
		if (e->hist_mask & (1U << i))
			t->hist[i] = e->hist[n++];
	t->acc_slice = e->acc_slice;
	if (st->keep_times) {
		__u64 last[WPROF_STATE_CNT];

		memcpy(last, acc_of(e, n), sizeof(last));
		thread_time__set_last(t, last);
	}
}

int store__add_thread(struct store *st, const struct wprof_thread *t)
{
	/* nothing writes an ended thread's entry: its pending interval went at its end */
	if (t->exit_ns && !t->pend.start)
		return add_ended(st, t);
	if (st->nr_threads == st->cap_threads) {
		size_t cap = st->cap_threads ? 2 * st->cap_threads : 256;
		struct wprof_thread *n = realloc(st->threads, cap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		st->threads = n;
		st->cap_threads = cap;
	}
	st->threads[st->nr_threads] = *t;
	st->threads[st->nr_threads++].acc_slice >>= st->shift;
	return 0;
}

int store__stack(const struct store *st, __u64 id, struct wprof_stack *out)
{
	const struct frames *f = hmap__get(&st->stacks, id, 0);

	if (!f)
		return -ENOENT;
	out->nr = f->nr;
	memcpy(out->ips, f->ips, f->nr * sizeof(f->ips[0]));
	return 0;
}

size_t store__nr_stacks(const struct store *st)
{
	return st->stacks.nr;
}

size_t store__nr_threads(const struct store *st)
{
	return st->nr_threads + st->nr_ended;
}

int store__for_each_count(const struct store *st, store_count_fn fn, void *ctx)
{
	for (size_t i = 0; i < st->counts.cap; i++) {
		for (const struct sum *s = st->counts.slots[i].val; s; s = s->next) {
			int err = fn((const void *)s->key, &s->val, ctx);

			if (err)
				return err;
		}
	}
	return 0;
}

int store__for_each_wake(const struct store *st, store_wake_fn fn, void *ctx)
{
	for (size_t i = 0; i < st->wakes.cap; i++) {
		for (const struct sum *s = st->wakes.slots[i].val; s; s = s->next) {
			int err = fn((const void *)s->key, &s->val, ctx);

			if (err)
				return err;
		}
	}
	return 0;
}

int store__for_each_thread(const struct store *st, store_thread_fn fn, void *ctx)
{
	struct wprof_thread t;

	for (size_t i = 0; i < st->nr_threads; i++) {
		int err = fn(&st->threads[i], ctx);

		if (err)
			return err;
	}
	for (size_t i = 0; i < st->nr_ended; i++) {
		int err;

		expand(st, st->ended[i], &t);
		err = fn(&t, ctx);
		if (err)
			return err;
	}
	return 0;
}

/* The thread of @k is one of @set's (keys: tid, start_id). */
static bool in_set(const struct hmap *set, const struct wprof_key *k)
{
	return hmap__get(set, k->tid, k->start_id) != NULL;
}

/*
 * Take the sums of @h whose thread @set has out, handing each to @fn first
 * (@fn NULL: none; none after it failed, and they are taken out all the
 * same). Chains are filtered after the walk, so that deleting a slot (which
 * moves others) never skips or repeats one. @fn's error, or -ENOMEM when
 * some could not be taken out.
 */
static int take_sums(struct hmap *h, const struct hmap *set, store_count_fn fn, void *ctx)
{
	__u64 *hashes = NULL;
	size_t nr = 0, cap = 0;
	int err = 0, oom = 0;

	for (size_t i = 0; i < h->cap && !oom; i++) {
		const struct sum *s = h->slots[i].val;
		bool hit = false;

		for (; s; s = s->next) {
			if (!in_set(set, (const void *)s->key))
				continue;
			hit = true;
			if (fn && !err)
				err = fn((const void *)s->key, &s->val, ctx);
		}
		if (hit && !(oom = array_reserve(&hashes, &cap, nr, sizeof(*hashes), 64)))
			hashes[nr++] = h->slots[i].k1;
	}
	for (size_t i = 0; i < nr; i++) {
		struct sum *head = hmap__get(h, hashes[i], 0), **pp = &head, *s;
		void *old;

		while ((s = *pp)) {
			if (in_set(set, (const void *)s->key)) {
				*pp = s->next;
				free(s);
			} else {
				pp = &s->next;
			}
		}
		if (head)
			hmap__put(h, hashes[i], 0, head, &old); /* a replacement: never grows */
		else
			hmap__del(h, hashes[i], 0);
	}
	free(hashes);
	return err ? err : oom;
}

size_t store__ripen(struct store *st)
{
	st->nr_ripe = st->nr_marked;
	st->nr_marked = st->nr_ended;
	return st->nr_ripe;
}

int store__take_ended(struct store *st, store_thread_fn thread_fn, store_count_fn count_fn,
		      void *ctx)
{
	size_t n = st->nr_ripe;
	struct hmap set = {};
	struct wprof_thread t;
	int err = 0, ret;

	if (!n)
		return 0;
	for (size_t i = 0; i < n && !err; i++) {
		void *old;

		err = hmap__put(&set, st->ended[i]->tid, st->ended[i]->start_id, st->ended[i], &old);
	}
	if (err)
		goto out; /* nothing handed over: all stays */
	for (size_t i = 0; i < n && !err; i++) {
		expand(st, st->ended[i], &t);
		err = thread_fn(&t, ctx);
	}
	/* handed over: taken out whatever fails now, so never handed over twice */
	ret = take_sums(&st->counts, &set, err ? NULL : count_fn, ctx);
	err = err ? err : ret;
	ret = take_sums(&st->wakes, &set, NULL, NULL);
	err = err ? err : ret;
	for (size_t i = 0; i < n; i++)
		free(st->ended[i]);
	memmove(st->ended, st->ended + n, (st->nr_ended - n) * sizeof(*st->ended));
	st->nr_ended -= n;
	st->nr_marked -= n;
	st->nr_ripe = 0;
out:
	hmap__clear(&set);
	return err;
}

long store__sweep_stacks(struct store *st, const struct hmap *used)
{
	__u64 *gone = NULL;
	size_t nr = 0, cap = 0;
	long err = 0;

	for (size_t i = 0; i < st->stacks.cap; i++) {
		struct frames *f = st->stacks.slots[i].val;

		if (!f)
			continue;
		if (hmap__get(used, st->stacks.slots[i].k1, 0)) {
			f->unused_sweeps = 0;
			continue;
		}
		if (++f->unused_sweeps < 2)
			continue;
		err = array_reserve(&gone, &cap, nr, sizeof(*gone), 256);
		if (err)
			break;
		gone[nr++] = st->stacks.slots[i].k1;
	}
	for (size_t i = 0; i < nr; i++)
		free(hmap__del(&st->stacks, gone[i], 0));
	free(gone);
	return err ? err : (long)nr;
}
