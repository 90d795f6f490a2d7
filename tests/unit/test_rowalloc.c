// SPDX-License-Identifier: GPL-2.0-only
/*
 * The unwind-row allocator: best fit, merging of neighbours, and above all
 * that a range given back is handed out again only after both a grace
 * point and ROWALLOC_GRACE_NS (a BPF walk may still read it until then).
 * A random run checks the allocator against an array that knows each
 * row's owner.
 */
#include <errno.h>
#include <stdlib.h>

#include "unit.h"
#include "rowalloc.h"

#define S ROWALLOC_GRACE_NS

static void test_fit_and_merge(void)
{
	struct rowalloc *a = rowalloc__new(100);
	struct rowalloc_stats st;
	__u32 x, y, z, w;

	CHECK(a, "made");
	CHECK(!rowalloc__get(a, 10, 0, &x) && x == 0, "first range at 0");
	CHECK(!rowalloc__get(a, 20, 0, &y) && y == 10, "second right after");
	CHECK(!rowalloc__get(a, 30, 0, &z) && z == 30, "third right after");
	CHECK(rowalloc__get(a, 41, 0, &w) == -ENOSPC, "41 rows do not fit in the 40 left");
	CHECK(rowalloc__get(a, 0, 0, &w) == -EINVAL, "0 rows refused");
	CHECK(!rowalloc__put(a, 0, 10, 0) && !rowalloc__put(a, 30, 30, 0), "two given back");
	rowalloc__stats(a, &st);
	CHECK_EQ_U64(st.quarantined, 40, "both quarantined");
	CHECK_EQ_U64(st.used, 20, "20 rows still used");
	CHECK_EQ_U64(st.free, 40, "free: only the never-used 40");
	rowalloc__grace(a, 2 * S);
	rowalloc__stats(a, &st);
	CHECK_EQ_U64(st.quarantined, 0, "free after a grace point and a second");
	CHECK_EQ_U64(st.largest, 70, "[30,60) merged with the never-used [60,100)");
	/* free now: [0,10) [30,100): best fit for 8 is the 10 at 0 */
	CHECK(!rowalloc__get(a, 8, 2 * S, &w) && w == 0, "best fit: the smallest range that holds it");
	CHECK(!rowalloc__put(a, 10, 20, 2 * S), "the middle one given back");
	rowalloc__grace(a, 4 * S);
	rowalloc__stats(a, &st);
	CHECK_EQ_U64(st.largest, 92, "[8,30) merged with both neighbours into [8,100)");
	CHECK(!rowalloc__get(a, 92, 4 * S, &w) && w == 8, "all of it handed out at once");
	rowalloc__stats(a, &st);
	CHECK(st.free == 0 && st.used == 100, "the array is full");
	CHECK(rowalloc__get(a, 1, 4 * S, &w) == -ENOSPC, "full: no row more");
	rowalloc__free(a);
}

static void test_quarantine(void)
{
	struct rowalloc *a = rowalloc__new(10);
	__u32 x, y;

	CHECK(!rowalloc__get(a, 10, 0, &x), "the whole array");
	CHECK(!rowalloc__put(a, 0, 10, 100), "given back at 100 ns");
	CHECK(rowalloc__get(a, 1, 100 + 10 * S, &y) == -ENOSPC,
	      "ten seconds later but no grace point: still held");
	rowalloc__grace(a, 100 + S / 2);
	CHECK(rowalloc__get(a, 1, 100 + S / 2, &y) == -ENOSPC,
	      "a grace point, half a second later: still held");
	CHECK(!rowalloc__get(a, 10, 100 + S, &y) && y == 0,
	      "a second after, the grace point past: handed out again");
	rowalloc__free(a);
	/* a grace point that came before the put does not count for it */
	a = rowalloc__new(10);
	CHECK(!rowalloc__get(a, 10, 0, &x), "the whole array");
	rowalloc__grace(a, 0);
	CHECK(!rowalloc__put(a, 0, 10, 1), "given back after a grace point");
	CHECK(rowalloc__get(a, 1, 10 * S, &y) == -ENOSPC,
	      "the earlier grace point does not free it, however long after");
	rowalloc__grace(a, 10 * S);
	CHECK(!rowalloc__get(a, 1, 10 * S, &y), "the next one does");
	rowalloc__free(a);
}

