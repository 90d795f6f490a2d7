#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# `--format threads`: the per-thread table. Two processes are recorded with
# -p PID,PID -d 2: mixed, renamed "mixed proc" (a space, which the table
# must turn into `_`), with 7 threads, and sleepburn with 2.
#
# Checks, all exact (the table and the stderr summary of the same run print
# the same numbers; only rounding is allowed where rows are summed):
# - header: PID TID COMM WALL_S ON_CPU% STEAL% RUNQ% THROT% SLEEP% DISK% BLOCKS MAX_BLOCK_MS
#   LONGEST_AT_S RAN_INSTEAD; every row has 14 whitespace-separated fields of the right type, the
#   file ends with a newline and has no blank line.
# - one process row (TID `-`) per target, each followed by exactly its
#   threads (same PID), every thread of both workloads listed once, by
#   name; COMM "mixed_proc" for mixed's process row and main thread.
# - processes by WALL_S descending, threads within by WALL_S descending.
# - each row's six percentages sum to 100 within 0.3 (six values
#   rounded to 0.1).
# - a process row's WALL_S is the sum of its threads' (within 0.001 per
#   thread: each is rounded to ms), BLOCKS the sum, MAX_BLOCK_MS the max.
# - each thread row matches its stderr summary line (--stats: every thread
#   listed, idle ones too; wall, on-CPU,
#   steal and throttled (0 where the summary leaves them out), runqueue,
#   sleep and disk %,
#   blocks).
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"
require_bpf
require_workload mixed sleepburn

start_bg "$TMP/mixed.log" "$WORKLOADS/mixed" -N "mixed proc"
mpid=$BG_PID
start_bg "$TMP/sleepburn.log" "$WORKLOADS/sleepburn"
spid=$BG_PID
wait_line "$TMP/mixed.log" '^ready$' 10 || fatal "mixed did not start"
wait_line "$TMP/sleepburn.log" '^ready [0-9]+$' 10 || fatal "sleepburn did not start"

run_wprof rec record --stats -p "$mpid,$spid" -d 2 -f threads -o "$TMP/table.txt"
check_wprof_ok rec
[ -s "$TMP/table.txt" ] || fatal "no output"
log "table:"
sed 's/^/#   /' "$TMP/table.txt"
T=$TMP/table.txt

check "header is PID TID COMM WALL_S ON_CPU% STEAL% RUNQ% THROT% SLEEP% DISK% BLOCKS MAX_BLOCK_MS LONGEST_AT_S RAN_INSTEAD" \
	test "$(head -1 "$T" | tr -s ' \t' ' ' | sed 's/ $//')" = \
	"PID TID COMM WALL_S ON_CPU% STEAL% RUNQ% THROT% SLEEP% DISK% BLOCKS MAX_BLOCK_MS LONGEST_AT_S RAN_INSTEAD"
check "the table ends with a newline" test "$(tail -c 1 "$T" | od -An -c | tr -d ' ')" = '\n'
bad=$(awk 'NR > 1 && !(NF == 14 && $1 ~ /^[0-9]+$/ && $2 ~ /^([0-9]+|-)$/ && $4 ~ /^[0-9]+\.[0-9]+$/ &&
	$5 ~ /^[0-9]+\.[0-9]$/ && $6 ~ /^[0-9]+\.[0-9]$/ && $7 ~ /^[0-9]+\.[0-9]$/ &&
	$8 ~ /^[0-9]+\.[0-9]$/ && $9 ~ /^[0-9]+\.[0-9]$/ && $10 ~ /^[0-9]+\.[0-9]$/ &&
	$11 ~ /^[0-9]+$/ && $12 ~ /^[0-9]+\.[0-9]+$/ && $13 ~ /^([0-9]+\.[0-9]+|-)$/ &&
	$14 ~ /^(-|[^,]+\/[0-9]+:[0-9]+%(,[^,]+\/[0-9]+:[0-9]+%)*)$/ && ($2 != "-" || $14 == "-")) { print NR": "$0 }' "$T")
check "every row has 14 fields of the right types (bad: ${bad:-none})" test -z "$bad"
check "no blank lines" sh -c "! grep -q '^[[:space:]]*$' '$T'"

