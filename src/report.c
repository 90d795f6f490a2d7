// SPDX-License-Identifier: GPL-2.0-only
/* The summary on stderr, `-f threads` and `-f json`: see report.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "flame.h"
#include "hmap.h"
#include "longblocks.h"
#include "report.h"
#include "perfmap.h"
#include "recline.h"
#include "safestr.h"
#include "stackcap.h"
#include "statnames.h"
#include "timeline.h"
#include "util.h"
#include "zsects.h"

/* The processes, and threads of each, the summary names; --stats: more */
#define SUMMARY_PROCS 3
#define SUMMARY_THREADS 5
#define STATS_PROCS PROFILE_TOP_PROCS
#define STATS_THREADS 10

/*
 * Every loss counter: its name (the JSON report's key, the summary's
 * bracket), its value in a recording (r, p = &r->prof, st = r->stats), and
 * the words the summary says it in, with what to do about it (NULL: not a
 * loss, said otherwise). One row each, in the JSON report's order.
 */
#define LOSSES(X) \
	X(user_stack_errors, st[WPROF_STAT_USTACK_ERR], \
	  "user stacks the kernel failed to read") \
	X(kernel_stack_errors, st[WPROF_STAT_KSTACK_ERR], \
	  "kernel stacks the kernel failed to read") \
	X(user_stacks_truncated, st[WPROF_STAT_USTACK_TRUNC], \
	  "user stacks cut at the deepest frame wprof walks") \
	X(kernel_stacks_truncated, st[WPROF_STAT_KSTACK_TRUNC], \
	  "kernel stacks cut at the kernel's depth limit") \
	X(stack_map_full, st[WPROF_STAT_STACKS_FULL], \
	  "stacks dropped because the stack map was full (record a shorter window " \
	  "or fewer threads)") \
	X(counts_map_full, st[WPROF_STAT_COUNTS_FULL], \
	  "stack counts dropped because the counts map was full (record a shorter " \
	  "window or fewer threads)") \
	X(waker_map_full, st[WPROF_STAT_WAKES_FULL], \
	  "waker stacks dropped because the waker map was full (record a shorter " \
	  "window, or without --wakers)") \
	X(thread_map_full, st[WPROF_STAT_THREADS_FULL], \
	  "threads not accounted because the thread map was full (record fewer " \
	  "threads: -p or -t rather than -a)") \
	X(user_stacks_cut, st[WPROF_STAT_USTACK_CUT], \
	  "user stacks that stop before the thread's first frame (their root frame " \
	  "says why; --stats counts them by cause)") \
	X(user_stacks_none, st[WPROF_STAT_USTACK_NONE], \
	  "intervals or samples with no user stack at all") \
	X(dropped_us, st[WPROF_STAT_DROPPED_NS] / 1000, \
	  "us of off-CPU time not recorded because a map was full (record a " \
	  "shorter window or fewer threads)") \
	X(user_stacks_unwalkable, st[WPROF_STAT_USER_LOST] + p->pending_lost, \
	  "user stacks not walked: the thread resumed where wprof could not walk " \
	  "it (or before wprof first saw it), or recording stopped first") \
	X(open_intervals_unwalked, p->open_unwalked, \
	  "off-CPU intervals still open at the end whose stack was not walked") \
	X(stacks_missing, p->stacks_missing, \
	  "stacks whose id the stack map no longer had") \
	X(frames_unnamed, p->frames_unnamed, \
	  NULL) \
	X(unwind_files_no_room, p->unw.files_no_room, \
	  "files whose unwind tables did not fit in the kernel's (their code " \
	  "walked by frame pointers)") \
	X(files_unopened, r->sym.files_failed, \
	  "mapped files wprof could not open (their frames are unnamed)") \
	X(bpf_runs_missed, st[WPROF_STAT_RUNS_MISSED], \
	  "BPF program runs the kernel skipped (another BPF program ran on the " \
	  "CPU; their events are missing)") \
	X(debug_files_refused, \
	  r->sym.debug_build_id_mismatch + r->sym.debug_crc_mismatch + r->sym.debug_too_big, \
	  "debug files refused as another build's (see the debug files line)") \
	X(targets_map_full, st[WPROF_STAT_TARGETS_FULL], \
	  "forked processes not followed because the targets map was full (record " \
	  "fewer processes)") \
	X(maps_inherit_failed, st[WPROF_STAT_MAPS_INHERIT_FAILED], \
	  "forked processes whose unwind maps could not be inherited (their stacks " \
	  "walked by frame pointers until read)") \
	X(unwind_procs_failed, p->unw.procs_failed, \
	  "processes whose maps could not be read or sent for unwinding") \
	X(events_lost, st[WPROF_STAT_EVENTS_LOST], \
	  "ring buffer events lost (new processes may be unnamed)") \
	X(reused_threads_lost, st[WPROF_STAT_REUSED_LOST], \
	  "threads lost because their tid was reused while recording") \
	X(thread_slot_busy, st[WPROF_STAT_SLOT_BUSY], \
	  "switches or wakeups not recorded because another CPU held the thread's " \
	  "slot (report it: it should be rare)") \
	X(late_keys, p->late_keys, \
	  "samples or off-CPU times of ended threads that came after their stacks " \
	  "were added up while recording (report it: it should not happen)") \
	X(stacks_cut_on_read, p->stacks_cut_on_read, \
	  "stacks of the file cut to " STACKCAP_WORDS " when read, the frame " \
	  STACKCAP_MARK " in place of the rest") \
	X(compressed_files_refused, r->sym.inflate_refused, \
	  "files whose compressed sections were not read: they would inflate too " \
	  "much (see the compressed sections line)") \
	X(flame_stacks_merged, p->flame_stacks_merged, \
	  "stacks drawn in part as one " FLAME_TRUNCATED " frame: the flame graph " \
	  "holds " FLAME_MAX_NODES_WORDS " frames") \
	X(long_blocks_dropped, st[WPROF_STAT_LONG_DROPPED], \
	  "long blocks not listed: only the longest " LONG_BLOCKS_MAX_WORDS " are kept " \
	  "(give a longer --long-block)") \
	X(long_blocks_lost, st[WPROF_STAT_LONG_LOST], \
	  "long blocks not listed: their ring buffer was full (their time is in the stacks)") \
	X(ran_map_full, st[WPROF_STAT_RAN_FULL], \
	  "runners of waits for a CPU not named because their map was full (their " \
	  "time is in ran_instead's [not known]; record fewer threads)") \
	X(alt_files_refused, r->sym.alt_refused, \
	  "files whose inlined calls are not named: the dwz file their DWARF links " \
	  "to was missing or refused (see the dwz files line)") \
	X(python_stacks_cut, st[WPROF_STAT_PY_CUT], \
	  "stacks whose Python frames were cut short (a frame unreadable, or deeper " \
	  "than the stack holds): shown as a [py: cut: ...] frame") \
	X(python_codes_full, st[WPROF_STAT_PY_CODES_FULL], \
	  "Python frames not named: the code objects' map was full")

