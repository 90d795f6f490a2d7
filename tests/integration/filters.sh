#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Selection options on a two-process recording (-p MIXED,SLEEPBURN -d 1):
# mixed (threads mixed, burn, nap, mix, piperd, pipewr, idle) and sleepburn
# (threads sleepburn, burner). Every check is exact: a filter keeps a
# thread or drops it.
# - --thread-name 'pipe*' (json): only piperd and pipewr, in the threads and
#   in the stacks; the stderr summary names only them.
# - --thread-name 'n?p' (folded): only nap's lines (fnmatch `?`).
# - --comm 'sleep*' (threads table): only sleepburn's process row and its
#   two threads; the summary names only that pid.
# - --comm 'mix*' --thread-name 'burn*' (folded): burn, not sleepburn's
#   burner (both filters apply).
# - --comm 'nomatch*': exit 0, no stacks.
# - --no-idle-threads (json): the threads blocked for the whole window
#   (idle, and the main threads in sigsuspend and pthread_join) are gone
#   from threads and stacks; the rest stay.
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"
require_bpf
require_workload mixed sleepburn

start_bg "$TMP/mixed.log" "$WORKLOADS/mixed"
mpid=$BG_PID
start_bg "$TMP/sleepburn.log" "$WORKLOADS/sleepburn"
spid=$BG_PID
wait_line "$TMP/mixed.log" '^ready$' 10 || fatal "mixed did not start"
wait_line "$TMP/sleepburn.log" '^ready [0-9]+$' 10 || fatal "sleepburn did not start"

# summary_comms NAME: the comms of the per-thread summary lines on stderr (the 5
# busiest of a process, idle ones left out; with --stats, 10, idle ones too).
summary_comms()
{
	sed -n 's/^wprof:   tid [0-9]* (\(.*\)): wall .*/\1/p' "$TMP/$1.err" | sort | tr '\n' ' '
}

run_wprof tn record --stats -p "$mpid,$spid" -d 1 -f json -o "$TMP/tn.json" --thread-name 'pipe*'
check_wprof_ok tn
check_json "$TMP/tn.json"
got=$(json_eval "$TMP/tn.json" 'sorted(t["comm"] for t in threads())' | tr '\n' ' ')
check "--thread-name 'pipe*': json threads are piperd, pipewr (got: $got)" test "$got" = "piperd pipewr "
got=$(json_eval "$TMP/tn.json" 'sorted(set(s["comm"] for s in j["stacks"]))' | tr '\n' ' ')
check "--thread-name 'pipe*': json stacks are piperd's and pipewr's (got: $got)" test "$got" = "piperd pipewr "
got=$(summary_comms tn)
check "--thread-name 'pipe*': summary names piperd, pipewr (got: $got)" test "$got" = "piperd pipewr "

run_wprof tq record -p "$mpid,$spid" -d 1 -o "$TMP/tq.folded" --thread-name 'n?p'
check_wprof_ok tq
check_folded "$TMP/tq.folded"
got=$(fold_field "$TMP/tq.folded" comm | tr '\n' ' ')
check "--thread-name 'n?p': folded comms are nap (got: $got)" test "$got" = "nap "

run_wprof cm record -p "$mpid,$spid" -d 1 -f threads -o "$TMP/cm.txt" --comm 'sleep*'
check_wprof_ok cm
sed 's/^/#   /' "$TMP/cm.txt"
got=$(awk 'NR > 1 { print $1 "/" $3 }' "$TMP/cm.txt" | sort | tr '\n' ' ')
want=$(printf '%s\n' "$spid/burner" "$spid/sleepburn" "$spid/sleepburn" | sort | tr '\n' ' ')
check "--comm 'sleep*': table rows are sleepburn's process and its 2 threads (got: $got)" \
	test "$got" = "$want"
got=$(sed -n 's/^wprof: pid \([0-9]*\) .*/\1/p' "$TMP/cm.err" | tr '\n' ' ')
check "--comm 'sleep*': summary names only pid $spid (got: $got)" test "$got" = "$spid "

run_wprof both record -p "$mpid,$spid" -d 1 -o "$TMP/both.folded" --comm 'mix*' --thread-name 'burn*'
check_wprof_ok both
check_folded "$TMP/both.folded"
got=$(fold_field "$TMP/both.folded" comm | tr '\n' ' ')
check "--comm 'mix*' --thread-name 'burn*': folded comms are burn (got: $got)" test "$got" = "burn "

run_wprof none record -p "$mpid,$spid" -d 1 -o "$TMP/none.folded" --comm 'nomatch*'
check_wprof_ok none
check "--comm 'nomatch*': no stacks ($(wc -l <"$TMP/none.folded") lines)" test ! -s "$TMP/none.folded"

run_wprof idle record --stats -p "$mpid,$spid" -d 1 -f json -o "$TMP/idle.json" --no-idle-threads
check_wprof_ok idle
check_json "$TMP/idle.json"
got=$(json_eval "$TMP/idle.json" 'sorted(t["comm"] for t in threads())' | tr '\n' ' ')
check "--no-idle-threads: json threads are the busy ones (got: $got)" \
	test "$got" = "burn burner mix nap piperd pipewr "
got=$(json_eval "$TMP/idle.json" 'sorted(set(s["comm"] for s in j["stacks"]))' | tr '\n' ' ')
check "--no-idle-threads: no stacks of idle threads (comms: $got)" \
	test "$got" = "burn burner mix nap piperd pipewr "
got=$(summary_comms idle)
check "--no-idle-threads: summary lines for the busy threads (got: $got)" \
	test "$got" = "burn burner mix nap piperd pipewr "
finish
