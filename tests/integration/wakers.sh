#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# --wakers: blocked time in the offwaketime chain format
#	TAG;COMM;blocked frames...;--;waker kernel frames leaf->root_[k];
#	waker user frames leaf->root;WAKER_COMM WEIGHT
# mixed's "piperd" thread is blocked in read() on a pipe that only
# "pipewr" writes to, one byte every 20 ms, from wake_reader() (via
# poke_pipe() and libc's write()), so pipewr's write is what wakes every
# block of piperd. `wprof record -p PID -d 2 --wakers`.
#
# Checks:
# - exit 0, clean stderr, strict folded output.
# - piperd is asleep nearly all the window: its off-cpu:sleep weight is
#   >= 95% of 2 s (it runs ~50 us per byte: < 1%).
# - >= 95% of that weight is on chain lines (one `--` frame) that end in
#   the waker comm `pipewr` and have wake_reader among the waker frames:
#   every block is ended by a write except the one still open at the
#   window's end (<= 20 ms of 2 s, 1%).
# - on those lines the blocked part is piperd's read(): a *read* frame and
#   kernel frames at its leaf end, just before `--`; after `--` the waker's
#   kernel frames come first, then its user frames, leaf to root
#   (wake_reader before worker_main, its caller's caller).
# - no line has more than one `--`, every chain line has a waker comm after
#   it, and on-cpu and off-cpu:runqueue lines have no `--` (unchanged).
# - no waker stack is a CPU running the wakeups queued to it by others.
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"
require_bpf
require_workload mixed

start_bg "$TMP/mixed.log" "$WORKLOADS/mixed"
pid=$BG_PID
wait_line "$TMP/mixed.log" '^ready$' 10 || fatal "mixed did not start"

run_wprof rec record --stats -p "$pid" -d 2 --wakers -o "$TMP/out.folded"
check_wprof_ok rec
[ -s "$TMP/out.folded" ] || fatal "no output"
check_folded "$TMP/out.folded"
F=$TMP/out.folded

sl=$(fold_sum "$F" off-cpu:sleep piperd)
check_ge "piperd's off-cpu:sleep weight (us, 95% of 2 s)" "$sl" 1900000

# Per line: the weight of piperd's sleep lines whose waker is pipewr in
# wake_reader, and the structure of the chain.
# A blocked part wprof could not walk is a chain with no blocked stack,
# counted apart: wprof counts those as user_stacks_unwalkable (a thread
# that got a CPU without a sched_switch event ran unseen since), or among
# the switches its summary timed from the thread's run time (one that left
# a CPU without such an event: unseen_switches).
read -r chained badshape nostack <<<"$(awk '
{
	sp = match($0, / [0-9]+$/)
	if (!sp)
		next
	w = substr($0, sp + 1)
	n = split(substr($0, 1, sp - 1), f, ";")
	if (f[1] != "off-cpu:sleep" || f[2] != "piperd")
		next
	d = 0
	for (i = 3; i <= n; i++)
		if (f[i] == "--") { d = i; break }
	if (!d || f[n] != "pipewr")
		next
	wr = 0; wm = 0; rd = 0; shape = 1
	for (i = d + 1; i < n; i++) {
		if (f[i] == "wake_reader") wr = i
		if (f[i] == "worker_main") wm = i
	}
	for (i = 3; i < d; i++)
		if (f[i] ~ /^(__libc_)?read$|^ksys_read_\[k\]$|^(anon_)?pipe_read_\[k\]$/) rd = 1
	if (!wr)
		next
	if (d == 4 && f[3] == "[no stack]") { sum += w; unwalked++; next }
	if (!rd || f[d - 1] !~ /_\[k\]$/ || f[d + 1] !~ /_\[k\]$/ || (wm && wm < wr))
		shape = 0
	# waker: kernel frames first, then user frames
	u = 0
	for (i = d + 1; i < n; i++) {
		if (f[i] !~ /_\[k\]$/) u = 1
		else if (u) shape = 0
	}
	sum += w
	if (!shape) { bad++; print "bad chain: " $0 > "/dev/stderr" }
}
END { printf "%.0f %d %d\n", sum, bad, unwalked }' "$F" 2>"$TMP/badchains")"
log "piperd: sleep $sl us, $chained us on chains woken by pipewr in wake_reader"
check_ge "share of piperd's sleep weight woken by pipewr in wake_reader (%)" \
	"$(calc "100 * $chained / ($sl ? $sl : 1)")" 95
check "those chains: blocked in *read* with kernel frames before --, waker kernel then user frames, leaf to root (bad: ${badshape:-?})" \
	test "${badshape:-1}" = 0
head -3 "$TMP/badchains" | cut -c1-300 | sed 's/^/#   /'
unwalkable=$(sed -n 's/^wprof: lost: \([0-9]*\) .*\[user_stacks_unwalkable\]$/\1/p' "$TMP/rec.err")
unseen=$(unseen_switches rec)
check_le "chains with no blocked stack, at most the intervals wprof reports unwalkable (${unwalkable:-0}) or left without a stack by unseen switches ($unseen)" \
	"${nostack:-x}" "$((${unwalkable:-0} + unseen))"

bad=$(awk '{ sp = match($0, / [0-9]+$/); n = split(substr($0, 1, sp - 1), f, ";"); c = 0
	for (i = 1; i <= n; i++) if (f[i] == "--") { c++; d = i }
	if (c > 1 || (c && (d >= n - 1 || f[n] ~ /_\[k\]$/))) print }' "$F" | head -3)
check "at most one --, followed by frames and a waker comm, per line" test -z "$bad"
[ -n "$bad" ] && echo "$bad" | cut -c1-300 | sed 's/^/#   /'
bad=$(grep -E '^(on-cpu|off-cpu:runqueue);' "$F" | grep -c -- ';--;')
check "on-cpu and off-cpu:runqueue lines have no -- (got $bad)" test "$bad" = 0
# The waker is taken in its own context (sched_waking), never where a CPU
# runs its queue of wakeups from others (sched_ttwu_pending, in an interrupt
# or on its way to idle, on whatever task runs there): before, 6% of
# piperd's sleep once came out woken by that, not by pipewr.
bad=$(grep -- ';--;' "$F" | grep -c ';sched_ttwu_pending_\[k\];')
check "no waker is a CPU running its queue of others' wakeups (sched_ttwu_pending: $bad lines)" \
	test "$bad" = 0
finish