enum {
#define LOSS_ENUM(name, value, words) LOSS_##name,
	LOSSES(LOSS_ENUM)
#undef LOSS_ENUM
	NR_LOSSES
};

/* A loss counter's name, value and words, for the summary and the JSON report. */
struct loss {
	const char *name, *words;
	__u64 value;
};

static void losses(const struct recording *r, struct loss out[NR_LOSSES])
{
	const struct profile *p = &r->prof;
	const __u64 *st = r->stats;

#define LOSS_ROW(n, v, w) out[LOSS_##n] = (struct loss){ #n, w, v };
	LOSSES(LOSS_ROW)
#undef LOSS_ROW
}

static double pct(__u64 part, __u64 whole)
{
	return whole ? 100.0 * part / whole : 0.0;
}

/* ", steal 2.5%": a share of @whole, where it shows at all */
static void print_share(FILE *f, const char *what, __u64 ns, __u64 whole_ns)
{
	if (pct(ns, whole_ns) >= 0.05)
		fprintf(f, ", %s %.1f%%", what, pct(ns, whole_ns));
}

/* A thread, or a process of one thread, named @name (safe text: safestr.h). */
static void print_row(FILE *f, const char *indent, const char *what, __u32 id, const char *name,
		      const struct thread_acct *t)
{
	fprintf(f, "wprof: %s%s %u (%s): wall %.3f s, on-CPU %.1f%%", indent, what, id, name,
		t->wall_ns / 1e9, pct(t->on_ns, t->wall_ns));
	print_share(f, "steal", t->off_ns[WPROF_STEAL], t->wall_ns);
	fprintf(f, ", runqueue %.1f%%", pct(t->off_ns[WPROF_OFF_RUNQ], t->wall_ns));
	print_share(f, "throttled", t->off_ns[WPROF_OFF_THROTTLED], t->wall_ns);
	fprintf(f, ", sleep %.1f%%, disk %.1f%%, %llu blocks\n",
		pct(t->off_ns[WPROF_OFF_SLEEP], t->wall_ns),
		pct(t->off_ns[WPROF_OFF_DISK], t->wall_ns), (unsigned long long)t->blocks);
}

static int cmp_wall_desc(const void *a, const void *b)
{
	const struct thread_acct *x = *(const struct thread_acct *const *)a;
	const struct thread_acct *y = *(const struct thread_acct *const *)b;

	return x->wall_ns > y->wall_ns ? -1 : x->wall_ns < y->wall_ns;
}

static int cmp_busy_desc(const void *a, const void *b)
{
	__u64 x = profile__busy_ns(*(const struct thread_acct *const *)a);
	__u64 y = profile__busy_ns(*(const struct thread_acct *const *)b);

	return x > y ? -1 : x < y ? 1 : cmp_wall_desc(a, b);
}

/* The selected threads of `pid`, ordered by @cmp. */
static size_t threads_of(const struct profile *p, __u32 pid, const struct thread_acct **out,
			 int (*cmp)(const void *, const void *))
{
	size_t n = 0;

	for (size_t i = 0; i < p->nr_threads; i++)
		if (p->threads[i].pid == pid && p->threads[i].selected)
			out[n++] = &p->threads[i];
	qsort(out, n, sizeof(*out), cmp);
	return n;
}

/* Perf maps that were not used, or not whole. */
static void print_jit(FILE *f, const struct symbolizer_stats *ss)
{
	if (ss->jit_untrusted)
		fprintf(f, "wprof: %llu perf maps ignored: not a file of the process's own user "
			"that it can read\n", (unsigned long long)ss->jit_untrusted);
	if (ss->jit_truncated)
		fprintf(f, "wprof: %llu perf maps read only up to their first %u MiB\n",
			(unsigned long long)ss->jit_truncated, PERFMAP_MAX_BYTES >> 20);
}