# Structure: a process row, then its threads.
bad=$(awk 'NR == 1 { next }
	$2 == "-" { if (seen[$1]++) print "process " $1 " twice"; pid = $1; next }
	$1 != pid { print "thread " $2 " under process " pid " has pid " $1 }
	{ if (tid[$2]++) print "thread " $2 " twice" }' "$T")
check "each process row is followed by its own threads, each listed once (bad: ${bad:-none})" test -z "$bad"
procs=$(awk '$2 == "-" { print $1 }' "$T" | sort | tr '\n' ' ')
check "one process row per target (got: $procs)" \
	test "$procs" = "$(printf '%s\n' "$mpid" "$spid" | sort | tr '\n' ' ')"
want=$(awk '$1 != "ready" && $1 != "nap_max_us" { print $1 }' "$TMP/mixed.log" | sort | tr '\n' ' ')
got=$(awk -v p="$mpid" '$1 == p && $2 != "-" && $2 != p { print $3 }' "$T" | sort | tr '\n' ' ')
check "mixed's worker threads are listed (got: $got; want: $want)" test "$got" = "$want"
got=$(awk -v p="$spid" '$1 == p && $2 != "-" { print $3 }' "$T" | sort | tr '\n' ' ')
check "sleepburn's threads are listed (got: $got)" test "$got" = "burner sleepburn "
got=$(awk -v p="$mpid" '$1 == p && ($2 == "-" || $2 == p) { print $3 }' "$T" | sort -u | tr '\n' ' ')
check "mixed's process row and main thread show COMM mixed_proc (got: $got)" test "$got" = "mixed_proc "

bad=$(awk 'NR == 1 { next }
	$2 == "-" { if (pw != "" && $4 + 0 > pw + 0) print "process " $1 " after a shorter one"; pw = $4; tw = ""; next }
	{ if (tw != "" && $4 + 0 > tw + 0) print "thread " $2 " after a shorter one"; tw = $4 }' "$T")
check "processes and threads sorted by WALL_S descending (bad: ${bad:-none})" test -z "$bad"
bad=$(awk 'NR > 1 { s = $5 + $6 + $7 + $8 + $9 + $10; if (s < 99.7 || s > 100.3) print $1 "/" $2 ": " s }' "$T")
check "each row's percentages sum to 100 +/- 0.3 (bad: ${bad:-none})" test -z "$bad"

bad=$(awk 'NR == 1 { next }
	function flush() {
		if (pid == "") return
		if (w - pw > 0.001 * n + 0.0005 || pw - w > 0.001 * n + 0.0005) print pid ": wall " pw " vs " w
		if (b != pb) print pid ": blocks " pb " vs " b
		if (m != pm) print pid ": max block " pm " vs " m
	}
	$2 == "-" { flush(); pid = $1; pw = $4; pb = $11; pm = $12; w = 0; b = 0; m = 0; n = 0; next }
	{ w += $4; b += $11; n++; if ($12 + 0 > m + 0) m = $12 }
	END { flush() }' "$T")
check "process rows sum their threads: wall, blocks, max block (bad: ${bad:-none})" test -z "$bad"

# The stderr summary of the same run: `wprof:   tid N (comm): wall X.XXX s,
# on-CPU a%[, steal s%], runqueue b%, sleep c%, disk d%, K blocks`.
bad=$(awk 'FNR == NR {
		if (match($0, /^wprof:   tid [0-9]+ /)) {
			split($0, f, /[ ,%]+/)
			t = f[3]
			line = $0
			sub(/.*\): /, "", line)
			n = split(line, kv, /, /)
			delete v
			v["steal"] = "0.0"
			v["throttled"] = "0.0"
			for (i = 1; i <= n; i++) {
				split(kv[i], p, / /) # "on-CPU 3.1%", "12 blocks"
				if (p[1] ~ /^[0-9]/)
					v[p[2]] = p[1]
				else
					v[p[1]] = p[2]
			}
			gsub(/%/, "", v["on-CPU"]); gsub(/%/, "", v["steal"]); gsub(/%/, "", v["throttled"])
			gsub(/%/, "", v["runqueue"]); gsub(/%/, "", v["sleep"]); gsub(/%/, "", v["disk"])
			sum[t] = sprintf("%s %s %s %s %s %s %s %s", v["wall"], v["on-CPU"], v["steal"],
				v["runqueue"], v["throttled"], v["sleep"], v["disk"], v["blocks"])
		}
		next
	}
	FNR > 1 && $2 != "-" {
		want = sprintf("%s %s %s %s %s %s %s %s", $4, $5, $6, $7, $8, $9, $10, $11)
		got = sum[$2]
		if (!($2 in sum)) print $2 ": no summary line"
		else if (got != want) print $2 ": table " want " summary " got
	}' "$TMP/rec.err" "$T")
check "each thread row matches its stderr summary line (bad: ${bad:-none})" test -z "$bad"
finish
