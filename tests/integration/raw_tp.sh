#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# The fallback programs, as kernels that refuse tp_btf load them (raw_tp
# sched events; no sched_entry_tp stamps, no sched_exit_tp walks at resume:
# every walked interval's stacks are taken as its thread leaves the CPU).
# WPROF_ATTACH=raw_tp forces them here; then tests that hold wprof to
# ground truth the workloads know about themselves run again on them:
# - real_schedstat: per-thread on-CPU and run-queue time against schedstat;
# - sym_nanosleep: off-CPU time named by the caller that sleeps;
# - wakers: the waker's stack of each blocked interval;
# - mutex: time under the lock frames, against the workload's own timing.
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"
require_bpf
export WPROF_ATTACH=raw_tp

run_wprof probe record --stats -a -d 0.3 -o "$TMP/probe.folded"
check_wprof_ok probe
check "the summary says raw_tp was attached" \
	grep -q '^wprof: recording with raw_tp sched events' "$TMP/probe.err"
check "no sched_exit_tp walks at resume under raw_tp" \
	grep -q 'user stacks: [0-9]* walked at switch-out, 0 as the thread resumed' "$TMP/probe.err"

rerun_tests "on the raw_tp programs" real_schedstat sym_nanosleep wakers mutex
finish