/* How the user stacks were walked, and every walk that stopped short, by why. */
static void print_unwind(FILE *f, const struct profile *p, const __u64 *st)
{
	static const char *const why[WPROF_CUT_CNT] = {
		[WPROF_CUT_NO_TABLE] = "process code not loaded yet (frame pointers only)",
		[WPROF_CUT_NO_CODE] = "return address not in code",
		[WPROF_CUT_BAD_RULE] = "unsupported unwind rule",
		[WPROF_CUT_READ] = "stack unreadable",
		[WPROF_CUT_LOOP] = "stack loops",
		[WPROF_CUT_DEPTH] = "deeper than 127 frames",
		/* a held stack (src/held.h) */
		[WPROF_CUT_COPY] = "went past the ~60 KiB of stack copied before the code was read",
	};

	fprintf(f, "wprof: user stacks: %llu frames from CFI, %llu by frame pointer (code "
		"without CFI); unwind tables of %llu files, %llu rows, built in %.0f ms",
		(unsigned long long)st[WPROF_STAT_CFI_FRAMES],
		(unsigned long long)st[WPROF_STAT_FP_FRAMES], (unsigned long long)p->unw.files,
		(unsigned long long)p->unw.rows, p->unw.build_ns / 1e6);
	if (p->unw.files_no_cfi)
		fprintf(f, " (%llu without .eh_frame)", (unsigned long long)p->unw.files_no_cfi);
	if (st[WPROF_STAT_HELD_WALKED])
		fprintf(f, "; %llu stacks taken before their program's code was read were walked "
			"from a copy once it was", (unsigned long long)st[WPROF_STAT_HELD_WALKED]);
	if (p->unw.rows_capacity)
		fprintf(f, "; live processes' code took at most %llu of the kernel's %llu rows",
			(unsigned long long)p->unw.rows_live_peak,
			(unsigned long long)p->unw.rows_capacity);
	if (p->unw.files_given_back)
		fprintf(f, "; the room of %llu files no process mapped given to others",
			(unsigned long long)p->unw.files_given_back);
	if (p->unw.room_waits)
		fprintf(f, " (%llu processes waited for it)", (unsigned long long)p->unw.room_waits);
	if (p->unw.files_cfi_refused)
		fprintf(f, "; %llu files' CFI refused: it names registers no CPU has (walked by "
			"frame pointers)", (unsigned long long)p->unw.files_cfi_refused);
	if (p->unw.files_inflate_refused)
		fprintf(f, "; %llu files' compressed sections not read: they would inflate to over "
			"%d times their size or %llu MiB (walked without them)",
			(unsigned long long)p->unw.files_inflate_refused, ZSECTS_RATIO,
			ZSECTS_MAX_BYTES >> 20);
	fputc('\n', f);
	if (!st[WPROF_STAT_USTACK_CUT])
		return;
	fprintf(f, "wprof: %llu user stack walks stopped before the thread's first frame "
		"(their root frame says why):", (unsigned long long)st[WPROF_STAT_USTACK_CUT]);
	for (int c = 1, n = 0; c < WPROF_CUT_CNT; c++)
		if (st[WPROF_STAT_CUT_BASE + c])
			fprintf(f, "%s %llu %s", n++ ? "," : "",
				(unsigned long long)st[WPROF_STAT_CUT_BASE + c], why[c]);
	fputc('\n', f);
}

/* How the off-CPU intervals' stacks were taken (see --exact-above). */
static void print_walks(FILE *f, const struct profile *p, const __u64 *st)
{
	__u64 exact = st[WPROF_STAT_IV_EXACT], sampled = st[WPROF_STAT_IV_SAMPLED];
	__u64 skipped = st[WPROF_STAT_IV_SKIPPED];

	if (!exact && !sampled && !skipped)
		return;
	fprintf(f, "wprof: off-CPU intervals: %llu walked exactly", (unsigned long long)exact);
	if (sampled || skipped)
		fprintf(f, ", %llu of %llu shorter ones walked as a sample (the others' time is "
			"shared out by the walked ones' weight: %llu stacks estimated)",
			(unsigned long long)sampled, (unsigned long long)(sampled + skipped),
			(unsigned long long)p->estimated_lines);
	if (p->unwalked_groups)
		fprintf(f, "; %.3f ms in %llu threads/states had no interval walked "
			"([not walked] lines)", p->unwalked_us / 1e3,
			(unsigned long long)p->unwalked_groups);
	fprintf(f, "; user stacks: %llu walked at switch-out, %llu as the thread resumed\n",
		(unsigned long long)(st[WPROF_STAT_SW_WALKED] + st[WPROF_STAT_SW_PREEMPT]),
		(unsigned long long)st[WPROF_STAT_USER_LATE]);
}

/*
 * --stats: the switches by kind, and the BPF time each kind took: the mean
 * over the switches of the kind that were timed (one in WPROF_TIMED_EVERY,
 * at random; the resume walks every one), and how many those were. A kind
 * with a few switches may have one timed, or none: its mean then says little,
 * or nothing.
 */
