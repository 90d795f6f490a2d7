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
# Two runs:
# 1. `-f json` with WPROF_RETIRE=always: the lines of the threads that ended
#    are made while recording, after the drain that took them, not at the
#    end. Checks:
#    - wprof exits 0 (churn's status), clean stderr, and reports the drains
#      and the threads made into lines as they ended;
#    - nothing was lost to a full map: stack_map_full, counts_map_full,
#      thread_map_full and dropped_us are 0; nor late: late_keys is 0; nor
#      freed too soon: stacks_missing is 0; nor a thread slot held too
#      long: thread_slot_busy is 0;
#    - every thread churn made is in the output, no more: 1 (churn) + procs
#      + threads, by churn's log;
#    - the stacks add up to the threads' wall time, to the us (nothing
#      drained twice or lost between drains or between the lines made while
#      recording and those made at the end).
# 2. folded and `-f threads` (WPROF_RETIRE's default makes lines while
#    recording for such outputs): every thread is in the threads table, and
#    wprof's RSS, read from /proc after phase 1 (warm-up) and after phase 3,
#    grows by at most RSS_PER_TASK_B bytes per process and thread churn made
#    in between: what a thread that ended leaves is its row of the table
#    (~300 bytes) and a process its histogram (~270); its keys, stacks and
#    maps snapshot are freed, and its lines are the folded lines other
#    threads of its name share. (With thread ids in the lines, json, each
#    thread's lines are its own: ~3.7 KB a task measured here.)
# 3. folded alone: the rows of ended processes go too (but the 10 busiest),
#    and their command lines: the summary still counts every process and
#    thread churn made, nothing comes late, and the RSS grows by at most
#    RSS_ALONE_PER_TASK_B bytes a task (110 to 310 measured here).
# Three recordings of 9,700 tasks: 76-78 s on a 2-CPU VM, most of the
# runner's default limit, so this script sets its own.
# test-timeout: 240
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"
require_bpf
require_workload churn

PROCS=235
THREADS=3000
: "${RSS_PER_TASK_B:=1536}"
: "${RSS_ALONE_PER_TASK_B:=512}"

# churn_record NAME WPROF-ARGS...: record churn's 3 phases into $TMP/NAME.*,
# with wprof's RSS after phases 1 and 3 in rss1, rss2 (KiB).
churn_record()
{
	local name=$1 clog=$TMP/$1.churn.log
	shift
	log "wprof record $* -- churn -n 3 -p $PROCS -t $THREADS"
	"$WPROF" record "$@" -- "$WORKLOADS/churn" -l "$clog" \
		-n 3 -p "$PROCS" -t "$THREADS" -d 24 -w 3500 >"$TMP/$name.out" 2>"$TMP/$name.err" &
	wpid=$!
	LIB_PIDS+=("$wpid")
	# each sample is taken in churn's pause after a phase, once the phase's
	# threads have been made into lines: a drain takes them (1 s), the next
	# one ripens them
	wait_line "$clog" '^phase 1 ' 40 || fatal "churn did not finish phase 1 in 40 s"
	sleep 3.2
	rss1=$(awk '/^VmRSS:/ { print $2 }' "/proc/$wpid/status" 2>/dev/null)
	log "$(tail -1 "$clog"): wprof RSS $rss1 KiB"
	wait_line "$clog" '^phase 3 ' 60 || fatal "churn did not finish phase 3 in 60 s"
	sleep 3.2
	rss2=$(awk '/^VmRSS:/ { print $2 }' "/proc/$wpid/status" 2>/dev/null)
	log "$(tail -1 "$clog"): wprof RSS $rss2 KiB"
	wait_exit "$wpid" 60 || fatal "wprof did not stop within 60 s of churn's end"
	RC=$WAIT_RC
	log "exit $RC; stderr:"
	grep -v '^wprof:   ' "$TMP/$name.err" | sed 's/^/#   /' | head -30
	check_wprof_ok "$name"
	read -r _ _ _ procs _ threads < <(tail -1 "$clog")
	check "$name: churn ran every phase (log: $(tail -1 "$clog"))" test "$procs" -eq $((3 * PROCS))
}

