#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Stack weights add up exactly to the thread accounting. `wprof record -p
# PID -d 2 -f json` on mixed, whose threads spend the window on CPU (burn),
# half on and half off (mix), in short naps (nap), in pipe reads and writes
# (piperd, pipewr), fsync (syncer), or blocked all along (idle, the main
# thread). For every thread (pid, tid), to the us:
# - the totals of its stacks sum to on_cpu_us + runqueue_us + sleep_us +
#   disk_us, which is its wall_us;
# - per state: its on-cpu stacks sum to on_cpu_us (its switch-timed CPU time,
#   split by samples), its off-cpu:sleep stacks to sleep_us, off-cpu:disk to
#   disk_us, off-cpu:runqueue to runqueue_us (each line rounded within the
#   thread, not on its own);
# - a thread that ran but was never sampled has exactly one on-CPU line, its
#   frame [unsampled], counted in unsampled_threads/unsampled_us.
# Recorded three ways: at the default 99 Hz; with --wakers (blocked time
# whose waker is known goes to chain lines, which must count too) at 1 Hz,
# so that every thread but burn runs unsampled; and with --min-block 1ms,
# where off-CPU stacks may only lose time (the thread totals stay exact) and
# on-CPU stacks stay exact.
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"
require_bpf
require_workload mixed

start_bg "$TMP/mixed.log" "$WORKLOADS/mixed" -f "$(disk_path sync.dat)"
pid=$BG_PID
wait_line "$TMP/mixed.log" '^ready$' 10 || fatal "mixed did not start"

# PY: per thread "comm tid wall parts stacks on/on rq/rq sl/sl dk/dk" (stack
# sums / thread totals), unsampled lines and counters.
SUMS='" ".join(str(x) for x in [t["comm"], t["tid"], t["wall_us"],
	t["on_cpu_us"] + t["steal_us"] + t["runqueue_us"] + t["throttled_us"] + t["sleep_us"] +
	t["disk_us"],
	total(stacks(tid=t["tid"]))] +
	["%d/%d" % (total(stacks(tag, tid=t["tid"])), t[k]) for tag, k in (("on-cpu", "on_cpu_us"),
	 ("steal", "steal_us"), ("off-cpu:runqueue", "runqueue_us"), ("off-cpu:sleep", "sleep_us"),
	 ("off-cpu:disk", "disk_us"))] +
	[len(stacks("on-cpu", tid=t["tid"], frame=r"\[unsampled\]")),
	 total(stacks("on-cpu", tid=t["tid"]), "count")])'

# totals NAME EXACT: the checks on $TMP/NAME.json; EXACT=0 when filters may
# leave off-CPU time out of the stacks.
totals()
{
	local n=$1 exact=$2 comm tid wall parts sum on st rq sl dk nun samples a b

	check_json "$TMP/$n.json"
	while read -r comm tid wall parts sum on st rq sl dk nun samples; do
		log "$n: $comm ($pid, $tid): wall $wall, stacks $sum; stacks/thread:" \
			"on $on, steal $st, runqueue $rq, sleep $sl, disk $dk; $samples samples," \
			"$nun [unsampled]"
		check "$n: $comm: wall_us = on + steal + runqueue + sleep + disk ($wall vs $parts)" \
			test "$wall" -eq "$parts"
		a=${on%/*} b=${on#*/}
		check "$n: $comm: on-cpu stacks = on_cpu_us ($a vs $b)" test "$a" -eq "$b"
		a=${st%/*} b=${st#*/}
		check "$n: $comm: steal stacks = steal_us ($a vs $b)" test "$a" -eq "$b"
		if [ "$exact" = 1 ]; then
			check "$n: $comm: stack totals = wall_us ($sum vs $wall)" test "$sum" -eq "$wall"
			for st in "runqueue:$rq" "sleep:$sl" "disk:$dk"; do
				a=${st#*:} b=${a#*/} a=${a%/*}
				check "$n: $comm: off-cpu:${st%%:*} stacks = its ${st%%:*}_us ($a vs $b)" \
					test "$a" -eq "$b"
			done
		else
			check "$n: $comm: stack totals <= wall_us ($sum vs $wall)" test "$sum" -le "$wall"
		fi
		if [ "$samples" -eq 0 ] && [ "${on#*/}" -gt 0 ]; then
			check "$n: $comm: ran unsampled: one [unsampled] line (got $nun)" test "$nun" -eq 1
		else
			check "$n: $comm: no [unsampled] line (got $nun)" test "$nun" -eq 0
		fi
	done < <(json_eval "$TMP/$n.json" "[$SUMS for t in threads() if t['pid'] == $pid]")
	# the 8 threads of mixed and nothing else; the process sums them exactly
	while read -r k a b; do
		if [ "$k" = threads ]; then
			check "$n: the 8 threads of mixed, and nothing else ($a threads, $b of mixed)" \
				test "$a/$b" = 8/8
		else
			check "$n: process $k = the sum over its threads ($a vs $b)" test "$a" = "$b"
		fi
	done < <(json_eval "$TMP/$n.json" "['threads %d %d' % (len(threads()),
		len([t for t in threads() if t['pid'] == $pid]))] +
		['%s %d %d' % (k, j['processes'][0][k], sum(t[k] for t in threads()))
		 for k in ('wall_us', 'on_cpu_us', 'steal_us', 'runqueue_us', 'throttled_us', 'sleep_us',
			   'disk_us')]")
}

run_wprof plain record -p "$pid" -d 2 -f json -o "$TMP/plain.json"
check_wprof_ok plain
[ -s "$TMP/plain.json" ] || fatal "no output"
totals plain 1

run_wprof wakers record --stats -p "$pid" -d 2 -F 1 --wakers -f json -o "$TMP/wakers.json"
check_wprof_ok wakers
[ -s "$TMP/wakers.json" ] || fatal "no output"
totals wakers 1
n=$(json_eval "$TMP/wakers.json" 'len([s for s in j["stacks"] if "--" in s["frames"]])')
check "wakers: there are waker chain lines (got $n)" test "$n" -gt 0
n=$(json_eval "$TMP/wakers.json" 'j["unsampled_threads"]')
check "wakers: at 1 Hz, threads ran unsampled (unsampled_threads $n)" test "$n" -ge 3
check "wakers: the summary counts them" grep -q "^wprof: .* $n threads ran .* without a sample" \
	"$TMP/wakers.err"

run_wprof minblock record -p "$pid" -d 2 --min-block 1ms -f json -o "$TMP/minblock.json"
check_wprof_ok minblock
[ -s "$TMP/minblock.json" ] || fatal "no output"
totals minblock 0
finish