void report__switch_kinds(const struct recording *r, FILE *f)
{
	static const char *const names[] = {
		"other tasks", "kernel threads", "walked", "preempted",
		"deferred", "resumed+walked", "switch-in",
	};
	const __u64 *st = r->stats;
	__u64 n = 0, ns = 0;

	for (size_t k = 0; k < ARRAY_SIZE(names); k++) {
		__u64 cnt = st[WPROF_STAT_SW_OTHER + k], t = st[WPROF_STAT_NS_OTHER + k];
		__u64 timed = st[WPROF_STAT_TM_OTHER + k];
		bool every = WPROF_STAT_SW_OTHER + k == WPROF_STAT_SW_RESUMED;

		if (timed)
			fprintf(f, "wprof: switches %-14s %10llu %8.0f ns each (%llu timed)\n",
				names[k], (unsigned long long)cnt,
				(double)t / timed / (every ? 1 : WPROF_TIMED_EVERY),
				(unsigned long long)timed);
		else
			fprintf(f, "wprof: switches %-14s %10llu        - ns each (none timed)\n",
				names[k], (unsigned long long)cnt);
		if (WPROF_STAT_SW_OTHER + k != WPROF_STAT_SW_IN &&
		    WPROF_STAT_SW_OTHER + k != WPROF_STAT_SW_RESUMED)
			n += cnt;
		ns += t;
	}
	fprintf(f, "wprof: switches in all       %10llu %8.0f ns each (out and in parts; "
		"the ns timed on one switch in %d)\n",
		(unsigned long long)n, n ? (double)ns / n : 0.0, WPROF_TIMED_EVERY);
	fprintf(f, "wprof: switches timed by the clock __schedule() read %llu, by a clock read "
		"%llu; waits for a CPU timed by the run queue's clock alone (before their CPU's "
		"calibration) %llu\n", (unsigned long long)st[WPROF_STAT_TIMED_RQ],
		(unsigned long long)st[WPROF_STAT_TIMED_READ],
		(unsigned long long)st[WPROF_STAT_WAKE_RQ_CLOCK]);
}

/* A process's time: its selected threads' busy time (profile__busy_ns()), by kind. */
struct busy {
	__u32 pid;
	__u64 ns, on_ns, steal_ns, runq_ns, throttled_ns, sleep_ns, disk_ns;
	size_t threads, asleep;
	const struct thread_acct *acct; /* profile__processes()'s row */
};

static int cmp_busy(const void *a, const void *b)
{
	const struct busy *x = a, *y = b;

	if (x->ns != y->ns)
		return x->ns > y->ns ? -1 : 1;
	return x->acct->wall_ns > y->acct->wall_ns ? -1 : x->acct->wall_ns < y->acct->wall_ns;
}

/*
 * Add each selected thread to its process's entry of @busy (@nr of them):
 * one pass over the threads, the entries found by pid (-a sees thousands of
 * processes). -ENOMEM, or 0.
 */
static int sum_busy(const struct profile *p, struct busy *busy, size_t nr)
{
	struct hmap by_pid = {};
	void *old;

	for (size_t i = 0; i < nr; i++) {
		if (hmap__put(&by_pid, busy[i].pid, 0, &busy[i], &old)) {
			hmap__clear(&by_pid);
			return -ENOMEM;
		}
	}
	for (size_t i = 0; i < p->nr_threads; i++) {
		const struct thread_acct *t = &p->threads[i];
		bool asleep = profile__asleep(t);
		struct busy *b = t->selected ? hmap__get(&by_pid, t->pid, 0) : NULL;

		if (!b)
			continue;
		b->threads++;
		b->asleep += asleep;
		b->ns += profile__busy_ns(t);
		b->on_ns += t->on_ns;
		b->steal_ns += t->off_ns[WPROF_STEAL];
		b->runq_ns += t->off_ns[WPROF_OFF_RUNQ];
		b->throttled_ns += t->off_ns[WPROF_OFF_THROTTLED];
		b->disk_ns += t->off_ns[WPROF_OFF_DISK];
		b->sleep_ns += t->off_ns[WPROF_OFF_SLEEP];
	}
	hmap__clear(&by_pid);
	return 0;
}

/*
 * What to call a process: enough of its command line to tell it apart, else
 * its name; as safe text, at most 99 bytes of it. @size >= 100.
 */
static void proc_name(const struct recording *r, const struct thread_acct *pr, char *buf,
		      size_t size)
{
	const char *cmd = recording__cmdline(r, pr->pid);
	size_t max = 100;

	if (!cmd || !*cmd)
		cmd = pr->comm;
	if (safestr__text(buf, size, cmd, strlen(cmd)) < max)
		return;
	safestr__text(buf, max - 3, cmd, strlen(cmd));
	strcat(buf, "...");
}

/*
 * The busiest processes first, by on-CPU + runqueue + disk time
 * (profile__busy_ns()): idle pool threads, and a shell waiting for its
 * child, do not push a process up; threads the same way. A process of one
 * thread is one line.
 */
