// SPDX-License-Identifier: GPL-2.0-only
/*
 * The session's maps drained while recording and once more at the end, the
 * ended threads made into lines (retire), stack lookups: see session.h.
 */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "held.h"
#include "hmap.h"
#include "session.h"
#include "pyproc.h"
#include "session_priv.h"
#include "store.h"
#include "util.h"
#include "wprof.skel.h"

/*
 * Make @inner the map the programs add to, in slot 0 of @outer. The kernel
 * waits for every program running to finish before it returns
 * (synchronize_rcu() after an update of a map of maps): from then on
 * nothing writes the map that was there before.
 */
int session_set_active(struct bpf_map *outer, struct bpf_map *inner)
{
	__u32 zero = 0;
	int fd = bpf_map__fd(inner);

	if (bpf_map__update_elem(outer, &zero, sizeof(zero), &fd, sizeof(fd), BPF_ANY))
		return -errno;
	return 0;
}

/*
 * Draining. The programs sum into maps of fixed size; under process churn
 * (`-a`, a build) the keys of threads that have ended would fill them. So
 * while recording, user space takes their content into its store (see
 * store.h) every second or so, and once more after detaching:
 * - counts and wakes: the pair's other map is put in use (session_set_active()
 *   waits for the programs running), then the one taken out is read and
 *   emptied; nothing writes it any more, so no addition is lost;
 * - stacks: never written once stored (an id is a hash of the frames), so
 *   an entry copied and deleted loses nothing; a later walk of the same
 *   stack stores it again, under the same id;
 * - threads: only the entries of threads that ended (exit_ns), taken after
 *   the switch above, so that the program that saw the end has finished;
 *   nothing writes them afterwards. Live threads' entries stay.
 */
#define DRAIN_BATCH 256

typedef int (*take_fn)(struct session *s, const void *key, const void *val);

/*
 * Read every entry of @fd, or with @del take them out (the map must not be
 * written meanwhile, or its values not changed in place), in batches. The
 * number of entries, or -errno.
 */
static long take_entries(struct session *s, int fd, __u32 key_size, __u32 val_size, bool del,
			 take_fn fn)
{
	char *keys = malloc((size_t)DRAIN_BATCH * key_size);
	char *vals = malloc((size_t)DRAIN_BATCH * val_size);
	__u32 batch = 0, n, nr_batch = DRAIN_BATCH;
	bool first = true, done = false;
	long total = 0;
	int err = 0;

	if (!keys || !vals) {
		err = -ENOMEM;
		goto out;
	}
	while (!done) {
		n = nr_batch;
		if (del)
			err = bpf_map_lookup_and_delete_batch(fd, first ? NULL : &batch, &batch, keys,
							      vals, &n, NULL);
		else
			err = bpf_map_lookup_batch(fd, first ? NULL : &batch, &batch, keys, vals,
						   &n, NULL);
		if (err == -ENOENT) {
			done = true; /* the last batch, perhaps not empty */
			err = 0;
		} else if (err == -ENOSPC && !n && nr_batch < DRAIN_BATCH * 64) {
			/* one bucket holds more keys than a batch: a larger one */
			nr_batch *= 2;
			free(keys);
			free(vals);
			keys = malloc((size_t)nr_batch * key_size);
			vals = malloc((size_t)nr_batch * val_size);
			if (!keys || !vals) {
				err = -ENOMEM;
				goto out;
			}
			continue;
		} else if (err) {
			goto out;
		}
		first = false;
		for (__u32 i = 0; i < n && !err; i++)
			err = fn(s, keys + (size_t)i * key_size, vals + (size_t)i * val_size);
		if (err)
			goto out;
		total += n;
	}
out:
	free(keys);
	free(vals);
	return err ? err : total;
}

static int take_count(struct session *s, const void *key, const void *val)
{
	return store__add_count(s->store, key, val);
}

static int take_wake(struct session *s, const void *key, const void *val)
{
	return store__add_wake(s->store, key, val);
}

static int take_stack(struct session *s, const void *key, const void *val)
{
	return store__add_stack(s->store, *(const __u64 *)key, val);
}

/* A thread entry: the ended ones are noted for after the switch of counts. */
struct ended {
	__u32 *tids;
	size_t nr, cap;
};

