#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Waiting for a CPU is off-cpu:runqueue. runq pins 3 never-blocking threads
# ("spin0".."spin2") to CPU 0 for 3 s: each runs ~1/3 of the time and waits
# in the runqueue ~2/3. Each thread reports its own run and wait time from
# the kernel's schedstat over its spin loop.
#
# Tolerances:
# - runqueue weight per thread vs schedstat wait: both come from scheduler
#   timestamps; they differ only by what lies outside the spin loop (thread
#   start before the barrier, exit after the last read: one slice, <= ~4 ms
#   at 3 threads) -> 5% + 20 ms.
# - on-CPU weight, sum over the 3 threads vs the sum of schedstat run time:
#   CPU 0 is sampled 99 times a second and nearly every tick finds one of the
#   spinners -> 5% + 3 samples. Per thread the split between spinners is
#   binomial-ish (p = 1/3 over ~300 ticks: sd 8 samples, 8%) -> 25%.
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"
require_bpf
require_workload runq

run_wprof rec record -d 30 -o "$TMP/out.folded" -- "$WORKLOADS/runq" -n 3 -t 3 -q -r "$TMP/report"
check_wprof_ok rec
[ -s "$TMP/report" ] || fatal "runq wrote no report"
[ -s "$TMP/out.folded" ] || fatal "no output"
check_folded "$TMP/out.folded"

on_sum=0
run_sum=0
while read -r name tid run_ns wait_ns _wall_ns; do
	run_us=$((run_ns / 1000))
	wait_us=$((wait_ns / 1000))
	rq=$(fold_sum "$TMP/out.folded" off-cpu:runqueue "$name")
	on=$(fold_sum "$TMP/out.folded" on-cpu "$name")
	sl=$(fold_sum "$TMP/out.folded" 'off-cpu:(sleep|disk)' "$name")
	log "$name (tid $tid): schedstat run $run_us us wait $wait_us us; wprof on $on rq $rq sleep+disk $sl"
	check_near "$name: off-cpu:runqueue weight vs schedstat wait (us)" "$rq" "$wait_us" \
		"$(calc "0.05 * $wait_us + 20000")"
	check_near "$name: on-CPU weight vs schedstat run (us)" "$on" "$run_us" \
		"$(calc "0.25 * $run_us")"
	# It blocks only at the start barrier (until its siblings exist: ~1 ms).
	check_le "$name: sleep+disk weight (us)" "$sl" 50000
	spin=$(fold_sum "$TMP/out.folded" off-cpu:runqueue "$name" spin_until)
	check_ge "$name: share of runqueue weight preempted in spin_until (%)" \
		"$(calc "100 * $spin / ($rq ? $rq : 1)")" 90
	on_sum=$((on_sum + on))
	run_sum=$((run_sum + run_us))
done <"$TMP/report"
check_near "on-CPU weight of all spinners vs their schedstat run time (us)" "$on_sum" "$run_sum" \
	"$(calc "0.05 * $run_sum + 30303")"
finish