static void print_processes(const struct recording *r, FILE *f, bool stats)
{
	size_t max_procs = stats ? STATS_PROCS : SUMMARY_PROCS;
	size_t max_threads = stats ? STATS_THREADS : SUMMARY_THREADS, shown;
	const struct profile *p = &r->prof;
	const struct thread_acct **threads = malloc((p->nr_threads + 1) * sizeof(*threads));
	struct thread_acct *procs;
	size_t nr_procs = profile__processes(p, &procs);
	struct busy *busy = calloc(nr_procs + 1, sizeof(*busy));
	char name[128], comm[SAFESTR_SIZE(WPROF_COMM_LEN)];

	for (size_t i = 0; i < nr_procs && busy; i++) {
		busy[i].pid = procs[i].pid;
		busy[i].acct = &procs[i];
	}
	if (busy && sum_busy(p, busy, nr_procs)) {
		free(busy);
		busy = NULL;
	}
	if (busy)
		qsort(busy, nr_procs, sizeof(*busy), cmp_busy);
	for (size_t i = 0; i < nr_procs && i < max_procs && threads && busy; i++) {
		const struct busy *b = &busy[i];
		size_t n = threads_of(p, b->pid, threads, cmp_busy_desc);

		proc_name(r, b->acct, name, sizeof(name));
		if (n == 1 && threads[0]->tid == b->pid) {
			print_row(f, "", "pid", b->pid, name, threads[0]);
			if (stats) /* who ran instead: -f json, -f threads; the summary's with --stats */
				raninst__summary(r, b->pid, b->runq_ns, b->ns, f);
			continue;
		}
		fprintf(f, "wprof: pid %u (%s): %zu thread%s; in thread-seconds: busy %.3f (on-CPU "
			"%.3f", b->pid, name, b->threads, b->threads == 1 ? "" : "s", b->ns / 1e9,
			b->on_ns / 1e9);
		if (b->steal_ns >= 500000) /* shows as 0.001 */
			fprintf(f, ", steal %.3f", b->steal_ns / 1e9);
		fprintf(f, ", runqueue %.3f", b->runq_ns / 1e9);
		if (b->throttled_ns >= 500000)
			fprintf(f, ", throttled %.3f", b->throttled_ns / 1e9);
		fprintf(f, ", disk %.3f), sleep %.3f", b->disk_ns / 1e9, b->sleep_ns / 1e9);
		if (b->asleep)
			fprintf(f, "; %zu thread%s idle the whole window", b->asleep,
				b->asleep == 1 ? "" : "s");
		fputc('\n', f);
		if (stats)
			raninst__summary(r, b->pid, b->runq_ns, b->ns, f);
		/* idle ones are counted above, listed only with --stats (as they were) */
		shown = 0;
		for (size_t j = 0; j < n && shown < max_threads; j++) {
			if (!stats && profile__asleep(threads[j]))
				continue;
			print_row(f, "  ", "tid", threads[j]->tid,
				  safestr__str(comm, sizeof(comm), threads[j]->comm), threads[j]);
			shown++;
		}
		if (n > shown)
			fprintf(f, "wprof:   ... %zu more thread%s (--format threads lists all)\n",
				n - shown, n - shown == 1 ? "" : "s");
	}
	if (nr_procs + p->dropped_procs > max_procs)
		fprintf(f, "wprof: ... %zu more process%s (--format threads lists all)\n",
			(size_t)(nr_procs + p->dropped_procs - max_procs),
			nr_procs + p->dropped_procs - max_procs == 1 ? "" : "es");
	free(busy);
	free(threads);
	free(procs);
}

/* The window, what was recorded, and how many events. */
static void print_window(const struct recording *r, FILE *f)
{
	const struct profile *p = &r->prof;
	struct thread_acct *procs;
	size_t nr_procs = profile__processes(p, &procs), nr_threads = profile__threads_shown(p);
	__u64 on_ns = 0, steal_ns = 0;
	char date[64], target[SAFESTR_SIZE(sizeof(r->info.target))];

	for (size_t i = 0; procs && i < nr_procs; i++) {
		on_ns += procs[i].on_ns;
		steal_ns += procs[i].off_ns[WPROF_STEAL];
	}
	nr_procs += p->dropped_procs;
	free(procs);
	rec_info__date(&r->info, date, sizeof(date));
	safestr__str(target, sizeof(target), r->info.target[0] ? r->info.target : "?");
	fprintf(f, "wprof: recorded %.3f s of %s from %s: %zu process%s, %zu thread%s",
		p->window_ns / 1e9, target, date, nr_procs,
		nr_procs == 1 ? "" : "es", nr_threads, nr_threads == 1 ? "" : "s");
	if (p->threads_left_out)
		fprintf(f, " (%llu more left out by --thread-name, --comm, --no-idle-threads)",
			(unsigned long long)p->threads_left_out);
	if (profile__reused_tids(p))
		fprintf(f, " (%zu had the tid of an earlier thread, the pids having wrapped "
			"around: each is shown on its own)", profile__reused_tids(p));
	fputc('\n', f);
	/* where it matters: 1% of the time the threads were on a CPU */
	if (steal_ns && steal_ns * 100 >= on_ns + steal_ns)
		fprintf(f, "wprof: steal: the hypervisor ran something else for %.3f s (%.1f%%) of the "
			"%.3f s these threads were on a CPU (tagged steal, not on-CPU)\n",
			steal_ns / 1e9, pct(steal_ns, on_ns + steal_ns), (on_ns + steal_ns) / 1e9);
}