static void test_bad_puts(void)
{
	struct rowalloc *a = rowalloc__new(10);
	__u32 x;

	CHECK(!rowalloc__get(a, 4, 0, &x), "4 rows");
	CHECK(rowalloc__put(a, 4, 2, 0) == -EINVAL, "rows never handed out refused");
	CHECK(rowalloc__put(a, 8, 4, 0) == -EINVAL, "a range past the end refused");
	CHECK(!rowalloc__put(a, 0, 4, 0), "given back");
	CHECK(rowalloc__put(a, 0, 4, 0) == -EINVAL, "given back twice: refused");
	rowalloc__free(a);
}

/*
 * Random gets and puts against an owner per row: a range handed out is
 * free in the model (never another's, never held), and held rows are never
 * handed out before their time.
 */
static void test_random(void)
{
	enum { CAP = 4096, MAXR = 64 };
	struct { __u32 first, nr; } live[MAXR];
	static __u64 freed_ns[CAP], freed_epoch[CAP];
	static int owner[CAP]; /* 0 free, -1 held, else a live index + 1 */
	struct rowalloc *a = rowalloc__new(CAP);
	__u64 now = 0, epoch = 0, bad = 0, nospc_wrong = 0, gets = 0;
	struct rowalloc_stats st;
	int nr_live = 0;

	srand(31);
	for (int op = 0; op < 200000; op++) {
		int r = rand() % 100;

		now += S / 50;
		if (r < 2) {
			rowalloc__grace(a, now);
			epoch++;
			for (int i = 0; i < CAP; i++)
				if (owner[i] == -1 && freed_epoch[i] < epoch && now - freed_ns[i] >= S)
					owner[i] = 0;
		} else if (r < 50 && nr_live < MAXR) {
			__u32 n = 1 + rand() % 300, first;
			int err = rowalloc__get(a, n, now, &first);
			__u32 run = 0, best = 0;

			/* the model's free rows: is there a run of n? */
			for (int i = 0; i < CAP; i++) {
				bool f = owner[i] == 0 || (owner[i] == -1 && freed_epoch[i] < epoch &&
							   now - freed_ns[i] >= S);

				run = f ? run + 1 : 0;
				best = run > best ? run : best;
			}
			if (err) {
				nospc_wrong += err != -ENOSPC || best >= n;
				continue;
			}
			gets++;
			for (__u32 i = first; i < first + n; i++) {
				bad += owner[i] > 0 || (owner[i] == -1 && (freed_epoch[i] >= epoch ||
									  now - freed_ns[i] < S));
				owner[i] = nr_live + 1;
			}
			live[nr_live].first = first;
			live[nr_live++].nr = n;
		} else if (nr_live) {
			int k = rand() % nr_live;

			if (rowalloc__put(a, live[k].first, live[k].nr, now)) {
				bad++;
				continue;
			}
			for (__u32 i = live[k].first; i < live[k].first + live[k].nr; i++) {
				owner[i] = -1;
				freed_ns[i] = now;
				freed_epoch[i] = epoch;
			}
			live[k] = live[--nr_live];
			if (k < nr_live) /* the last one moved to k */
				for (__u32 i = live[k].first; i < live[k].first + live[k].nr; i++)
					owner[i] = k + 1;
		}
	}
	CHECK(gets > 10000, "%llu ranges handed out", (unsigned long long)gets);
	CHECK_EQ_U64(bad, 0, "no range handed out over a live or quarantined row");
	CHECK_EQ_U64(nospc_wrong, 0, "-ENOSPC only when no free run is long enough (merged)");
	rowalloc__stats(a, &st);
	CHECK_EQ_U64(st.used + st.quarantined + st.free, CAP, "every row is used, held or free");
	rowalloc__free(a);
}

int main(void)
{
	test_fit_and_merge();
	test_quarantine();
	test_bad_puts();
	test_random();
	return unit_done();
}
