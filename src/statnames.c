// SPDX-License-Identifier: GPL-2.0-only
/*
 * The BPF statistics by name: what a saved recording keys them by, since
 * enum wprof_stat may gain entries anywhere between two builds of wprof.
 */
#include <stdio.h>
#include <string.h>

#include "statnames.h"

static const char *const names[WPROF_STAT_CNT] = {
	[WPROF_STAT_SAMPLES] = "samples",
	[WPROF_STAT_SWITCHES] = "switches",
	[WPROF_STAT_WAKEUPS] = "wakeups",
	[WPROF_STAT_USTACK_ERR] = "ustack_err",
	[WPROF_STAT_KSTACK_ERR] = "kstack_err",
	[WPROF_STAT_USTACK_TRUNC] = "ustack_trunc",
	[WPROF_STAT_KSTACK_TRUNC] = "kstack_trunc",
	[WPROF_STAT_STACKS_FULL] = "stacks_full",
	[WPROF_STAT_COUNTS_FULL] = "counts_full",
	[WPROF_STAT_THREADS_FULL] = "threads_full",
	[WPROF_STAT_DROPPED_NS] = "dropped_ns",
	[WPROF_STAT_FILTERED] = "filtered",
	[WPROF_STAT_WAKES_FULL] = "wakes_full",
	[WPROF_STAT_USTACK_CUT] = "ustack_cut",
	[WPROF_STAT_USTACK_NONE] = "ustack_none",
	[WPROF_STAT_FP_FRAMES] = "fp_frames",
	[WPROF_STAT_CFI_FRAMES] = "cfi_frames",
	[WPROF_STAT_EVENTS_LOST] = "events_lost",
	[WPROF_STAT_UNTRACED_IN] = "untraced_in",
	[WPROF_STAT_UNTRACED_OUT] = "untraced_out",
	[WPROF_STAT_SW_OTHER] = "sw_other",
	[WPROF_STAT_SW_KTHREAD] = "sw_kthread",
	[WPROF_STAT_SW_WALKED] = "sw_walked",
	[WPROF_STAT_SW_PREEMPT] = "sw_preempt",
	[WPROF_STAT_SW_DEFERRED] = "sw_deferred",
	[WPROF_STAT_SW_RESUMED] = "sw_resumed",
	[WPROF_STAT_SW_IN] = "sw_in",
	[WPROF_STAT_NS_OTHER] = "ns_other",
	[WPROF_STAT_NS_KTHREAD] = "ns_kthread",
	[WPROF_STAT_NS_WALKED] = "ns_walked",
	[WPROF_STAT_NS_PREEMPT] = "ns_preempt",
	[WPROF_STAT_NS_DEFERRED] = "ns_deferred",
	[WPROF_STAT_NS_RESUMED] = "ns_resumed",
	[WPROF_STAT_NS_IN] = "ns_in",
	[WPROF_STAT_TM_OTHER] = "timed_other",
	[WPROF_STAT_TM_KTHREAD] = "timed_kthread",
	[WPROF_STAT_TM_WALKED] = "timed_walked",
	[WPROF_STAT_TM_PREEMPT] = "timed_preempt",
	[WPROF_STAT_TM_DEFERRED] = "timed_deferred",
	[WPROF_STAT_TM_RESUMED] = "timed_resumed",
	[WPROF_STAT_TM_IN] = "timed_in",
	[WPROF_STAT_IV_EXACT] = "iv_exact",
	[WPROF_STAT_IV_SAMPLED] = "iv_sampled",
	[WPROF_STAT_IV_SKIPPED] = "iv_skipped",
	[WPROF_STAT_USER_LATE] = "user_late",
	[WPROF_STAT_USER_LOST] = "user_lost",
	[WPROF_STAT_RESUME_MISSED] = "resume_missed",
	[WPROF_STAT_UNTRACED_RESUMED] = "untraced_resumed",
	[WPROF_STAT_CHECKED] = "checked",
	[WPROF_STAT_CHECK_DIFFERED] = "check_differed",
	[WPROF_STAT_TARGETS_FULL] = "targets_full",
	[WPROF_STAT_MAPS_INHERIT_FAILED] = "maps_inherit_failed",
	[WPROF_STAT_REUSED_LOST] = "reused_lost",
	[WPROF_STAT_TIMED_RQ] = "timed_rq_clock",
	[WPROF_STAT_TIMED_READ] = "timed_clock_read",
	[WPROF_STAT_SLOT_BUSY] = "slot_busy",
	[WPROF_STAT_WAKE_RQ_CLOCK] = "wake_rq_clock",
	[WPROF_STAT_RUNS_MISSED] = "runs_missed",
	[WPROF_STAT_HELD] = "held",
	[WPROF_STAT_HELD_LOST] = "held_lost",
	[WPROF_STAT_HELD_WALKED] = "held_walked",
	[WPROF_STAT_HELD_UNWALKED] = "held_unwalked",
	[WPROF_STAT_HELD_DROPPED] = "held_dropped",
	[WPROF_STAT_HELD_CHECKED] = "held_checked",
	[WPROF_STAT_HELD_CHECK_DIFFERED] = "held_check_differed",
	[WPROF_STAT_LONG_BLOCKS] = "long_blocks",
	[WPROF_STAT_LONG_LOST] = "long_blocks_lost",
	[WPROF_STAT_LONG_DROPPED] = "long_blocks_dropped",
	[WPROF_STAT_RAN_FULL] = "ran_full",
	[WPROF_STAT_RAN_LOST_NS] = "ran_lost_ns",
	[WPROF_STAT_PY_STACKS] = "python_stacks",
	[WPROF_STAT_PY_CUT] = "python_stacks_cut",
	[WPROF_STAT_PY_CODES_FULL] = "python_codes_full",
};

const char *stat__name(int i, char *buf, size_t size)
{
	if (i < 0 || i >= WPROF_STAT_CNT)
		return NULL;
	if (i >= WPROF_STAT_CUT_BASE && i <= WPROF_STAT_CUT_LAST) {
		snprintf(buf, size, "cut_%d", i - WPROF_STAT_CUT_BASE);
		return buf;
	}
	return names[i];
}

int stat__index(const char *name)
{
	char buf[32];

	for (int i = 0; i < WPROF_STAT_CNT; i++) {
		const char *n = stat__name(i, buf, sizeof(buf));

		if (n && !strcmp(n, name))
			return i;
	}
	return -1;
}
