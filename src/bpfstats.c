// SPDX-License-Identifier: GPL-2.0-only
/*
 * The session's counters, and --stats: each BPF program's runs and time,
 * the time per context switch, the load, the peak RSS. See session.h.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "held.h"
#include "heldring.h"
#include "longblocks.h"
#include "session.h"
#include "session_priv.h"
#include "util.h"
#include "wprof.skel.h"

/* BPF_COMPLEXITY_LIMIT_INSNS: the most instructions the verifier follows in a program */
#define VERIFIER_INSN_LIMIT 1000000

/*
 * The runs of our programs the kernel skipped and counted: a tracing program
 * does not run while it is already running on the CPU, and an event it
 * would have seen is then lost to the recording.
 */
static __u64 runs_missed(struct session *s)
{
	struct bpf_program *prog;
	__u64 n = 0;

	bpf_object__for_each_program(prog, s->skel->obj) {
		struct bpf_prog_info info = {};
		__u32 len = sizeof(info);
		int fd = bpf_program__fd(prog);

		if (fd >= 0 && !bpf_obj_get_info_by_fd(fd, &info, &len))
			n += info.recursion_misses;
	}
	return n;
}

__u64 session__stat(struct session *s, enum wprof_stat idx)
{
	int ncpu = libbpf_num_possible_cpus(), fd = bpf_map__fd(s->skel->maps.stats);
	__u64 *vals = calloc(ncpu > 0 ? ncpu : 1, sizeof(*vals)), sum = 0;
	__u32 key = idx;

	if (vals && !bpf_map_lookup_elem(fd, &key, vals))
		for (int c = 0; c < ncpu; c++)
			sum += vals[c];
	free(vals);
	return sum;
}

void session__stats(struct session *s, __u64 stats[WPROF_STAT_CNT])
{
	struct held_stats h;
	__u64 cut = 0;

	for (__u32 i = 0; i < WPROF_STAT_CNT; i++)
		stats[i] = session__stat(s, i);
	stats[WPROF_STAT_RUNS_MISSED] = runs_missed(s);
	/* held walks are counted as they come out of user space's walk */
	held__stats(s->held, &h);
	stats[WPROF_STAT_HELD_WALKED] = h.walked;
	stats[WPROF_STAT_HELD_UNWALKED] = h.unwalked;
	stats[WPROF_STAT_HELD_DROPPED] = h.dropped + heldring__dropped(s->heldring);
	stats[WPROF_STAT_HELD_CHECKED] = h.checked;
	stats[WPROF_STAT_HELD_CHECK_DIFFERED] = h.check_differed;
	stats[WPROF_STAT_LONG_DROPPED] = longblocks__dropped(s->blocks);
	stats[WPROF_STAT_CUT_BASE + WPROF_CUT_NO_TABLE] += h.unwalked;
	for (int c = 1; c < WPROF_CUT_CNT; c++) {
		stats[WPROF_STAT_CUT_BASE + c] += h.cut[c];
		cut += h.cut[c];
	}
	stats[WPROF_STAT_USTACK_CUT] += h.unwalked + cut;
}

void session__print_prog_stats(struct session *s, FILE *f)
{
	__u64 switches = 0, switch_ns = 0, verified = 0;
	const char *most_name = "";
	struct bpf_program *prog;
	__u32 most = 0;
	struct rusage ru;
	char progs[128] = "";

	bpf_object__for_each_program(prog, s->skel->obj) {
		struct bpf_prog_info info = {};
		__u32 len = sizeof(info);
		int fd = bpf_program__fd(prog);
		const char *name = bpf_program__name(prog);

		if (fd < 0 || bpf_obj_get_info_by_fd(fd, &info, &len))
			continue;
		fprintf(f, "wprof: bpf %-16s %10llu runs %12llu ns total %8.0f ns/run\n", name,
			(unsigned long long)info.run_cnt, (unsigned long long)info.run_time_ns,
			info.run_cnt ? (double)info.run_time_ns / info.run_cnt : 0.0);
		verified += info.verified_insns;
		if (info.verified_insns > most) {
			most = info.verified_insns;
			most_name = name;
		}
		/* every context switch runs these (the last two where loaded) */
		if (!strcmp(name, "tp_switch") || !strcmp(name, "raw_switch"))
			switches = info.run_cnt;
		if (!strcmp(name, "tp_switch") || !strcmp(name, "raw_switch") ||
		    !strcmp(name, "tp_sched_entry") || !strcmp(name, "tp_sched_exit")) {
			switch_ns += info.run_time_ns;
			snprintf(progs + strlen(progs), sizeof(progs) - strlen(progs), "%s%s",
				 progs[0] ? " + " : "", name);
		}
	}
	/*
	 * The resume task work runs outside any program's accounting: its
	 * walks are timed by the BPF side itself (every one, with --stats).
	 */
	if (s->skel->rodata->resume_task_work) {
		__u64 stats[WPROF_STAT_CNT];

		session__stats(s, stats);
		switch_ns += stats[WPROF_STAT_NS_RESUMED];
		snprintf(progs + strlen(progs), sizeof(progs) - strlen(progs), "%s%s",
			 progs[0] ? " + " : "", "resume task work");
	}
	if (switches)
		fprintf(f, "wprof: bpf per context switch %8.0f ns (%s, over %llu switches)\n",
			(double)switch_ns / switches, progs, (unsigned long long)switches);
	/*
	 * What the start cost: the verifier's work grows with the paths it
	 * must follow, and a program it would follow down more than a million
	 * instructions is refused.
	 */
	fprintf(f, "wprof: bpf load %8.0f ms, %llu instructions verified, most %u in %s "
		"(the kernel refuses a program at %u)\n", (double)s->load_ns / NSEC_PER_MSEC,
		(unsigned long long)verified, most, most_name, VERIFIER_INSN_LIMIT);
	if (!getrusage(RUSAGE_SELF, &ru))
		fprintf(f, "wprof: peak RSS %ld KiB\n", ru.ru_maxrss);
}
