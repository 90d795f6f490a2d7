#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# -p and -t take ids as the tools that find them print them. Two copies of
# sleepburn run under a name no other process has, so `pidof NAME` prints
# exactly their two pids, space-separated; each recording (-f json, 1 s)
# must report exactly the processes or threads it was given:
# - -p "$(pidof NAME)"                    spaces (pidof)
# - -p "$(pgrep -x NAME)"                 newlines (pgrep)
# - -p "$(pgrep -d, -x NAME)"             commas (pgrep -d,)
# - -p "A, B " and -p " A,B"              a comma with a blank, blanks at the ends
# - -t "$(ls /proc/A/task)"               every thread of A, one a line
# - -t "T1 T2"                            the two burners, one of each process
# The mistakes (an empty element anywhere) are in errors.sh.
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"
require_bpf
require_workload sleepburn

# 15 characters at most: pidof and pgrep -x compare the kernel's comm
name=wpl$$
name=${name:0:15}
cp "$WORKLOADS/sleepburn" "$TMP/$name"
start_bg "$TMP/a.log" "$TMP/$name" -N burna
a=$BG_PID
start_bg "$TMP/b.log" "$TMP/$name" -N burnb
b=$BG_PID
wait_line "$TMP/a.log" '^ready [0-9]+$' 10 || fatal "sleepburn a did not start"
wait_line "$TMP/b.log" '^ready [0-9]+$' 10 || fatal "sleepburn b did not start"
ta=$(awk '/^ready/ { print $2 }' "$TMP/a.log")
tb=$(awk '/^ready/ { print $2 }' "$TMP/b.log")
want_pids=$(printf '%s\n' "$a" "$b" | sort -n | tr '\n' ' ')
log "pids $want_pids(pidof $name: '$(pidof "$name")'), burner tids $ta $tb"

# record NAME WANT_ERE WHAT ARGS...: a 1 s json recording with ARGS, whose
# "pid" (processes) or "tid" (threads) values, sorted, must be WANT.
record()
{
	local n=$1 want=$2 what=$3 got

	shift 3
	run_wprof "$n" record -d 1 -f json -o "$TMP/$n.json" "$@"
	check "$n: wprof exits 0 (got $RC)" test "$RC" -eq 0
	[ -s "$TMP/$n.json" ] || { not_ok "$n: no output"; return; }
	if [ "$what" = pid ]; then
		got=$(json_eval "$TMP/$n.json" 'sorted(p["pid"] for p in j["processes"])')
	else
		got=$(json_eval "$TMP/$n.json" 'sorted(t["tid"] for t in threads())')
	fi
	got=$(printf '%s\n' "$got" | tr '\n' ' ')
	check "$n: ${what}s recorded are $want(got: $got)" test "$got" = "$want"
}

record pidof "$want_pids" pid -p "$(pidof "$name")"
record pgrep "$want_pids" pid -p "$(pgrep -x "$name")"
record pgrep_comma "$want_pids" pid -p "$(pgrep -d, -x "$name")"
record comma_blank "$want_pids" pid -p "$a, $b "
record blank_comma "$want_pids" pid -p " $a ,$b"
want_tids=$(ls "/proc/$a/task" | sort -n | tr '\n' ' ')
record tasks "$want_tids" tid -t "$(ls "/proc/$a/task")"
record tids "$(printf '%s\n' "$ta" "$tb" | sort -n | tr '\n' ' ')" tid -t "$ta $tb"
finish
