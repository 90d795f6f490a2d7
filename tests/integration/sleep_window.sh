#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# A sleep that spans both edges of the window counts as the window, under
# the stack it blocked with before recording began. longsleep's "napper"
# thread sleeps 10 s in one nanosleep() (long_nap() called from
# napper_main()); 1 s into it, `wprof record -p PID -d 2 --format json`
# records a window that ends ~7 s before the sleep does.
#
# Checks (napper never runs inside the window, so nothing is sampled and
# all its numbers come from the window's edges):
# - its sleep_us, wall_us and the total_us of its off-cpu:sleep stacks equal
#   window_us within 1 ms: the interval is clipped to the same two edges
#   that window_us is measured between; 1 ms covers rounding to us and the
#   gap between the end-edge timestamps of the window and of the pass that
#   closes open intervals. Not 10 s (the whole sleep), not 1 s + 2 s (since
#   the sleep began).
# - window_us is 2 s within 100 ms (the -d timer of a user-space loop).
# - on_cpu_us = runqueue_us = disk_us = 0; max_block_us <= window_us
#   (+ 1 ms): the one block is the clipped sleep.
# - >= 99% of its weight in a stack with long_nap rootward of a *nanosleep*
#   frame (libc's clock_nanosleep or the kernel's hrtimer_nanosleep): the
#   start snapshot reads the stacks of a thread that blocked before the
#   recording began.
# - the main thread, in pthread_join() all along, likewise sleeps the whole
#   window.
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"
require_bpf
require_workload longsleep

start_bg "$TMP/longsleep.log" "$WORKLOADS/longsleep" -s 10
pid=$BG_PID
wait_line "$TMP/longsleep.log" '^ready [0-9]+$' 10 || fatal "longsleep did not start"
tid=$(awk '/^ready/ { print $2 }' "$TMP/longsleep.log")
sleep 1

run_wprof rec record -p "$pid" -d 2 -f json -o "$TMP/out.json"
check_wprof_ok rec
check "napper still asleep after the window (pid $pid alive)" kill -0 "$pid"
[ -s "$TMP/out.json" ] || fatal "no output"
check_json "$TMP/out.json"

window=$(json_eval "$TMP/out.json" 'j["window_us"]')
read -r wall on rq sl dk maxb <<<"$(json_eval "$TMP/out.json" '" ".join(str(thread("napper")[k]) for k in ("wall_us", "on_cpu_us", "runqueue_us", "sleep_us", "disk_us", "max_block_us"))')"
[ -n "${maxb:-}" ] || fatal "no JSON thread entry for napper (tid $tid)"
st=$(json_eval "$TMP/out.json" "total(stacks('off-cpu:sleep', tid=$tid))")
in_nap=$(json_eval "$TMP/out.json" \
	"total(s for s in stacks('off-cpu:sleep', tid=$tid, frame='long_nap') if any(re.fullmatch('.*nanosleep.*', f) for f in s['frames'][s['frames'].index('long_nap'):]))")
log "window $window us; napper (tid $tid): wall $wall on $on rq $rq sleep $sl disk $dk" \
	"max block $maxb; stacks $st us, $in_nap us under long_nap -> *nanosleep*"
json_eval "$TMP/out.json" "[' '.join(s['frames']) for s in stacks(tid=$tid)]" | sed 's/^/#   /'

check_near "window_us vs -d 2 (us)" "$window" 2000000 100000
check_near "napper sleep_us vs window_us (us)" "$sl" "$window" 1000
check_near "napper wall_us vs window_us (us)" "$wall" "$window" 1000
check_near "napper off-cpu:sleep stack weight vs window_us (us)" "$st" "$window" 1000
check "napper has no on-CPU, runqueue or disk time (got $on, $rq, $dk)" \
	test "$((on + rq + dk))" -eq 0
check_le "napper max_block_us (clipped to the window)" "$maxb" "$((window + 1000))"
check_ge "share of napper's sleep weight under long_nap -> *nanosleep* (%)" \
	"$(calc "100 * $in_nap / ($st ? $st : 1)")" 99
main_sl=$(json_eval "$TMP/out.json" "thread('longsleep')['sleep_us']")
check_near "main thread (pthread_join) sleep_us vs window_us (us)" "$main_sl" "$window" 1000
finish