/* --stats: how many events, and the threads they left without a time of their own. */
static void print_events(const struct recording *r, FILE *f)
{
	const struct profile *p = &r->prof;
	const __u64 *st = r->stats;

	fprintf(f, "wprof: %llu samples, %llu context switches, %llu wakeups",
		(unsigned long long)st[WPROF_STAT_SAMPLES],
		(unsigned long long)st[WPROF_STAT_SWITCHES],
		(unsigned long long)st[WPROF_STAT_WAKEUPS]);
	if (st[WPROF_STAT_FILTERED])
		fprintf(f, ", %llu intervals outside --min-block/--max-block",
			(unsigned long long)st[WPROF_STAT_FILTERED]);
	if (p->unsampled_threads)
		fprintf(f, "; %llu thread%s ran %.3f ms without a sample ([unsampled] lines)",
			(unsigned long long)p->unsampled_threads, p->unsampled_threads == 1 ? "" : "s",
			p->unsampled_us / 1e3);
	if (p->untimed_threads)
		fprintf(f, "; %llu sampled thread%s had no switch-timed on-CPU time "
			"(a period per sample)", (unsigned long long)p->untimed_threads,
			p->untimed_threads == 1 ? "" : "s");
	fputc('\n', f);
}


/* Losses, only those that happened, in words; frames without a name are no loss. */
static void print_losses(const struct recording *r, FILE *f, bool stats)
{
	struct loss l[NR_LOSSES];
	bool any = false;

	losses(r, l);
	for (int i = 0; i < NR_LOSSES; i++) {
		if (i == LOSS_frames_unnamed) {
			if (l[i].value)
				fprintf(f, "wprof: %llu of %llu frames have no symbol name (shown as "
					"file+offset)\n", (unsigned long long)l[i].value,
					(unsigned long long)r->prof.frames_total);
			continue;
		}
		if (!l[i].value)
			continue;
		any = true;
		fprintf(f, "wprof: lost: %llu %s [%s]\n", (unsigned long long)l[i].value,
			l[i].words, l[i].name);
	}
	if (!any && stats)
		fprintf(f, "wprof: nothing lost\n");
}

/*
 * The closing lines a recording keeps (the debug hints): wprof's own, but a
 * saved recording's are whatever its file says. Each line as safe text.
 */
static void print_notes(const char *notes, FILE *f)
{
	for (const char *p = notes; *p;) {
		const char *nl = strchr(p, '\n');
		size_t len = nl ? (size_t)(nl - p) : strlen(p);

		safestr__fput(f, p, len);
		fputc('\n', f);
		p += len + (nl != NULL);
	}
}

/*
 * --stats: how the recording went, for whoever checks wprof itself: the
 * events, how stacks were walked, the unwind tables, the maps' drains.
 */
static void print_stats(const struct recording *r, FILE *f)
{
	const struct profile *p = &r->prof;
	const struct session_drain_stats *ds = &r->drain;
	const __u64 *st = r->stats;

	print_events(r, f);
	print_walks(f, p, st);
	if (st[WPROF_STAT_RESUME_MISSED])
		fprintf(f, "wprof: %llu times a thread's user stack could not be walked as it "
			"resumed: the CPU resumed another thread, or the thread had left the "
			"kernel first (counted as unwalkable)\n",
			(unsigned long long)st[WPROF_STAT_RESUME_MISSED]);
	if (st[WPROF_STAT_UNTRACED_IN] || st[WPROF_STAT_UNTRACED_OUT] ||
	    st[WPROF_STAT_UNTRACED_RESUMED])
		fprintf(f, "wprof: %llu switches of recorded threads came with no sched_switch "
			"event from the kernel, and were timed otherwise: %llu as the thread got the "
			"CPU back (its stacks walked there), %llu from its run time when next seen "
			"(its off-CPU time then without a stack: %llu as it left a CPU, %llu as it "
			"got one)\n",
			(unsigned long long)(st[WPROF_STAT_UNTRACED_RESUMED] +
					     st[WPROF_STAT_UNTRACED_IN] + st[WPROF_STAT_UNTRACED_OUT]),
			(unsigned long long)st[WPROF_STAT_UNTRACED_RESUMED],
			(unsigned long long)(st[WPROF_STAT_UNTRACED_IN] + st[WPROF_STAT_UNTRACED_OUT]),
			(unsigned long long)st[WPROF_STAT_UNTRACED_IN],
			(unsigned long long)st[WPROF_STAT_UNTRACED_OUT]);
	print_unwind(f, p, st);
	fprintf(f, "wprof: maps drained %llu time%s while recording: %llu entries of ended "
		"threads, %llu stacks taken (%llu distinct kept); fullest map %d%%\n",
		(unsigned long long)ds->drains, ds->drains == 1 ? "" : "s",
		(unsigned long long)ds->threads,
		(unsigned long long)ds->stacks, (unsigned long long)ds->stacks_kept, ds->max_fill_pct);
	if (ds->retired)
		fprintf(f, "wprof: %llu ended threads made into lines while recording, and %llu "
			"stacks only they named freed (WPROF_RETIRE)\n",
			(unsigned long long)ds->retired, (unsigned long long)ds->stacks_freed);
	if (p->dropped_threads + p->dropped_left_out)
		fprintf(f, "wprof: the rows of %llu threads of ended processes were let go while "
			"recording, but for the %d busiest such processes (all are in the totals above; "
			"--format threads keeps every row)\n",
			(unsigned long long)(p->dropped_threads + p->dropped_left_out),
			PROFILE_TOP_PROCS);
}