WPROF_RETIRE=always churn_record json --stats --exact-above 0 -f json -o "$TMP/out.json"
check "more keys than the counts map holds went through (threads x 8: $((threads * 8)))" \
	test "$((threads * 8))" -gt 65536
check "more stacks than the stack map holds went through (processes x 24: $((procs * 24)))" \
	test "$((procs * 24))" -gt 16384
check "the maps were drained while recording" \
	grep -qE '^wprof: maps drained [1-9][0-9]* times?' "$TMP/json.err"
check "threads were made into lines as they ended (WPROF_RETIRE=always)" \
	grep -qE '^wprof: [1-9][0-9]* ended threads made into lines while recording' "$TMP/json.err"

# one parse of the (large) output for every figure
read -r lost got stacks_us wall_us < <(json_eval "$TMP/out.json" '"%s %d %d %d" % (
	",".join("%s=%d" % (k, j["lost"][k]) for k in
		 ("stack_map_full", "counts_map_full", "thread_map_full", "dropped_us",
		  "late_keys", "stacks_missing", "thread_slot_busy")),
	len(threads()), sum(s["total_us"] for s in j["stacks"]),
	sum(t["wall_us"] for t in threads()))')
check "nothing lost to a full map, nothing late ($lost)" \
	test "$lost" = "stack_map_full=0,counts_map_full=0,thread_map_full=0,dropped_us=0,late_keys=0,stacks_missing=0,thread_slot_busy=0"
want=$((1 + procs + threads))
check "threads in the output: $got (churn made $want)" test "$got" = "$want"
check "stacks add up to the threads' wall time: $stacks_us us vs $wall_us us" \
	test "$stacks_us" = "$wall_us"

churn_record folded --stats -f threads -o "$TMP/out.threads" -o "$TMP/out.folded"
check "folded: threads were made into lines as they ended (WPROF_RETIRE's default)" \
	grep -qE '^wprof: [1-9][0-9]* ended threads made into lines while recording' "$TMP/folded.err"
got=$(awk '$2 ~ /^[0-9]+$/' "$TMP/out.threads" | wc -l)
want=$((1 + procs + threads))
check "folded: threads in the table: $got (churn made $want)" test "$got" = "$want"
check_folded "$TMP/out.folded"
tasks=$((2 * (PROCS + THREADS)))
check_le "folded: wprof RSS growth from phase 1 to 3 ($rss1 -> $rss2 KiB), bytes per task made" \
	"$(((rss2 - rss1) * 1024 / tasks))" "$RSS_PER_TASK_B"

# the summary's "N processes, M threads" of a recording
summary_counts()
{
	sed -n 's/^wprof: recorded .*: \([0-9]*\) process.*, \([0-9]*\) thread.*/\1 \2/p' "$1"
}

churn_record alone --stats -o "$TMP/alone.folded"
check "folded alone: rows of ended processes were let go" \
	grep -qE '^wprof: the rows of [1-9][0-9]* threads of ended processes were let go' \
	"$TMP/alone.err"
read -r nprocs nthreads < <(summary_counts "$TMP/alone.err")
check "folded alone: processes in the summary: $nprocs (churn made $((1 + procs)))" \
	test "$nprocs" = "$((1 + procs))"
check "folded alone: threads in the summary: $nthreads (churn made $((1 + procs + threads)))" \
	test "$nthreads" = "$((1 + procs + threads))"
check "folded alone: nothing late" test "$(grep -c late_keys "$TMP/alone.err")" = 0
check_folded "$TMP/alone.folded"
check_le "folded alone: wprof RSS growth from phase 1 to 3 ($rss1 -> $rss2 KiB), bytes per task made" \
	"$(((rss2 - rss1) * 1024 / tasks))" "$RSS_ALONE_PER_TASK_B"
finish
