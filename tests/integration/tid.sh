#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# `-t TID` profiles that one thread: on twothreads ("alpha" burns in
# alpha_burn, "beta" in beta_burn, both 20 ms burn / 30 ms sleep), only
# alpha's name and function may appear, and its on+off weight is the 2 s
# window (within 100 ms, as in pid.sh). `-t A,B` shows both and nothing else.
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"
require_bpf
require_workload twothreads

start_bg "$TMP/tt.log" "$WORKLOADS/twothreads"
wait_line "$TMP/tt.log" '^ready$' 10 || fatal "twothreads did not start"
alpha=$(awk '$1 == "alpha" { print $2 }' "$TMP/tt.log")
beta=$(awk '$1 == "beta" { print $2 }' "$TMP/tt.log")
log "alpha tid $alpha, beta tid $beta"

run_wprof one record -t "$alpha" -d 2 -o "$TMP/one.folded"
check_wprof_ok one
[ -s "$TMP/one.folded" ] || fatal "no output"
check_folded "$TMP/one.folded"
comms=$(fold_field "$TMP/one.folded" comm | tr '\n' ' ')
check "-t alpha: the only comm is alpha (got: $comms)" test "$comms" = "alpha "
check "-t alpha: alpha_burn is in its on-CPU stacks" \
	test "$(fold_sum "$TMP/one.folded" on-cpu alpha alpha_burn)" -gt 0
check "-t alpha: no beta_burn frame" sh -c "! grep -q beta_burn '$TMP/one.folded'"
total=$(fold_sum "$TMP/one.folded" '.*' alpha)
check_near "-t alpha: on+off weight vs the 2 s window (us)" "$total" 2000000 100000
# 20 ms on CPU, then 30 ms asleep: on / (on + sleep) = 40%, +/- 5 points
# (2 s = 40 bursts of 2 samples each at most one sample off; more slack than
# cmd.sh for the shorter run). Runqueue time is left out: other load on the
# machine stretches it, not the burn or the sleep.
on=$(fold_sum "$TMP/one.folded" on-cpu alpha)
slept=$(fold_sum "$TMP/one.folded" off-cpu:sleep alpha)
check_near "-t alpha: on-CPU share of on + sleep (%)" \
	"$(calc "100 * $on / ($on + $slept ? $on + $slept : 1)")" 40 5

run_wprof both record -t "$alpha,$beta" -d 1 -o "$TMP/both.folded"
check_wprof_ok both
check_folded "$TMP/both.folded"
comms=$(fold_field "$TMP/both.folded" comm | tr '\n' ' ')
check "-t alpha,beta: comms are alpha and beta (got: $comms)" test "$comms" = "alpha beta "
finish
