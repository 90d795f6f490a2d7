#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# --group of `wprof record` and `wprof report`, and report of folded text,
# on one recording of `convoy -m regressed -n 8`: 8 workers named worker-0
# .. worker-7 that queue on one lock in store_commit_locked (the
# workload's own code, tests/workloads/convoy.c):
# - record --group none: the svg has one store_commit_locked tower per
#   kind of time its lines have (the lock's wait, the persist's sleep, the
#   waits for a CPU), the folded text no worker's name; the .wprof written with it
#   keeps every thread (report --group thread names the 8 workers);
# - report --group pool: the workers' lines are worker-*'s, none of
#   worker-N; --group process: the process's name in their place;
# - every grouping weighs the same in all, to the us (nothing lost or
#   counted twice), and json stays a list of each thread's stacks;
# - report of folded text, hand-edited, draws it as an svg of the same
#   total; folded text with -f json, --from or a bad line: one error line,
#   exit 1.
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"
require_bpf
require_workload convoy

sum() { awk '{ s += $NF } END { print s + 0 }' "$1"; }
# svg_total FILE: the flame graph's total, from its data attributes (well-formed XML)
svg_total()
{
	"$PYTHON" -c 'import sys, xml.dom.minidom as m
print(m.parse(sys.argv[1]).documentElement.getAttribute("data-total-us"))' "$1"
}

run_wprof rec record --group none -o "$TMP/x.wprof" -o "$TMP/x.svg" -o "$TMP/x.folded" -- \
	"$WORKLOADS/convoy" -m regressed -n 8
check_wprof_ok rec
grep -q "^mode regressed workers 8 " "$TMP/rec.out" || fatal "convoy did not run: $(cat "$TMP/rec.out")"
towers=$(grep -o 'data-n="store_commit_locked"' "$TMP/x.svg" | wc -l)
kinds=$(grep 'worker_main;store_commit_locked' "$TMP/x.folded" | cut -d';' -f1 | sort -u | wc -l)
check "record --group none: one store_commit_locked tower per kind ($towers, $kinds kinds)" \
	test "$towers" -le "$kinds" -a "$towers" -ge 1 # a kind of a few us may be too narrow to draw
check "record --group none: no worker's name in the folded text" \
	test "$(grep -c 'worker-' "$TMP/x.folded")" -eq 0
total=$(sum "$TMP/x.folded")
check "the recording weighs something ($total us)" test "$total" -gt 0

for g in thread pool process none; do
	run_wprof rep-$g report -q --group $g -o "$TMP/$g.folded" -o "$TMP/$g.svg" \
		-o "$TMP/$g.json" "$TMP/x.wprof"
	check "report --group $g: exit 0 (got $RC)" test "$RC" -eq 0
	check "report --group $g: the same total as record's ($(sum "$TMP/$g.folded") us)" \
		test "$(sum "$TMP/$g.folded")" -eq "$total"
	n=$("$PYTHON" -c 'import json, sys
d = json.load(open(sys.argv[1]))
print(len({s["tid"] for s in d["stacks"] if "worker_main" in s["frames"]}))' \
		"$TMP/$g.json" 2>&1)
	check "report --group $g: json keeps each worker's stacks, with its tid ($n tids)" \
		test "$n" = 8
done
named=$(grep -oE ';worker-[0-9]+;' "$TMP/thread.folded" | sort -u | wc -l)
check "--group thread: the 8 workers by name ($named)" test "$named" -eq 8
check "--group pool: the workers are worker-*, none worker-N" \
	test "$(grep -c ';worker-\*;' "$TMP/pool.folded")" -gt 0 -a \
	"$(grep -cE ';worker-[0-9]+;' "$TMP/pool.folded")" -eq 0
check "--group process: the process's name in the workers' place" \
	test "$(grep -cE ';convoy;([^;]*;)*worker_main;' "$TMP/process.folded")" -gt 0 -a \
	"$(grep -c 'worker-' "$TMP/process.folded")" -eq 0
check "--group none: report writes what record wrote" cmp -s <(sort "$TMP/none.folded") \
	<(sort "$TMP/x.folded")

# --- folded text, edited by hand, drawn ---
grep -v 'store_commit_locked' "$TMP/x.folded" >"$TMP/edited.folded"
echo 'on-cpu;hand;made 1000' >>"$TMP/edited.folded"
run_wprof edit report -o "$TMP/edited.svg" "$TMP/edited.folded"
check "report of folded text: exit 0 (got $RC)" test "$RC" -eq 0
if out=$(svg_total "$TMP/edited.svg" 2>&1); then
	check "its svg's total is the folded text's ($out vs $(sum "$TMP/edited.folded"))" \
		test "$out" = "$(sum "$TMP/edited.folded")"
else
	not_ok "edited.svg is not well-formed: $out"
fi
check "the lock's frames edited out are not drawn, the one made by hand is" \
	test "$(grep -c 'data-n="store_commit_locked"' "$TMP/edited.svg")" -eq 0 -a \
	"$(grep -c 'data-n="made"' "$TMP/edited.svg")" -eq 1
printf 'on-cpu;a;b 10\nnot folded\n' >"$TMP/bad.folded"
for args in "-f json $TMP/edited.folded" "--from 1 $TMP/edited.folded" "-o $TMP/b.svg $TMP/bad.folded"; do
	# shellcheck disable=SC2086 # the words are arguments
	"$WPROF" report $args >/dev/null 2>"$TMP/err"
	RC=$?
	check "report $args: exit 1 (got $RC), one line ($(head -1 "$TMP/err"))" \
		test "$RC" -eq 1 -a "$(wc -l <"$TMP/err")" -eq 1
done
finish
