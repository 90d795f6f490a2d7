#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# --wakers names a waking done in an interrupt as the interrupt, not as the
# task it happened to land on. shortnaps' thread "alt" sleeps in nanosleep()
# (5 and 10 ms, in turn), on the same CPU as runq's spinner "spin0", which
# never sleeps: the kernel ends each nap from the timer interrupt (the
# hrtimer's expiry calls hrtimer_wakeup()), which lands on the spinner
# nearly every time. `wprof record -p ALT_PID -d 3 --wakers`.
# Checks:
# - alt sleeps nearly all the window (>= 90% of 3 s in off-cpu:sleep);
# - >= 95% of its sleep is on chain lines whose waker is "[irq: timer]"
#   with hrtimer_wakeup among the waker's kernel frames, and no user frames;
# - no line names the spinner (spin0, runq) as a waker.
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"
require_bpf
require_workload shortnaps
require_workload runq

cpu=$(($(nproc) - 1))
start_bg "$TMP/runq.log" taskset -c "$cpu" "$WORKLOADS/runq" -t 1 -n 30
wait_line "$TMP/runq.log" '^ready$' 10 || fatal "runq did not start"
runq_pid=$BG_PID
start_bg "$TMP/naps.log" taskset -c "$cpu" "$WORKLOADS/shortnaps" -t 1 -s 5000 -l 10000 -n 30
wait_line "$TMP/naps.log" '^ready$' 10 || fatal "shortnaps did not start"

run_wprof rec record --stats -p "$BG_PID" -d 3 --wakers -o "$TMP/out.folded"
check_wprof_ok rec
[ -s "$TMP/out.folded" ] || fatal "no output"
check_folded "$TMP/out.folded"
kill "$runq_pid" 2>/dev/null

sl=$(fold_sum "$TMP/out.folded" off-cpu:sleep alt)
check_ge "alt's off-cpu:sleep weight (us, 90% of 3 s)" "$sl" 2700000
# per line of alt's sleep: the waker (the last frame) and whether the frames
# after "--" have hrtimer_wakeup and only kernel frames before the name
read -r timer other spinner <<<"$(awk '
{
	sp = match($0, / [0-9]+$/)
	if (!sp)
		next
	w = substr($0, sp + 1)
	n = split(substr($0, 1, sp - 1), f, ";")
	for (i = 3; i <= n && f[i] != "--"; i++)
		;
	if (i > n)
		next
	for (j = i + 1; j < n; j++)
		if (f[j] == "hrtimer_wakeup_[k]")
			hr = 1
		else if (f[j] !~ /_\[k\]$/)
			user = 1
	if (f[n] == "spin0" || f[n] == "runq")
		spinner += w
	if (f[1] == "off-cpu:sleep" && f[2] == "alt") {
		if (f[n] == "[irq: timer]" && hr && !user)
			timer += w
		else
			other += w
	}
	hr = user = 0
}
END { printf "%d %d %d\n", timer, other, spinner }' "$TMP/out.folded")"
log "alt's sleep on chain lines: ${timer:-0} us woken by [irq: timer] (hrtimer_wakeup), ${other:-0} us by anything else; lines woken by the spinner: ${spinner:-0} us"
check_ge "share of alt's sleep woken by [irq: timer] through hrtimer_wakeup (%)" \
	"$(calc "$sl ? 100 * ${timer:-0} / $sl : 0")" 95
check "no waking credited to the spinner (${spinner:-0} us)" test "${spinner:-0}" -eq 0
finish
