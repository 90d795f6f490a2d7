#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Memory and maps under churn. `wprof record --exact-above 0 -- churn` while
# churn runs 3 x 235 processes (fork, exec of itself, 24 naps of 1 us at
# 24 call depths, exit) and 3 x 3000 threads (8 naps at 8 depths, exit).
# More goes through the BPF maps than they hold: each thread has its own
# keys of times by stacks (>= 8 each: 72,000 against the counts map's
# 65,536), and each process its own user stacks (its addresses are
# randomized: >= 24 each, 16,920 against the stack map's 16,384). It goes
# through only because wprof drains the maps while recording. (Not the
# thread map's 32,768 threads: the pids would wrap around this machine's
# pid_max, and a reused tid is one thread to wprof.)
#
# Ground truth is churn's own count of what it ran (its log), not wprof's.
# Checks:
# - wprof exits 0 (churn's status), clean stderr, and reports the drains;
# - nothing was lost to a full map: stack_map_full, counts_map_full,
#   thread_map_full and dropped_us are 0;
# - every thread churn made is in the output, no more: 1 (churn) + procs
#   + threads, by churn's log;
# - the stacks add up to the threads' wall time, to the us (nothing drained
#   twice or lost between drains);
# - wprof's RSS, read from /proc after phase 1 (warm-up) and after phase 3,
#   grows by at most RSS_PER_TASK_B bytes per process and thread churn made
#   in between. Not flat: what an ended thread leaves is its lines of the
#   output (here ~17 keys of times by stacks each, ~150 bytes a key) and a
#   process its stacks (24 new ones each); 3.6-3.9 KB per task was
#   measured here. What else a process cost (its maps snapshot, ~8 KB) is freed.
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"
require_bpf
require_workload churn

PROCS=235
THREADS=3000
: "${RSS_PER_TASK_B:=5120}"
clog=$TMP/churn.log

log "wprof record --exact-above 0 -f json -o out.json -- churn -n 3 -p $PROCS -t $THREADS"
"$WPROF" record --exact-above 0 -f json -o "$TMP/out.json" -- "$WORKLOADS/churn" -l "$clog" \
	-n 3 -p "$PROCS" -t "$THREADS" -d 24 -w 1500 >"$TMP/rec.out" 2>"$TMP/rec.err" &
wpid=$!
LIB_PIDS+=("$wpid")

rss_kb()
{
	awk '/^VmRSS:/ { print $2 }' "/proc/$wpid/status" 2>/dev/null
}

# each sample is taken in churn's pause after a phase, after a drain (1 s)
wait_line "$clog" '^phase 1 ' 40 || fatal "churn did not finish phase 1 in 40 s"
sleep 1.2
rss1=$(rss_kb)
log "$(tail -1 "$clog"): wprof RSS $rss1 KiB"
wait_line "$clog" '^phase 3 ' 60 || fatal "churn did not finish phase 3 in 60 s"
sleep 1.2
rss2=$(rss_kb)
log "$(tail -1 "$clog"): wprof RSS $rss2 KiB"
wait_exit "$wpid" 60 || fatal "wprof did not stop within 60 s of churn's end"
RC=$WAIT_RC
log "exit $RC; stderr:"
grep -v '^wprof:   ' "$TMP/rec.err" | sed 's/^/#   /' | head -30
check_wprof_ok rec

read -r _ _ _ procs _ threads < <(tail -1 "$clog")
check "churn ran every phase (log: $(tail -1 "$clog"))" test "$procs" -eq $((3 * PROCS))
check "more keys than the counts map holds went through (threads x 8: $((threads * 8)))" \
	test "$((threads * 8))" -gt 65536
check "more stacks than the stack map holds went through (processes x 24: $((procs * 24)))" \
	test "$((procs * 24))" -gt 16384
check "the maps were drained while recording" \
	grep -qE '^wprof: maps drained [1-9][0-9]* times' "$TMP/rec.err"

# one parse of the (large) output for every figure
read -r lost got stacks_us wall_us < <(json_eval "$TMP/out.json" '"%s %d %d %d" % (
	",".join("%s=%d" % (k, j["lost"][k]) for k in
		 ("stack_map_full", "counts_map_full", "thread_map_full", "dropped_us")),
	len(threads()), sum(s["total_us"] for s in j["stacks"]),
	sum(t["wall_us"] for t in threads()))')
check "nothing lost to a full map ($lost)" \
	test "$lost" = "stack_map_full=0,counts_map_full=0,thread_map_full=0,dropped_us=0"
want=$((1 + procs + threads))
check "threads in the output: $got (churn made $want)" test "$got" = "$want"
check "stacks add up to the threads' wall time: $stacks_us us vs $wall_us us" \
	test "$stacks_us" = "$wall_us"

tasks=$((2 * (PROCS + THREADS)))
check_le "wprof RSS growth from phase 1 to 3 ($rss1 -> $rss2 KiB), bytes per task made" \
	"$(((rss2 - rss1) * 1024 / tasks))" "$RSS_PER_TASK_B"
finish
