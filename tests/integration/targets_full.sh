#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# `-- CMD` follows the processes CMD forks through the BPF `targets` map
# (4096 entries; ended ones are pruned while recording). forkwide keeps
# 4300 children alive at once, more than it holds: the children it has no
# room for are not recorded, and each is counted. Ground truth is
# forkwide's own count of its forks ("forked N"): targets holds CMD and
# its first 4095 children, so targets_map_full is N + 1 - 4096 exactly.
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"
require_bpf
require_workload forkwide

NR=4300
TARGETS_MAX=4096
run_wprof wide record -d 60 -o "$TMP/out.folded" -- "$WORKLOADS/forkwide" -n $NR -w 200
check_wprof_ok wide
forked=$(sed -n 's/^forked \([0-9]*\)$/\1/p' "$TMP/wide.out")
[ -n "$forked" ] || fatal "forkwide printed no count"
check "forkwide forked all $NR (got $forked)" test "$forked" -eq $NR
want=$((forked + 1 - TARGETS_MAX))
got=$(sed -n 's/^wprof: lost: \([0-9]*\) .*\[targets_map_full\]$/\1/p' "$TMP/wide.err")
check "targets_map_full is $want (got ${got:-none})" test "${got:--1}" -eq $want
procs=$(sed -n 's/^wprof: recorded [0-9.]* s .*: \([0-9]*\) processes, .*/\1/p' "$TMP/wide.err")
check "the $TARGETS_MAX followed processes are recorded, no more (got ${procs:-none})" \
	test "${procs:--1}" -eq $TARGETS_MAX
finish
