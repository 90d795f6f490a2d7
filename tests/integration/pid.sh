#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# `wprof record -p PID -d 3` on an already running sleepburn (30 ms burn /
# 170 ms nanosleep loop). The burner lives through the whole window, so its
# on+off weight is the window: 3 s.
#
# Tolerances:
# - on+off = 3 s within 100 ms. On-CPU weight is sampled (99 Hz): over 15
#   bursts of 30 ms the sampling error is ~1 sample (10 ms, see cmd.sh), and
#   the -d timer of a user-space loop may be late by some tens of ms. A
#   profiler that drops the sleep in progress when recording starts or ends
#   loses 85 ms per edge on average (170 ms max), which this usually catches.
# - on-CPU share vs the workload's long-run share (its cpu/wall at exit)
#   within 3 points: 1 point of sampling error (cmd.sh) plus up to one burst
#   (30 ms = 1 point of 3 s) cut at each window edge.
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"
require_bpf
require_workload sleepburn

start_bg "$TMP/sleepburn.log" "$WORKLOADS/sleepburn" -r "$TMP/report"
pid=$BG_PID
wait_line "$TMP/sleepburn.log" '^ready [0-9]+$' 10 || fatal "sleepburn did not start"
tid=$(awk '/^ready/ { print $2 }' "$TMP/sleepburn.log")
log "sleepburn pid $pid, burner tid $tid"

run_wprof rec record -p "$pid" -d 3 -o "$TMP/out.folded"
check_wprof_ok rec
check "target still runs after wprof detached" kill -0 "$pid"
# Generous: BPF load + 3 s + symbolization.
check_le "wprof took (ms)" "$ELAPSED_MS" 15000

kill -TERM "$pid"
wait_exit "$pid" 5 || fatal "sleepburn ignored SIGTERM"
[ -s "$TMP/report" ] || fatal "sleepburn wrote no report"
[ -s "$TMP/out.folded" ] || fatal "no output"
check_folded "$TMP/out.folded"

cpu_us=$(($(report_get "$TMP/report" cpu_ns) / 1000))
wall_us=$(($(report_get "$TMP/report" wall_ns) / 1000))
on=$(fold_sum "$TMP/out.folded" on-cpu burner)
off=$(fold_sum "$TMP/out.folded" 'off-cpu:.*' burner)
total=$((on + off))
log "ground truth: burner cpu ${cpu_us} us / wall ${wall_us} us; wprof: on $on us, off $off us"

check_near "burner on+off weight vs the 3 s window (us)" "$total" 3000000 100000
check_near "burner on-CPU share (%)" "$(calc "100 * $on / ($total ? $total : 1)")" \
	"$(calc "100 * $cpu_us / $wall_us")" 3
burn=$(fold_sum "$TMP/out.folded" on-cpu burner burn_cpu)
check_ge "share of burner on-CPU weight in burn_cpu (%)" "$(calc "100 * $burn / ($on ? $on : 1)")" 90
nsl=$(fold_sum "$TMP/out.folded" 'off-cpu:.*' burner '.*nanosleep.*')
# The wait for a CPU after a preemption in burn_cpu is no sleep's: it grows
# with the machine's load, and is left out of the share.
pre=$(fold_sum "$TMP/out.folded" off-cpu:runqueue burner burn_cpu)
check_ge "share of burner off-CPU weight (preempted in burn_cpu aside: $pre us) under a *nanosleep* frame (%)" \
	"$(calc "100 * $nsl / ($off - $pre > 0 ? $off - $pre : 1)")" 90
kern=$(fold_sum "$TMP/out.folded" 'off-cpu:.*' burner '.*_[[]k[]]')
check_ge "share of burner off-CPU weight with kernel frames (%)" \
	"$(calc "100 * $kern / ($off ? $off : 1)")" 90
comms=$(fold_field "$TMP/out.folded" comm | grep -Ev '^(burner|sleepburn)$')
check "only the target's threads (burner, sleepburn) appear (others: ${comms:-none})" test -z "$comms"
finish