static int note_ended(struct session *s, const void *key, const void *val)
{
	const struct wprof_thread *t = val;
	struct ended *e = s->ended;

	if (!t->exit_ns)
		return 0;
	if (array_reserve(&e->tids, &e->cap, e->nr, sizeof(*e->tids), 256))
		return -ENOMEM;
	e->tids[e->nr++] = *(const __u32 *)key;
	return 0;
}

/* Ended threads whose tid a new thread took over before they were drained (bpf/thread.bpf.h). */
static int take_reused(struct session *s)
{
	int fd = bpf_map__fd(s->skel->maps.reused_threads);
	struct wprof_thread t;

	while (!bpf_map_lookup_and_delete_elem(fd, NULL, &t)) {
		int err = store__add_thread(s->store, &t);

		if (err)
			return err;
		s->drains.threads++;
	}
	return errno == ENOENT ? 0 : -errno;
}

static int take_thread(struct session *s, const void *key, const void *val)
{
	return store__add_thread(s->store, val);
}

static int take_slot(struct session *s, const void *key, const void *val)
{
	const struct wprof_thread *t = val;

	/* neither free, nor being written, nor retired (its entry is in the hash) */
	return t->tid && !(t->tid & WPROF_SLOT_MARK) ? s->slot_fn(s, &t->tid, val) : 0;
}

/*
 * The entries in thread slots, each to @fn as an entry of the hash is (keyed
 * by its tid); free slots left out. Read before the hash: an entry that
 * moves from its slot to the hash meanwhile (its thread ended) is in the
 * hash by the time its slot is free.
 */
static long take_slots(struct session *s, take_fn fn)
{
	long n;

	s->slot_fn = fn;
	n = take_entries(s, bpf_map__fd(s->skel->maps.thread_slots), sizeof(__u32),
			 sizeof(struct wprof_thread), false, take_slot);
	s->slot_fn = NULL;
	return n;
}

static int max_int(int a, int b)
{
	return a > b ? a : b;
}

/* How full @map was, in percent, holding @nr entries. */
static int fill_pct(const struct bpf_map *map, long nr)
{
	__u32 max = bpf_map__max_entries(map);

	return max ? (int)(nr * 100 / max) : 0;
}

/* Switch the pair of @outer to its spare map and empty the one taken out. */
static long take_pair(struct session *s, struct bpf_map *outer, struct bpf_map *a,
		      struct bpf_map *b, bool *spare_a, take_fn fn, bool final)
{
	struct bpf_map *out = *spare_a ? b : a, *in = *spare_a ? a : b;
	long n, m;
	int err;

	if (final) { /* detached: both maps are still */
		n = take_entries(s, bpf_map__fd(out), bpf_map__key_size(out),
				 bpf_map__value_size(out), true, fn);
		m = n < 0 ? 0 : take_entries(s, bpf_map__fd(in), bpf_map__key_size(in),
					     bpf_map__value_size(in), true, fn);
		return n < 0 ? n : m < 0 ? m : n + m;
	}
	err = session_set_active(outer, in);
	if (err)
		return err;
	*spare_a = !*spare_a;
	return take_entries(s, bpf_map__fd(out), bpf_map__key_size(out),
			    bpf_map__value_size(out), true, fn);
}

/*
 * `-- CMD`: the processes it forked are added to `targets` (4096 entries) by
 * the BPF side; those that ended are taken out, or a command that runs more
 * processes than that (a build) would have the later ones go unrecorded.
 * A pid is reused only after pid_max others: it is gone for good here.
 */
static void prune_targets(struct session *s)
{
	int fd = bpf_map__fd(s->skel->maps.targets);
	__u32 key, next, *gone = NULL;
	size_t nr = 0, cap = 0;
	bool first = true;

	while (!bpf_map_get_next_key(fd, first ? NULL : &key, &next)) {
		first = false;
		key = next;
		if (!kill(key, 0) || errno != ESRCH)
			continue;
		if (array_reserve(&gone, &cap, nr, sizeof(*gone), 64))
			break;
		gone[nr++] = key;
	}
	for (size_t i = 0; i < nr; i++)
		bpf_map_delete_elem(fd, &gone[i]);
	free(gone);
}

