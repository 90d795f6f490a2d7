#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# `wprof diff --fail-if-grown` as a CI gate, on saved recordings of
# `-- convoy`, a service of N workers (worker-0..worker-N-1) that serves a
# fixed number of requests and exits (tests/workloads/convoy.c). What each
# run was is the workload's own word (it prints its mode), not wprof's:
# - regressed (a 1 ms persist under one global mutex: a lock convoy) after
#   good fails the gate for N = 1, 8 and 32, naming the lock's caller
#   (store_commit_locked), however few or many threads queued on it;
# - the fix (regressed as BEFORE, good as AFTER) passes;
# - the same build recorded twice passes, 10 pairs of 10;
# - one worker of four whose sleep doubles fails it, naming where it sleeps;
# - grouped by none, the lock's code path is one row of the table and one
#   tower of the diff svg; by thread name, one per worker;
# - two -d windows compare time per second of window, folded text and a
#   command's run against a window compare shares;
# - -o x.png (record, report, diff) is refused in one line naming the formats.
# The gate's limit is 10% of BEFORE's whole: the regressions here grow by
# 15% (one worker's sleep) to 500% (32 workers' convoy); two runs of one
# build differ by some 5% at most on a busy 2-core machine (sampled on-CPU
# stacks, threads that ran without a sample).
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"
require_bpf
require_workload convoy
LIMIT=10
PAIRS=10

# rec NAME CONVOY_ARGS...: a saved recording of one run, the run's own line in NAME.run
rec()
{
	local name=$1

	shift
	timeout --foreground -k 5 120 "$WPROF" record -o "$TMP/$name.wprof" -- \
		"$WORKLOADS/convoy" "$@" >"$TMP/$name.run" 2>"$TMP/$name.err" ||
		fatal "wprof record of convoy $* failed: $(tail -3 "$TMP/$name.err")"
	[ -s "$TMP/$name.wprof" ] || fatal "no $name.wprof written"
}

# gate NAME BEFORE AFTER [OPTIONS...]: the gate's exit code in RC, its stderr in NAME.err
gate()
{
	local name=$1 before=$2 after=$3

	shift 3
	"$WPROF" diff --fail-if-grown "$LIMIT" "$@" -o "$TMP/$name.txt" \
		"$TMP/$before.wprof" "$TMP/$after.wprof" 2>"$TMP/$name.err"
	RC=$?
	log "diff $before $after: exit $RC"
	grep -E 'grew:|gate passed|command ran' "$TMP/$name.err" | cut -c1-200 | sed 's/^/#   /' | head -8
}

# --- a convoy of any width is caught, its fix is not ---
for n in 1 8 32; do
	rec good-$n -m good -n "$n"
	rec bad-$n -m regressed -n "$n"
	check "convoy -n $n ran the good build, then the regressed one" \
		grep -q "^mode regressed workers $n " "$TMP/bad-$n.run"
	gate reg-$n good-$n bad-$n
	check "N=$n: the regression fails the gate (exit $RC)" test "$RC" -eq 1
	check "N=$n: the failure names the lock's path (store_commit_locked)" \
		grep -q "^wprof: grew: .*store_commit_locked" "$TMP/reg-$n.err"
	check "N=$n: the failure says the kind of time and before -> after" \
		grep -qE "^wprof: grew: off-CPU sleep in .*: [0-9.]+ s -> [0-9.]+ s \(\+[0-9.]+% of BEFORE's whole" \
		"$TMP/reg-$n.err"
	gate fix-$n bad-$n good-$n
	check "N=$n: the fix (regressed as BEFORE, good as AFTER) passes (exit $RC)" test "$RC" -eq 0
done

# --- the same build twice ---
passed=0
prev=good-8
for i in $(seq 1 "$PAIRS"); do
	rec same-$i -m good -n 8
	gate same-$i "$prev" same-$i
	[ "$RC" -eq 0 ] && passed=$((passed + 1))
	[ "$RC" -eq 0 ] || log "pair $i failed: $(grep 'grew:' "$TMP/same-$i.err" | head -2)"
	prev=same-$i
done
check "the same build recorded twice passes $passed of $PAIRS pairs" test "$passed" -eq "$PAIRS"

# --- one thread of four sleeps twice as long ---
rec four -m good -n 4 -c 50 -s 2000 -r 400
rec slow -m slowone -n 4 -c 50 -s 2000 -r 400
check "convoy ran with one slow worker" grep -q "^mode slowone workers 4 " "$TMP/slow.run"
gate one good-8 good-8 # a recording against itself: nothing grew
check "a recording against itself passes (exit $RC)" test "$RC" -eq 0
gate one four slow
check "one worker of four sleeping twice as long fails the gate (exit $RC)" test "$RC" -eq 1
check "and it names where the workers sleep (wait_io)" \
	grep -q "^wprof: grew: off-CPU sleep .*wait_io" "$TMP/one.err"