/* The self-tests asked for (--check-deferred, WPROF_HELD=check): said whatever --stats. */
static void print_self_tests(const __u64 *st, FILE *f)
{
	if (st[WPROF_STAT_CHECKED])
		fprintf(f, "wprof: --check-deferred: %llu user stacks walked at switch-out and again "
			"as their thread resumed; %llu differed\n",
			(unsigned long long)st[WPROF_STAT_CHECKED],
			(unsigned long long)st[WPROF_STAT_CHECK_DIFFERED]);
	if (st[WPROF_STAT_HELD_CHECKED])
		fprintf(f, "wprof: WPROF_HELD=check: %llu walks of a copy of the stack compared "
			"with the kernel's walk, %llu differed\n",
			(unsigned long long)st[WPROF_STAT_HELD_CHECKED],
			(unsigned long long)st[WPROF_STAT_HELD_CHECK_DIFFERED]);
}

void report__summary(const struct recording *r, FILE *f, bool stats)
{
	print_window(r, f);
	cgcpu__summary(r->cgroups, r->nr_cgroups, f);
	print_processes(r, f, stats);
	timeline__summary(r, f);
	if (stats)
		print_stats(r, f);
	print_self_tests(r->stats, f);
	print_jit(f, &r->sym);
	print_losses(r, f, stats);
	if (r->notes)
		print_notes(r->notes, f);
}

/*
 * A row of the threads table: LONGEST_AT_S is when its longest long block
 * began (@longest; "-" when none), in s from the window's start.
 */
static void table_row(FILE *f, __u32 pid, const char *tid, const struct thread_acct *t,
		      const struct rec_block *longest, const char *ran)
{
	char comm[SAFESTR_SIZE(WPROF_COMM_LEN)], at[32] = "-";

	/* one whitespace-free column: safe text has no tab, no newline */
	safestr__str(comm, sizeof(comm), t->comm[0] ? t->comm : "?");
	for (char *c = comm; *c; c++)
		if (*c == ' ')
			*c = '_';
	if (longest)
		snprintf(at, sizeof(at), "%.3f", longest->offset_ns / 1e9);
	fprintf(f, "%-8u %-8s %-16s %9.3f %7.1f %7.1f %7.1f %7.1f %7.1f %7.1f %8llu %12.3f %12s ", pid,
		tid, comm, t->wall_ns / 1e9, pct(t->on_ns, t->wall_ns),
		pct(t->off_ns[WPROF_STEAL], t->wall_ns), pct(t->off_ns[WPROF_OFF_RUNQ], t->wall_ns),
		pct(t->off_ns[WPROF_OFF_THROTTLED], t->wall_ns),
		pct(t->off_ns[WPROF_OFF_SLEEP], t->wall_ns),
		pct(t->off_ns[WPROF_OFF_DISK], t->wall_ns), (unsigned long long)t->blocks,
		t->max_block_ns / 1e6, at);
	fprintf(f, "%s\n", ran);
}

int report__threads(const struct recording *r, FILE *f)
{
	const struct profile *p = &r->prof;
	const struct thread_acct **threads = malloc((p->nr_threads + 1) * sizeof(*threads));
	struct thread_acct *procs;
	size_t nr_procs = profile__processes(p, &procs);
	char tid[16], ran[RAN_COLUMN_SIZE];

	if (!threads || !procs) {
		free(threads);
		free(procs);
		return -ENOMEM;
	}
	fprintf(f, "%-8s %-8s %-16s %9s %7s %7s %7s %7s %7s %7s %8s %12s %12s %s\n", "PID", "TID",
		"COMM", "WALL_S", "ON_CPU%", "STEAL%", "RUNQ%", "THROT%", "SLEEP%", "DISK%", "BLOCKS",
		"MAX_BLOCK_MS", "LONGEST_AT_S", "RAN_INSTEAD");
	for (size_t i = 0; i < nr_procs; i++) {
		size_t n = threads_of(p, procs[i].pid, threads, cmp_wall_desc);

		table_row(f, procs[i].pid, "-", &procs[i], timeline__longest(r, procs[i].pid, 0),
			  "-");
		for (size_t j = 0; j < n; j++) {
			snprintf(tid, sizeof(tid), "%u", threads[j]->tid);
			raninst__column(r, threads[j], ran, sizeof(ran));
			table_row(f, procs[i].pid, tid, threads[j],
				  timeline__longest(r, procs[i].pid, threads[j]->tid), ran);
		}
	}
	free(threads);
	free(procs);
	if (fflush(f) || ferror(f))
		return errno ? -errno : -EIO;
	return 0;
}

static void json_acct(FILE *f, const struct thread_acct *t)
{
	fprintf(f,
		"\"wall_us\": %llu, \"on_cpu_us\": %llu, \"steal_us\": %llu, \"runqueue_us\": %llu, "
		"\"throttled_us\": %llu, \"sleep_us\": %llu, \"disk_us\": %llu, \"blocks\": %llu, "
		"\"max_block_us\": %llu",
		(unsigned long long)t->wall_us, (unsigned long long)t->on_us,
		(unsigned long long)t->off_us[WPROF_STEAL],
		(unsigned long long)t->off_us[WPROF_OFF_RUNQ],
		(unsigned long long)t->off_us[WPROF_OFF_THROTTLED],
		(unsigned long long)t->off_us[WPROF_OFF_SLEEP],
		(unsigned long long)t->off_us[WPROF_OFF_DISK],
		(unsigned long long)t->blocks, (unsigned long long)t->max_block_ns / 1000);
}

