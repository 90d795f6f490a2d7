// SPDX-License-Identifier: GPL-2.0-only
/* profile__compact(): the rows of ended processes let go, the summary's figures kept. */
#include <stdbool.h>
#include <stdlib.h>

#include "../../src/hmap.h"
#include "../../src/profile.h"
#include "unit.h"

#define NR_ENDED 16

/*
 * A profile of: a live process (pid 50, threads 50 and 51, the second not
 * retired yet), NR_ENDED ended processes of one or two threads (pid 100 + i,
 * busy i ms, so the busiest are the last), one ended process with no
 * selected thread (pid 300), and an ended one -p named (pid 400). Sorted by
 * tid, as the profile keeps them.
 */
static void fill(struct profile *p)
{
	size_t n = 0;

	memset(p, 0, sizeof(*p));
	p->threads = calloc(64, sizeof(*p->threads));
	if (!p->threads)
		abort();
	for (__u32 tid = 50; tid <= 51; tid++)
		p->threads[n++] = (struct thread_acct){ .pid = 50, .tid = tid, .on_ns = 7000,
							.wall_ns = 9000, .selected = true,
							.retired = tid == 50 };
	for (__u32 i = 0; i < NR_ENDED; i++) {
		struct thread_acct t = { .pid = 100 + i, .tid = 100 + i, .on_ns = i * 1000000ULL,
					 .wall_ns = 5000000, .selected = true, .retired = true };

		p->threads[n++] = t;
		if (i % 2) { /* a second thread: tid 200 + i */
			t.tid = 200 + i;
			t.on_ns = 1;
			p->threads[n++] = t;
		}
	}
	p->threads[n++] = (struct thread_acct){ .pid = 300, .tid = 300, .on_ns = 99000000,
						.retired = true };
	p->threads[n++] = (struct thread_acct){ .pid = 400, .tid = 400, .on_ns = 3,
						.selected = true, .retired = true };
	p->nr_threads = n;
	/* by tid: 50, 51, 100..115, then 201, 203, ... mixed in: sort */
	for (size_t i = 1; i < n; i++)
		for (size_t j = i; j > 0 && p->threads[j - 1].tid > p->threads[j].tid; j--) {
			struct thread_acct x = p->threads[j];

			p->threads[j] = p->threads[j - 1];
			p->threads[j - 1] = x;
		}
}

static bool has_pid(const struct profile *p, __u32 pid)
{
	for (size_t i = 0; i < p->nr_threads; i++)
		if (p->threads[i].pid == pid)
			return true;
	return false;
}

static void test_compact(void)
{
	__u32 ids[] = { 400 };
	struct record_opts o = { .filter = WPROF_FILTER_PID, .nr_ids = 1, .ids = ids };
	struct hmap busy = {}, gone = {};
	struct thread_acct *procs;
	struct profile p;
	size_t procs_before, shown_before;
	__u64 on_before = 0, on_after = 0;
	bool sorted = true;
	void *old;
	long n;

	o.outputs[0].format = FORMAT_FOLDED;
	o.nr_outputs = 1;
	fill(&p);
	procs_before = profile__processes(&p, &procs);
	free(procs);
	shown_before = profile__threads_shown(&p);
	for (size_t i = 0; i < p.nr_threads; i++)
		on_before += p.threads[i].on_ns;
	hmap__put(&busy, 50, 0, (void *)1, &old);

	n = profile__compact(&p, &o, &busy, &gone);
	/* ended: 16 shown + pid 300; the 10 busiest shown stay: pids 106..115 */
	CHECK_EQ_S64(n, 6 + 3 + 1, "rows let go: pids 100..105 (3 of them with 2 threads) and 300");
	for (__u32 i = 0; i < NR_ENDED; i++)
		CHECK(has_pid(&p, 100 + i) == (i >= NR_ENDED - PROFILE_TOP_PROCS),
		      "pid %u: kept only if among the %d busiest ended", 100 + i, PROFILE_TOP_PROCS);
	CHECK(has_pid(&p, 50) && has_pid(&p, 400), "the live process and the named target stay");
	CHECK(!has_pid(&p, 300), "the ended process with no selected thread goes");
	CHECK(hmap__get(&gone, 300, 0) && hmap__get(&gone, 100, 0) && !hmap__get(&gone, 106, 0),
	      "the pids let go are said");
	CHECK_EQ_U64(p.dropped_procs, 6, "processes let go that the summary counts");
	CHECK_EQ_U64(p.dropped_threads, 9, "selected threads let go");
	CHECK_EQ_U64(p.dropped_left_out, 1, "not selected threads let go");
	/* as profile__build() sets it: the kept rows are all selected; before, pid 300's */
	p.threads_left_out = p.dropped_left_out;
	shown_before -= 1;
	CHECK_EQ_U64(profile__threads_shown(&p), shown_before, "threads shown, as before");
	CHECK_EQ_U64(profile__processes(&p, &procs) + p.dropped_procs, procs_before,
		     "processes shown, as before");
	free(procs);
	for (size_t i = 0; i < p.nr_threads; i++) {
		on_after += p.threads[i].on_ns;
		sorted &= !i || p.threads[i - 1].tid <= p.threads[i].tid;
	}
	CHECK_EQ_U64(on_after + p.dropped_on_ns, on_before, "on-CPU time, as before");
	CHECK(sorted, "rows still by tid");
	CHECK(profile__dropped(&p, 201, 0) && profile__dropped(&p, 300, 0) &&
	      !profile__dropped(&p, 106, 0) && !profile__dropped(&p, 51, 0) &&
	      !profile__dropped(&p, 201, 1),
	      "the threads let go are remembered, no other (tid 201 of another start: no)");

	n = profile__compact(&p, &o, &busy, NULL);
	CHECK_EQ_S64(n, 0, "again: nothing more to let go");

	o.outputs[1].format = FORMAT_THREADS;
	o.nr_outputs = 2;
	hmap__clear(&busy);
	n = profile__compact(&p, &o, &busy, NULL);
	CHECK_EQ_S64(n, 0, "-f threads lists every thread: no row goes");
	hmap__clear(&gone);
	profile__free(&p);
}


