// SPDX-License-Identifier: GPL-2.0-only
/*
 * A profile's lines weighed (profile_priv.h): the lines of time no stack was
 * walked for (unwalked off-CPU time, steal), then each thread's lines in each
 * state given whole us that add up exactly to its measured time.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "profile.h"
#include "profile_priv.h"
#include "util.h"

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
int builder_add_steal(struct builder *b)
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
		t = profile_find_thread(b->p, k.tid, k.start_id);
		if (!t || t->retired || !t->off_us[WPROF_STEAL])
			continue;
		m = measured_steal(b, n, &k);
		if (m) {
			m->count += b->lines[i].count;
			continue;
		}
		k.state = WPROF_STEAL;
		err = builder_add_line(b, &k, NULL, b->lines[i].count, 0, 0);
		if (err)
			return err;
	}
	return 0;
}

/* Off-CPU time of a thread and state none of whose intervals was walked. */
int builder_add_unwalked(struct builder *b)
{
	for (size_t i = 0; i < b->p->nr_threads; i++) {
		const struct thread_acct *t = &b->p->threads[i];

		for (int s = WPROF_OFF_SLEEP; s < WPROF_STATE_CNT && t->selected && !t->retired; s++) {
			struct wprof_key k = {
				.pid = t->pid, .tid = t->tid, .start_id = t->start_id, .state = s,
			};
			int err;

			if (s == WPROF_STEAL || t->has_lines[s] || !ns_to_us(t->kept_ns[s]))
				continue;
			err = builder_add_line(b, &k, NULL, 0, t->kept_ns[s], 0);
			if (err)
				return err;
			b->lines[b->nr_lines - 1].unwalked = true;
			b->p->unwalked_groups++;
			b->p->unwalked_us += ns_to_us(t->kept_ns[s]);
		}
	}
	return 0;
}

/*
 * The shares of a thread's steal lines: the steal samples measured at a
 * line's stacks (its ns), and the rest of the thread's steal split by the
 * samples of the lines builder_add_steal() made (count).
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
	const struct thread_acct *t =
		profile_find_thread(b->p, l->k.blocked.tid, l->k.blocked.start_id);
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

int builder_weigh_lines(struct builder *b)
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
