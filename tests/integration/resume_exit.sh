#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# The resume walks of kernels without BPF task works (6.16, 6.17): a
# program on sched_exit_tp walks a deferred user stack as its thread gets
# the CPU back, and times the resumes the kernel gave no sched_switch event
# for. WPROF_RESUME_WALK=exit forces it here; then tests that hold the
# stacks of blocked intervals to ground truth run again on it:
# - check_deferred: every deferred walk equals a walk at switch-out;
# - mutex: time under the lock frames, against the workload's own timing;
# - sym_nanosleep: off-CPU time named by the caller that sleeps;
# - real_schedstat: per-thread on-CPU and run-queue time against schedstat.
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"
require_bpf
export WPROF_RESUME_WALK=exit

run_wprof probe record -a -d 0.3 --stats -o "$TMP/probe.folded"
check_wprof_ok probe
check "the time per switch is tp_sched_exit's and tp_switch's" \
	grep -Eq '^wprof: bpf per context switch .* \(tp_sched_exit \+ tp_switch, over' "$TMP/probe.err"

for t in check_deferred mutex sym_nanosleep real_schedstat; do
	log "$t with WPROF_RESUME_WALK=exit"
	bash "$(dirname "$0")/$t.sh" >"$TMP/$t.log" 2>&1
	rc=$?
	sed 's/^/#   /' "$TMP/$t.log" | grep -E '^#   (not ok|SKIP|# evidence)' | head -20
	check "$t passes with sched_exit_tp's walks (exit $rc; log $TMP/$t.log)" test "$rc" -eq 0
done
finish