static void json_hist(FILE *f, const struct proc_hist *h)
{
	bool first = true;

	fprintf(f, "\"block_hist\": [");
	for (int k = 0; h && k < WPROF_HIST_SLOTS; k++) {
		if (!h->slots[k])
			continue;
		fprintf(f, "%s{\"min_us\": %llu, \"max_us\": %llu, \"count\": %llu}",
			first ? "" : ", ", k ? 1ULL << k : 0ULL, (1ULL << (k + 1)) - 1,
			(unsigned long long)h->slots[k]);
		first = false;
	}
	fprintf(f, "]");
}

struct json_ctx {
	FILE *f;
	bool tag_leaf;
	bool first;
};

static int json_frame(const char *frame, size_t len, void *ctx)
{
	struct json_ctx *j = ctx;

	fputs(j->first ? "" : ", ", j->f);
	safestr__json(j->f, frame, len);
	j->first = false;
	return 0;
}

/* A stack line from profile__build: TAG;PID;TID;COMM;frames... (or --tag-leaf's order) */
static int json_stack(const char *line, __u64 weight, __u64 count, __u64 max, void *ctx)
{
	struct json_ctx *j = ctx, frames = { .f = j->f, .first = true };
	struct rec_line rl;

	/* the ids as numbers: a line is text, a saved recording's anyone's */
	if (rec_line__split(line, j->tag_leaf, true, &rl))
		return -EINVAL;
	fprintf(j->f, "%s\n    {\"tag\": ", j->first ? "" : ",");
	safestr__json(j->f, rl.tag.s, rl.tag.len);
	fprintf(j->f, ", \"pid\": %u, \"tid\": %u, \"comm\": ", rl.pid, rl.tid);
	safestr__json(j->f, rl.comm.s, rl.comm.len);
	fprintf(j->f, ", \"frames\": [");
	rec_line__for_each_frame(rl.body.s, rl.body.len, json_frame, &frames);
	fprintf(j->f, "], \"count\": %llu, \"total_us\": %llu, \"max_us\": %llu}",
		(unsigned long long)count, (unsigned long long)weight, (unsigned long long)max);
	j->first = false;
	return 0;
}

int report__json(const struct recording *r, FILE *f)
{
	const struct profile *p = &r->prof;
	const struct thread_acct **threads = malloc((p->nr_threads + 1) * sizeof(*threads));
	struct json_ctx j = { .f = f, .tag_leaf = r->tag_leaf, .first = true };
	struct thread_acct *procs;
	size_t nr_procs = profile__processes(p, &procs);
	struct loss l[NR_LOSSES];
	int err;

	if (!threads || !procs) {
		free(threads);
		free(procs);
		return -ENOMEM;
	}
	fprintf(f, "{\n  \"window_us\": %llu, \"freq_hz\": %llu, \"period_us\": %llu,\n",
		(unsigned long long)p->window_ns / 1000, (unsigned long long)r->info.freq_hz,
		(unsigned long long)p->period_ns / 1000);
	err = timeline__json(r, f);
	if (err) {
		free(threads);
		free(procs);
		return err;
	}
	cgcpu__json(r->cgroups, r->nr_cgroups, f);
	fprintf(f, "  \"unsampled_threads\": %llu, \"unsampled_us\": %llu, "
		"\"untimed_threads\": %llu,\n", (unsigned long long)p->unsampled_threads,
		(unsigned long long)p->unsampled_us, (unsigned long long)p->untimed_threads);
	fprintf(f, "  \"processes\": [");
	for (size_t i = 0; i < nr_procs; i++) {
		size_t n = threads_of(p, procs[i].pid, threads, cmp_wall_desc);

		fprintf(f, "%s\n    {\"pid\": %u, \"comm\": ", i ? "," : "", procs[i].pid);
		safestr__json(f, procs[i].comm, strlen(procs[i].comm));
		fprintf(f, ", ");
		json_acct(f, &procs[i]);
		fprintf(f, ",\n     ");
		json_hist(f, profile__hist(p, procs[i].pid));
		fprintf(f, ",\n     \"threads\": [");
		for (size_t k = 0; k < n; k++) {
			fprintf(f, "%s\n      {\"tid\": %u, \"comm\": ", k ? "," : "",
				threads[k]->tid);
			safestr__json(f, threads[k]->comm, strlen(threads[k]->comm));
			fprintf(f, ", ");
			json_acct(f, threads[k]);
			raninst__json(r, threads[k], f);
			fprintf(f, "}");
		}
		fprintf(f, "]}");
	}
	free(threads);
	free(procs);
	fprintf(f, "\n  ],\n  \"stacks\": [");
	err = folded__for_each(r->lines, json_stack, &j);
	fprintf(f, "\n  ],\n  \"lost\": {");
	losses(r, l);
	for (int i = 0; i < NR_LOSSES; i++)
		fprintf(f, "%s\"%s\": %llu", i ? ", " : "", l[i].name,
			(unsigned long long)l[i].value);
	/* every counter of the recording, by the names saved recordings keep them by */
	fprintf(f, "},\n  \"counters\": {");
	for (int i = 0, n = 0; i < WPROF_STAT_CNT; i++) {
		char buf[32];
		const char *name = stat__name(i, buf, sizeof(buf));

		if (name)
			fprintf(f, "%s\"%s\": %llu", n++ ? ", " : "", name,
				(unsigned long long)r->stats[i]);
	}
	fprintf(f, "}\n}\n");
	if (!err && (fflush(f) || ferror(f)))
		err = errno ? -errno : -EIO;
	return err;
}