int session__drain(struct session *s, bool final)
{
	struct wprof_bpf *k = s->skel;
	struct ended ended = {};
	long n;
	int pct = 0, err = 0;

	if (s->drained_final)
		return 0;
	s->ended = &ended;
	/*
	 * Detached, but a program may still be running (a link's release does
	 * not wait for it): setting the active map again waits for them.
	 */
	if (final) {
		err = session_set_active(k->maps.counts,
				 s->counts_spare_a ? k->maps.counts_b : k->maps.counts_a);
		if (err)
			goto out;
	}
	if (!final && s->opts->cmd)
		prune_targets(s);
	/* threads that ended, before the switch that lets their last program finish */
	n = final ? 0 : take_entries(s, bpf_map__fd(k->maps.threads), sizeof(__u32),
				     sizeof(struct wprof_thread), false, note_ended);
	if (n < 0) {
		err = n;
		goto out;
	}
	/* what draining frees: live threads' entries stay, however many */
	pct = fill_pct(k->maps.threads, ended.nr);
	n = take_pair(s, k->maps.counts, k->maps.counts_a, k->maps.counts_b, &s->counts_spare_a,
		      take_count, final);
	if (n < 0) {
		err = n;
		goto out;
	}
	/* the switch waited for every program running: see slot_claim() */
	if (!final)
		k->bss->slot_epoch++;
	if (!final) {
		pct = max_int(pct, fill_pct(k->maps.counts_a, n));
		if (s->opts->wakers) {
			n = take_pair(s, k->maps.wakes, k->maps.wakes_a, k->maps.wakes_b,
				      &s->wakes_spare_a, take_wake, false);
			if (n < 0) {
				err = n;
				goto out;
			}
			pct = max_int(pct, fill_pct(k->maps.wakes_a, n));
		}
	} else if (s->opts->wakers) {
		n = take_pair(s, k->maps.wakes, k->maps.wakes_a, k->maps.wakes_b,
			      &s->wakes_spare_a, take_wake, true);
		if (n < 0) {
			err = n;
			goto out;
		}
	}
	for (size_t i = 0; i < ended.nr; i++) {
		int fd = bpf_map__fd(k->maps.threads);
		struct wprof_thread t;

		if (bpf_map_lookup_and_delete_elem(fd, &ended.tids[i], &t))
			continue; /* cannot happen: nothing else deletes */
		/*
		 * A new thread of the tid took the entry over since it was noted
		 * (thread_reuse(): the ended one is in reused_threads): its own,
		 * live, goes back, unless its next event made another already.
		 */
		if (!t.exit_ns && !bpf_map_update_elem(fd, &ended.tids[i], &t, BPF_NOEXIST))
			continue;
		err = store__add_thread(s->store, &t);
		if (err)
			goto out;
		s->drains.threads++;
	}
	err = take_reused(s);
	if (err)
		goto out;
	if (final) {
		n = take_slots(s, take_thread);
		if (n >= 0)
			n = take_entries(s, bpf_map__fd(k->maps.threads), sizeof(__u32),
					 sizeof(struct wprof_thread), false, take_thread);
		if (n < 0) {
			err = n;
			goto out;
		}
	}
	n = take_entries(s, bpf_map__fd(k->maps.stacks), sizeof(__u64),
			 sizeof(struct wprof_stack), true, take_stack);
	if (n < 0) {
		err = n;
		goto out;
	}
	pct = max_int(pct, fill_pct(k->maps.stacks, n));
	s->drains.stacks += n;
	if (final)
		s->drained_final = true;
	else
		s->drains.drains++;
	if (pct > s->drains.max_fill_pct)
		s->drains.max_fill_pct = pct;
	/* the code objects the stacks name (the last time, once no program runs) */
	pyproc__take_codes(s->py);
out:
	free(ended.tids);
	s->ended = NULL;
	return err ? err : pct;
}

__u64 session__slice_ns(const struct session *s)
{
	return s->opts->slice_ns << store__shift(s->store);
}

int session__coarsen(struct session *s)
{
	return store__coarsen(s->store);
}

int session__for_each_count(struct session *s, session_count_fn fn, void *ctx)
{
	return store__for_each_count(s->store, fn, ctx);
}

int session__for_each_thread(struct session *s, session_thread_fn fn, void *ctx)
{
	return store__for_each_thread(s->store, fn, ctx);
}

int session__for_each_wake(struct session *s, session_wake_fn fn, void *ctx)
{
	return store__for_each_wake(s->store, fn, ctx);
}