# --- -d windows compare time per second of window; folded text, shares ---
for w in w1 w2; do
	timeout --foreground -k 5 120 "$WPROF" record -d 0.5 -o "$TMP/$w.wprof" -o "$TMP/$w.folded" -- \
		"$WORKLOADS/convoy" -m good -n 2 -r 100000 >/dev/null 2>"$TMP/$w.err" ||
		fatal "wprof record -d 0.5 failed: $(tail -2 "$TMP/$w.err")"
done
gate win w1 w2
check "two -d windows: compared per second of window" \
	grep -q "changed time per second of window" "$TMP/win.err"
"$WPROF" diff "$TMP/w1.folded" "$TMP/w2.folded" >/dev/null 2>"$TMP/fold.err"
check "two folded files: compared by share" grep -q "changed share" "$TMP/fold.err"
"$WPROF" diff "$TMP/good-1.wprof" "$TMP/w1.wprof" >/dev/null 2>"$TMP/mixed.err"
check "a command's run against a window: by share" grep -q "changed share" "$TMP/mixed.err"

# --- grouped by none: one row, one tower per code path ---
lock_path='worker_main;store_commit_locked;pthread_mutex_lock'
for g in none thread; do
	"$WPROF" diff --group $g -f folded -o "$TMP/g-$g.folded" "$TMP/good-8.wprof" \
		"$TMP/bad-8.wprof" 2>/dev/null || fatal "diff --group $g -f folded failed"
	"$WPROF" diff --group $g --top 0 -o "$TMP/g-$g.txt" "$TMP/good-8.wprof" \
		"$TMP/bad-8.wprof" 2>/dev/null || fatal "diff --group $g failed"
	"$WPROF" diff --group $g -o "$TMP/g-$g.svg" "$TMP/good-8.wprof" \
		"$TMP/bad-8.wprof" 2>/dev/null || fatal "diff --group $g -o svg failed"
done
# the code paths: the stacks of the thread-named diff, their name frame left out
paths=$(awk '{ print $1 }' "$TMP/g-thread.folded" | cut -d';' -f1,3- | sort -u | wc -l)
rows=$(wc -l <"$TMP/g-none.folded")
check "--group none: one line per code path ($rows lines, $paths paths)" test "$rows" -eq "$paths"
check "--group none: no thread's name in the table" \
	test "$(grep -c 'worker-' "$TMP/g-none.txt")" -eq 0
named=$(grep -c "$lock_path" "$TMP/g-thread.txt")
check "--group thread: the lock's paths in one row per worker ($named rows)" test "$named" -ge 8
# one tower per kind of time the lock's caller has in the folded lines (its
# kinds under none; its kinds and workers by name)
kinds=$(grep 'worker_main;store_commit_locked' "$TMP/g-none.folded" | cut -d';' -f1 | sort -u | wc -l)
towers=$(grep -o 'data-n="store_commit_locked"' "$TMP/g-none.svg" | wc -l)
# (a kind of a few us may be too narrow to draw)
check "--group none: at most one store_commit_locked tower per kind of time in the svg ($towers, $kinds kinds)" \
	test "$towers" -le "$kinds" -a "$towers" -ge 1
pairs=$(grep 'worker_main;store_commit_locked' "$TMP/g-thread.folded" | cut -d';' -f1,2 | sort -u | wc -l)
towers8=$(grep -o 'data-n="store_commit_locked"' "$TMP/g-thread.svg" | wc -l)
check "--group thread: a store_commit_locked tower per worker and kind ($towers8, $pairs pairs)" \
	test "$towers8" -le "$pairs" -a "$towers8" -ge 8

# --- an -o name that names no format is refused, in one line ---
for cmd in "record -o $TMP/x.png -- true" "report -o $TMP/x.png $TMP/good-1.wprof" \
	"diff -o $TMP/x.png $TMP/good-1.wprof $TMP/bad-1.wprof"; do
	# shellcheck disable=SC2086 # the words of cmd are arguments
	"$WPROF" $cmd >/dev/null 2>"$TMP/png.err"
	RC=$?
	check "wprof $cmd: exit non-zero (got $RC), one line naming the formats" \
		test "$RC" -ne 0 -a "$(wc -l <"$TMP/png.err")" -eq 1 -a ! -e "$TMP/x.png"
	grep -q "names no format; end the name in .svg" "$TMP/png.err" ||
		not_ok "its line names the formats: $(cat "$TMP/png.err")"
done
finish
