#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# -a records every thread: a running sleepburn's burner (under a name unique
# to this test run: other sleepburns may run on the machine) is among them with
# its functions, its on+off weight is the 2 s window (within 100 ms, as in
# pid.sh), and other threads of the system show up too. --stats adds only
# `wprof: ` lines on stderr.
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"
require_bpf
require_workload sleepburn

name=wpa$$
start_bg "$TMP/sleepburn.log" "$WORKLOADS/sleepburn" -N "$name"
wait_line "$TMP/sleepburn.log" '^ready [0-9]+$' 10 || fatal "sleepburn did not start"

run_wprof rec record -a -d 2 --stats -o "$TMP/out.folded"
check_wprof_ok rec
[ -s "$TMP/out.folded" ] || fatal "no output"
check_folded "$TMP/out.folded"
check "burner's burn_cpu is in the output" test "$(fold_sum "$TMP/out.folded" on-cpu "$name" burn_cpu)" -gt 0
check_near "burner on+off weight vs the 2 s window (us)" \
	"$(fold_sum "$TMP/out.folded" '.*' "$name")" 2000000 100000
ncomm=$(fold_field "$TMP/out.folded" comm | wc -l)
check_ge "distinct comms system-wide" "$ncomm" 3
check "--stats printed the programs' run time" grep -q '^wprof: bpf tp_switch .* ns/run' "$TMP/rec.err"
check "--stats printed the peak RSS" grep -q '^wprof: peak RSS [0-9]* KiB' "$TMP/rec.err"
finish
