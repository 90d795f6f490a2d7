#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# `wprof record -- sleepburn`: the burner thread loops { 30 ms of CPU in
# burn_cpu(); 170 ms in nanosleep() }, so ~15% on-CPU, ~85% off-CPU. Its own
# report (CLOCK_THREAD_CPUTIME_ID, CLOCK_MONOTONIC, schedstat) is the ground
# truth.
#
# Tolerances, for 5 s of run time (25 loops, ~0.75 s on-CPU). Samples only
# say where the on-CPU time went; how much there was comes from the switch
# events, exact, as is every off-CPU interval. So:
# - on-CPU weight vs the kernel's schedstat run time of the burner (read by
#   the burner just before it returns): within 15 ms (2%) plus
#   SWITCH_SLACK_US per context switch (tests/lib.sh). wprof times the
#   switches by the clock; the kernel's run time leaves out what a VM's host
#   stole and (with IRQ time accounting) interrupts, and is clocked at other
#   points of each switch. A sampling-period estimate was off by ~1 sample
#   per 5 bursts (10 ms), up to 50 ms over the run.
# - on+off vs the burner's own wall time (CLOCK_MONOTONIC from its first to
#   its last reading): within 20 ms, its life before the first reading (the
#   wait for its first CPU, pthread setup) and after the last (thread exit),
#   each a few ms at most even on a loaded machine. A sleep lost or doubled
#   would be 170 ms.
# - on-CPU and off-CPU shares vs the burner's cpu/wall: within 1 point
#   (50 ms of 5 s; it was 2 with sampling error), for the same reasons.
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"
require_bpf
require_workload sleepburn

run_wprof rec record --stats -d 20 -o "$TMP/out.folded" -- \
	"$WORKLOADS/sleepburn" -n 5 -q -r "$TMP/report"
check_wprof_ok rec
check "nothing on stdout with -o" test ! -s "$TMP/rec.out"
# -d 20 is only a safety net: recording must end when the command exits.
check_le "wprof ended with its command (ms)" "$ELAPSED_MS" 15000
[ -s "$TMP/report" ] || fatal "sleepburn wrote no report"
[ -s "$TMP/out.folded" ] || fatal "no output"
check_folded "$TMP/out.folded"

cpu_us=$(($(report_get "$TMP/report" cpu_ns) / 1000))
wall_us=$(($(report_get "$TMP/report" wall_ns) / 1000))
run_us=$(($(report_get "$TMP/report" schedstat_run_ns) / 1000))
on=$(fold_sum "$TMP/out.folded" on-cpu burner)
off=$(fold_sum "$TMP/out.folded" 'off-cpu:.*' burner)
# the hypervisor's time (steal): in the workload's wall time, not in its CPU time
steal=$(fold_sum "$TMP/out.folded" steal burner)
total=$((on + off + steal))
log "ground truth: burner cpu ${cpu_us} us, schedstat run ${run_us} us, wall ${wall_us} us;" \
	"wprof: on $on us, off $off us, steal $steal us"

switches=$(switches_of rec)
check_near "burner on-CPU weight vs its schedstat run time ($switches switches) (us)" "$on" \
	"$run_us" "$((15000 + SWITCH_SLACK_US * ${switches:-0}))"
check_near "burner on+off+steal weight vs its wall time (us)" "$total" "$wall_us" 20000
check_near "burner on-CPU share (%)" "$(calc "100 * $on / ($total ? $total : 1)")" \
	"$(calc "100 * $cpu_us / $wall_us")" 1
check_near "burner off-CPU + steal share (%)" "$(calc "100 * ($off + $steal) / ($total ? $total : 1)")" \
	"$(calc "100 - 100 * $cpu_us / $wall_us")" 1

# Stacks. burn_cpu() reads the clock only every ~100 us of arithmetic, so it is
# in nearly every on-CPU stack; 10% is left for samples in the wakeup path.
burn=$(fold_sum "$TMP/out.folded" on-cpu burner burn_cpu)
check_ge "share of burner on-CPU weight in burn_cpu (%)" "$(calc "100 * $burn / ($on ? $on : 1)")" 90
# Root first: the thread function is rootward of burn_cpu.
ordered=$(fold_sum_ordered "$TMP/out.folded" on-cpu burner burner_main burn_cpu)
check_ge "share of burner on-CPU weight with burner_main before burn_cpu (%)" \
	"$(calc "100 * $ordered / ($on ? $on : 1)")" 90

# Off-CPU: all sleeps are nanosleep() calls; what is left is waiting for a
# CPU after being preempted while burning, which grows with the machine's
# load: it is left out of the share.
nsl=$(fold_sum "$TMP/out.folded" 'off-cpu:.*' burner '.*nanosleep.*')
pre=$(fold_sum "$TMP/out.folded" off-cpu:runqueue burner burn_cpu)
check_ge "share of burner off-CPU weight (preempted in burn_cpu aside: $pre us) under a *nanosleep* frame (%)" \
	"$(calc "100 * $nsl / ($off - $pre > 0 ? $off - $pre : 1)")" 90
sleep_w=$(fold_sum "$TMP/out.folded" off-cpu:sleep burner)
check_ge "share of burner off-CPU weight (preempted in burn_cpu aside) tagged off-cpu:sleep (nanosleep is TASK_INTERRUPTIBLE) (%)" \
	"$(calc "100 * $sleep_w / ($off - $pre > 0 ? $off - $pre : 1)")" 90
# A thread leaves the CPU inside the kernel, so off-CPU stacks end in kernel frames.
kern=$(fold_sum "$TMP/out.folded" 'off-cpu:.*' burner '.*_[[]k[]]')
check_ge "share of burner off-CPU weight with kernel frames (%)" \
	"$(calc "100 * $kern / ($off ? $off : 1)")" 90
bad=$(fold_bad_kernel_order "$TMP/out.folded")
check "kernel (_[k]) frames are only at the leaf end" test -z "$bad"
[ -n "$bad" ] && echo "$bad" | head -3 | sed 's/^/#   /'
# The workload's own functions must be named, not module+0xOFFSET.
check "no unsymbolized sleepburn+0x frame" \
	sh -c "! grep -q 'sleepburn+0x' '$TMP/out.folded'"

badtags=$(fold_field "$TMP/out.folded" tag | grep -Ev '^(on-cpu|steal|off-cpu:(sleep|disk|runqueue))$')
check "only on-cpu, steal and off-cpu:{sleep,disk,runqueue} tags (unexpected: ${badtags:-none})" \
	test -z "$badtags"

# Default output is stdout.
run_wprof stdout record -d 20 -- "$WORKLOADS/sleepburn" -n 1 -q
check_wprof_ok stdout
check_folded "$TMP/stdout.out"
check "burner's burn_cpu in stdout output" test "$(fold_sum "$TMP/stdout.out" on-cpu burner burn_cpu)" -gt 0
finish