/* What session__retire() found still named: stack ids and pids. */
struct in_use {
	struct hmap *ids, *pids;
	int err;
};

static void use(struct hmap *h, __u64 k, int *err)
{
	void *old;

	if (k && !*err && !hmap__get(h, k, 0))
		*err = hmap__put(h, k, 0, (void *)1, &old);
}

static void use_key(struct in_use *u, const struct wprof_key *k)
{
	use(u->ids, k->ustack_id, &u->err);
	use(u->ids, k->kstack_id, &u->err);
	use(u->pids, k->pid, &u->err);
}

static int use_count(const struct wprof_key *k, const struct wprof_val *v, void *ctx)
{
	use_key(ctx, k);
	return 0;
}

static int use_wake(const struct wprof_wake_key *k, const struct wprof_val *v, void *ctx)
{
	struct in_use *u = ctx;

	use_key(u, &k->blocked);
	use(u->ids, k->waker_ustack_id, &u->err);
	use(u->ids, k->waker_kstack_id, &u->err);
	use(u->pids, k->waker_pid, &u->err);
	return 0;
}

static int use_thread(const struct wprof_thread *t, void *ctx)
{
	struct in_use *u = ctx;
	const __u64 ids[] = {
		t->ustack_id, t->kstack_id, t->waker_ustack_id, t->waker_kstack_id,
		t->end_ustack_id, t->end_kstack_id, t->pend.kstack_id,
	};

	for (size_t i = 0; i < ARRAY_SIZE(ids); i++)
		use(u->ids, ids[i], &u->err);
	use(u->pids, t->pid, &u->err);
	use(u->pids, t->waker_pid, &u->err);
	return 0;
}

/* take_entries() callbacks: the maps the BPF side still writes, read in place. */
static int use_live_thread(struct session *s, const void *key, const void *val)
{
	return use_thread(val, s->in_use);
}

static int use_live_count(struct session *s, const void *key, const void *val)
{
	return use_count(key, val, s->in_use);
}

int session__retire(struct session *s, size_t min_threads, session_thread_fn thread_fn,
		    session_count_fn count_fn, void *ctx, struct hmap *busy)
{
	struct wprof_bpf *k = s->skel;
	struct bpf_map *active = s->counts_spare_a ? k->maps.counts_b : k->maps.counts_a;
	struct hmap ids = {};
	struct in_use u = { .ids = &ids, .pids = busy };
	size_t before = store__nr_threads(s->store);
	long n;
	int err;

	if (s->opts->wakers || s->drained_final)
		return 0;
	if (store__ripen(s->store) < min_threads)
		return 0;
	err = store__take_ended(s->store, thread_fn, count_fn, ctx);
	s->drains.retired += before - store__nr_threads(s->store);
	if (err)
		return err;
	/*
	 * What still names a stack or a process: the store's keys and threads,
	 * and on the BPF side the live threads' entries (stacks they will reuse)
	 * and the keys written since the drain.
	 */
	store__for_each_count(s->store, use_count, &u);
	store__for_each_wake(s->store, use_wake, &u);
	store__for_each_thread(s->store, use_thread, &u);
	s->in_use = &u;
	n = take_slots(s, use_live_thread);
	if (n >= 0)
		n = take_entries(s, bpf_map__fd(k->maps.threads), sizeof(__u32),
				 sizeof(struct wprof_thread), false, use_live_thread);
	if (n >= 0)
		n = take_entries(s, bpf_map__fd(active), bpf_map__key_size(active),
				 bpf_map__value_size(active), false, use_live_count);
	s->in_use = NULL;
	err = n < 0 ? n : u.err;
	if (!err) {
		n = store__sweep_stacks(s->store, &ids);
		err = n < 0 ? n : 0;
		if (n >= 0) /* forgets no copy whose stack the store keeps */
			held__sweep(s->held, &ids);
		s->drains.stacks_freed += n > 0 ? n : 0;
	}
	hmap__clear(&ids);
	return err ? err : 1;
}

int session__stack(struct session *s, __u64 id, bool user, struct wprof_stack *out)
{
	int err = store__stack(s->store, id, out);

	if (!err && user)
		held__frames(s->held, id, out);
	return err;
}

void session__drain_stats(const struct session *s, struct session_drain_stats *out)
{
	*out = s->drains;
	out->stacks_kept = store__nr_stacks(s->store);
}