/*
 * Reused tids are counted as before when rows go: tid 500 was a thread of
 * pid 500 (ended, let go), then of pid 600 (alive); tid 700 of pid 700 (let
 * go), then of a thread made later, twice.
 */
static void test_reused_tids(void)
{
	struct record_opts o = { .filter = WPROF_FILTER_ALL };
	struct hmap busy = {};
	struct profile p;
	size_t n = 0;
	void *old;

	o.outputs[0].format = FORMAT_FOLDED;
	o.nr_outputs = 1;
	memset(&p, 0, sizeof(p));
	p.threads = calloc(PROFILE_TOP_PROCS + 8, sizeof(*p.threads));
	if (!p.threads)
		abort();
	p.threads[n++] = (struct thread_acct){ .pid = 500, .tid = 500, .start_id = 1,
					       .selected = true, .retired = true };
	p.threads[n++] = (struct thread_acct){ .pid = 600, .tid = 500, .start_id = 2,
					       .selected = true, .retired = true };
	p.threads[n++] = (struct thread_acct){ .pid = 700, .tid = 700, .start_id = 1,
					       .selected = true, .retired = true };
	for (__u32 i = 0; i < PROFILE_TOP_PROCS; i++) /* the busiest: kept */
		p.threads[n++] = (struct thread_acct){ .pid = 1000 + i, .tid = 1000 + i,
						       .on_ns = 1000000, .selected = true,
						       .retired = true };
	p.nr_threads = n;
	hmap__put(&busy, 600, 0, (void *)1, &old);
	CHECK_EQ_U64(profile__reused_tids(&p), 1, "before: tid 500 twice");
	CHECK_EQ_S64(profile__compact(&p, &o, &busy, NULL), 2, "pids 500 and 700 let go");
	CHECK_EQ_U64(profile__reused_tids(&p), 1, "after: still once, though tid 500's rows are apart");
	CHECK(profile__dropped(&p, 500, 1) && !profile__dropped(&p, 500, 2),
	      "the thread let go is late, not the live one of its tid");
	profile__note_tid(&p, 700);
	CHECK_EQ_U64(profile__reused_tids(&p), 2, "a row made for tid 700: a reuse");
	profile__note_tid(&p, 700);
	CHECK_EQ_U64(profile__reused_tids(&p), 2, "another: it is beside the first in the rows, not counted here");
	profile__note_tid(&p, 500);
	CHECK_EQ_U64(profile__reused_tids(&p), 2, "tid 500 has a row left: not counted here either");
	hmap__clear(&busy);
	profile__free(&p);
}

/* The shared arithmetic of include/wprof.h against its definition. */
static void test_shared_math(void)
{
	static const __u64 us[] = { 0, 1, 2, 3, 4, 7, 8, 1023, 1024, 1025, 65535, 65536,
				    0xffffffffULL, 0x100000000ULL, ~0ULL };
	bool same = true;

	for (size_t i = 0; i < sizeof(us) / sizeof(us[0]); i++) {
		__u32 want = 0;

		for (__u64 v = us[i]; v > 1 && want < WPROF_HIST_SLOTS - 1; v >>= 1)
			want++;
		same &= wprof_hist_slot(us[i]) == want;
		/* every power of two and its neighbours, to 2^40 */
		for (int k = 0; k < 40; k++) {
			__u64 v = 1ULL << k;
			__u32 w = k < WPROF_HIST_SLOTS ? k : WPROF_HIST_SLOTS - 1;

			same &= wprof_hist_slot(v) == w && wprof_hist_slot(v * 2 - 1) ==
				(k + 1 < WPROF_HIST_SLOTS ? (__u32)k : WPROF_HIST_SLOTS - 1);
		}
	}
	CHECK(same, "log2 buckets: floor(log2(us)), 0 for 0 and 1, the last at most");
	CHECK_EQ_U64(wprof_interval_split(100, 200, 150, WPROF_OFF_SLEEP), 150,
		     "a blocked interval splits at its wakeup");
	CHECK_EQ_U64(wprof_interval_split(100, 200, 0, WPROF_OFF_DISK), 200,
		     "no wakeup known: all blocked");
	CHECK_EQ_U64(wprof_interval_split(100, 200, 250, WPROF_OFF_SLEEP), 200,
		     "a wakeup after the end: all blocked");
	CHECK_EQ_U64(wprof_interval_split(100, 200, 50, WPROF_OFF_SLEEP), 200,
		     "a wakeup before the start: all blocked");
	CHECK_EQ_U64(wprof_interval_split(100, 200, 150, WPROF_OFF_RUNQ), 100,
		     "a runqueue interval: all wait");
}

int main(void)
{
	test_shared_math();
	test_compact();
	test_reused_tids();
	return unit_done();
}
