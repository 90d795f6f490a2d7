#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# The start's cost and its margin. The kernel's verifier follows a program
# down every path it cannot prune, refuses it past a million instructions,
# and its time is most of wprof's start. --stats prints the instructions it
# verified (the kernel's own count, from bpf_prog_info) and the time the load
# took. In the configurations that load the most code (--wakers,
# --check-deferred and --stats, which add to the switch programs, with each
# way to time run-queue waits, to walk resumed stacks and to attach, with -a
# and -p), no program may take more than half the kernel's limit: tp_switch
# once took 97% of it (WPROF_RUNQ=wakeup), with the user-stack walk's state
# on the BPF stack, where the verifier told its values apart at every step;
# the next small change, or another kernel, would have refused it.
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"
require_bpf

MOST=500000
sleep 300 &
idle=$!
n=0
for env in "" WPROF_RUNQ=wakeup WPROF_RESUME_WALK=task_work WPROF_RESUME_WALK=exit \
	WPROF_ATTACH=raw_tp; do
	for mode in "-a" "-p $idle"; do
		n=$((n + 1))
		[ -n "$env" ] && export "${env?}"
		# shellcheck disable=SC2086 # mode is an option and its value
		run_wprof "v$n" record $mode --wakers --check-deferred --stats -d 0.3 -o /dev/null
		[ -n "$env" ] && unset "${env%%=*}"
		check_wprof_ok "v$n"
		line=$(grep '^wprof: bpf load ' "$TMP/v$n.err")
		most=$(echo "$line" | sed -n 's/.* most \([0-9]*\) in \([a-z_]*\) .*/\1/p')
		prog=$(echo "$line" | sed -n 's/.* most [0-9]* in \([a-z_]*\) .*/\1/p')
		check_le "${env:-defaults} $mode: instructions verified in one program (${prog:-none})" \
			"$most" "$MOST"
		check "${env:-defaults} $mode: the load's time is reported" \
			grep -Eq '^wprof: bpf load +[0-9]+ ms, [0-9]+ instructions verified' "$TMP/v$n.err"
	done
done
kill "$idle"
finish
