#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Per-thread shares from `--format json` against the kernel's schedstat.
# runq pins 3 never-blocking threads ("spin0".."spin2") to CPU 0 for 3 s, so
# each runs ~1/3 and waits in the run queue ~2/3 of the time; each reads
# its own /proc/self/task/TID/schedstat (on-CPU ns, run delay ns) around its
# spin loop and reports them with the loop's wall time.
#
# Checks, per thread (JSON "threads" entry of the spinner):
# - runqueue share 100 * runqueue_us / wall_us vs schedstat's
#   100 * run_delay / loop wall within 2 percentage points. Both time the same
#   scheduler waits (a spinner only ever waits for CPU 0); they differ by
#   what lies outside the loop: thread creation to the loop start and the
#   last read to exit (a wait of at most one slice, a few ms, at each end):
#   <= ~10 ms of 3 s = 0.3 points. 2 points (the issue's bound) is ~60 ms,
#   3% of the waiting time: it catches waits dropped or counted twice, or
#   runqueue time booked as on-CPU.
# - on-CPU share vs schedstat's run share within 2 points: JSON on_cpu_us is
#   the exact switch-timed on-CPU time (not samples), so the same reasoning
#   holds.
# - sleep + disk share <= 1 point: the only block is the start barrier
#   (until the siblings exist, ~1 ms).
# - wall_us = on + steal + runqueue + sleep + disk within 0.1%: one thread's time
#   split into states, nothing lost or counted twice.
# - >= 90% of each spinner's runqueue stack weight in spin_until (it is
#   preempted there; the rest: in the clock read or the barrier wakeup).
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"
require_bpf
require_workload runq

run_wprof rec record -d 30 -f json -o "$TMP/out.json" -- "$WORKLOADS/runq" -n 3 -t 3 -q \
	-r "$TMP/report"
check_wprof_ok rec
[ -s "$TMP/report" ] || fatal "runq wrote no report"
[ -s "$TMP/out.json" ] || fatal "no output"
check_json "$TMP/out.json"

while read -r name tid run_ns wait_ns wall_ns; do
	read -r wall on st rq sl dk <<<"$(json_eval "$TMP/out.json" \
		'" ".join(str(thread("'"$name"'")[k]) for k in ("wall_us", "on_cpu_us", "steal_us", "runqueue_us", "sleep_us", "disk_us"))')"
	[ -n "${dk:-}" ] || { not_ok "$name: no JSON thread entry"; continue; }
	log "$name (tid $tid): schedstat run $((run_ns / 1000)) wait $((wait_ns / 1000))" \
		"over $((wall_ns / 1000)) us; wprof wall $wall on $on steal $st rq $rq sleep $sl disk $dk"
	check_near "$name: runqueue share vs schedstat run delay share (points)" \
		"$(calc "100 * $rq / $wall")" "$(calc "100 * $wait_ns / $wall_ns")" 2
	check_near "$name: on-CPU share vs schedstat run share (points)" \
		"$(calc "100 * $on / $wall")" "$(calc "100 * $run_ns / $wall_ns")" 2
	check_le "$name: sleep+disk share (points)" "$(calc "100 * ($sl + $dk) / $wall")" 1
	check_near "$name: wall_us vs on+steal+runqueue+sleep+disk (us)" "$wall" \
		"$((on + st + rq + sl + dk))" "$(calc "0.001 * $wall")"
	spin=$(json_eval "$TMP/out.json" "total(stacks('off-cpu:runqueue', '$name', 'spin_until'))")
	check_ge "$name: share of runqueue stack weight preempted in spin_until (%)" \
		"$(calc "100 * $spin / ($rq ? $rq : 1)")" 90
done <"$TMP/report"
finish
