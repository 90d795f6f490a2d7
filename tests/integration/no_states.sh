#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# --no-states: the only tags are on-cpu and off-cpu, and the burner's time
# is the same split as with states (its off-CPU share ~85%, within the
# 2 points derived in cmd.sh plus 1 for the shorter 3 s run).
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"
require_bpf
require_workload sleepburn

run_wprof rec record --no-states -d 20 -o "$TMP/out.folded" -o "$TMP/out.json" -- \
	"$WORKLOADS/sleepburn" -n 3 -q -r "$TMP/report"
check_wprof_ok rec
[ -s "$TMP/out.folded" ] || fatal "no output"
check_folded "$TMP/out.folded"
# per thread, the lines of each tag add up to its time (steal's to steal_us)
check_json "$TMP/out.json"

# steal, where there was any, stays its own: it is none of the off-CPU states
tags=$(fold_field "$TMP/out.folded" tag | grep -vx steal | tr '\n' ' ')
check "tags are exactly off-cpu and on-cpu, and steal (got: $tags)" test "$tags" = "off-cpu on-cpu "
cpu_us=$(($(report_get "$TMP/report" cpu_ns) / 1000))
wall_us=$(($(report_get "$TMP/report" wall_ns) / 1000))
on=$(fold_sum "$TMP/out.folded" on-cpu burner)
off=$(fold_sum "$TMP/out.folded" off-cpu burner)
steal=$(fold_sum "$TMP/out.folded" steal burner)
# the burner's CPU time leaves steal out; its wall time has it
check_near "burner off-CPU + steal share (%)" \
	"$(calc "100 * ($off + $steal) / ($on + $off + $steal ? $on + $off + $steal : 1)")" \
	"$(calc "100 - 100 * $cpu_us / $wall_us")" 3
finish
