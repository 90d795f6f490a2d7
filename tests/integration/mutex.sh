#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Lock contention is off-CPU time under the lock call. mutexwait runs 4
# threads ("lock0".."lock3") for 3 s, each looping { pthread_mutex_lock;
# 5 ms of CPU; unlock; 1 ms of CPU }: at most one holds the lock, the others
# sleep in the futex inside pthread_mutex_lock. They block nowhere else.
#
# Ground truth, from each thread around every pthread_mutex_lock call: wall
# time (CLOCK_MONOTONIC), its CPU time (CLOCK_THREAD_CPUTIME_ID) and its
# run-queue delay (schedstat). A waiter is woken at every unlock, may find
# the lock taken again and go back to sleep, so a call is a mix of sleep,
# wakeup latency and a little CPU; the blocked part is
#	blocked = lock_ns - lock_cpu_ns - lock_rq_ns.
#
# Checks, per thread and summed over the 4:
# - each took the lock >= 20 times (~120 with fair turns: the 1 ms of CPU
#   after unlock lets a woken waiter in; without it glibc's mutex lets one
#   thread keep the lock and the others wait once, for the whole run).
# - >= 90% of the off-cpu:sleep weight has a frame matching
#   pthread_mutex_lock, __lll_lock_wait or futex_wait (the user-space lock
#   path or the kernel's futex wait): all of it should, the 10% is the
#   issue's margin.
# - that weight vs `blocked`, within 0.5% + 2 ms per thread (0.5% + 5 ms
#   for the sum). Both time the same sleeps; they differ only by where a
#   wakeup ends one: wprof at its sched_wakeup event, the kernel's run delay
#   from the enqueue just before it, read from a run-queue clock that may
#   lag by a few us. Measured: ~115 sleeps a thread, wprof 0.5-2 ms (a few
#   us a wakeup) above the truth. The clock reads around each call add
#   < 1 us. The bound (~11 ms) is below one wait for the lock (~16 ms:
#   three holders' 6 ms rounds), so a dropped or doubled sleep fails, and
#   so does a runqueue wait booked as sleep (the run delay is 10-30 ms).
# - on a VM, `blocked` also holds the hypervisor's pauses while the thread
#   ran in pthread_mutex_lock (steal: the thread's CPU clock and its run
#   delay both leave it out; a pause is often 10-16 ms, seen in 1 run in
#   20 here). wprof books that as steal, at the stack of the sample the
#   pause ended in: the weight compared is sleep + steal under the lock
#   frames (0 steal on a machine without it).
# - a sleep whose resume the kernel gave no sched_switch event for (this
#   VM's 6.18 does that a few times a second) is timed exactly but gets no
#   stack where no program runs at every resume (the resume task work): it
#   is a "[no stack]" line of the thread, and counts with the lock frames,
#   only if the summary says such switches happened.
# - the sleep and steal weight is at most the wall time inside pthread_mutex_lock
#   (+ 1 ms, 4 ms for the sum: the few us a wakeup above): nothing can be
#   blocked in there longer than the calls last.
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"
require_bpf
require_workload mutexwait

# The default --exact-above: a lock wait (ms) is walked exactly and keeps
# its time; the few short blocks elsewhere (start barrier) are walked as a
# sample and carry the rest of their thread's sleep time.
run_wprof rec record --stats -d 30 -o "$TMP/out.folded" -- \
	"$WORKLOADS/mutexwait" -n 3 -t 4 -b 5 -o 1000 -r "$TMP/report"
check_wprof_ok rec
[ -s "$TMP/report" ] || fatal "mutexwait wrote no report"
[ -s "$TMP/out.folded" ] || fatal "no output"
check_folded "$TMP/out.folded"

LOCK_FRAMES='.*(pthread_mutex_lock|__lll_lock_wait|futex_wait).*'
# switches with no sched_switch event, timed from the thread's run time
unseen=$(unseen_switches rec)
sum_sleep=0
sum_lock=0
sum_steal=0
sum_blocked=0
sum_wait=0
while read -r name tid loops lock_ns cpu_ns rq_ns _wall_ns; do
	sl=$(fold_sum "$TMP/out.folded" off-cpu:sleep "$name")
	lk=$(fold_sum "$TMP/out.folded" off-cpu:sleep "$name" "$LOCK_FRAMES")
	# doubled: awk's -v takes one backslash off (then "\[" would open a bracket expression)
	nostack=$(fold_sum "$TMP/out.folded" off-cpu:sleep "$name" '\\[no stack\\]')
	if [ "$nostack" -gt 0 ]; then
		check "$name: $nostack us of sleep without a stack, from switches the kernel gave no event for" \
			test "$unseen" -gt 0
		lk=$((lk + nostack))
	fi
	st=$(fold_sum "$TMP/out.folded" steal "$name" "$LOCK_FRAMES")
	blocked=$(((lock_ns - cpu_ns - rq_ns) / 1000))
	log "$name (tid $tid): $loops loops, in pthread_mutex_lock $((lock_ns / 1000)) us" \
		"(cpu $((cpu_ns / 1000)), run delay $((rq_ns / 1000)), so blocked $blocked);" \
		"wprof sleep $sl us, under the lock frames $lk (and steal $st)"
	check "$name: took the lock many times (got $loops, want >= 20)" test "$loops" -ge 20
	check_ge "$name: share of off-cpu:sleep weight under a lock frame (%)" \
		"$(calc "100 * $lk / ($sl ? $sl : 1)")" 90
	check_near "$name: sleep and steal weight under the lock vs its blocked time in pthread_mutex_lock (us)" \
		"$((lk + st))" "$blocked" "$(calc "0.005 * $blocked + 2000")"
	check_le "$name: sleep and steal weight under the lock vs its wall time in pthread_mutex_lock (us)" \
		"$((lk + st))" "$((lock_ns / 1000 + 1000))"
	sum_sleep=$((sum_sleep + sl))
	sum_lock=$((sum_lock + lk))
	sum_steal=$((sum_steal + st))
	sum_blocked=$((sum_blocked + blocked))
	sum_wait=$((sum_wait + lock_ns / 1000))
done <"$TMP/report"

log "all lockers: waited $sum_wait us in pthread_mutex_lock, blocked $sum_blocked;" \
	"wprof sleep $sum_sleep, under the lock frames $sum_lock (and steal $sum_steal)"
check_ge "all lockers: share of off-cpu:sleep weight under a lock frame (%)" \
	"$(calc "100 * $sum_lock / ($sum_sleep ? $sum_sleep : 1)")" 90
check_near "all lockers: summed sleep and steal under the lock vs summed blocked time (us)" \
	"$((sum_lock + sum_steal))" "$sum_blocked" "$(calc "0.005 * $sum_blocked + 5000")"
check_le "all lockers: summed sleep and steal under the lock vs summed time in pthread_mutex_lock (us)" \
	"$((sum_lock + sum_steal))" "$((sum_wait + 4000))"
finish
