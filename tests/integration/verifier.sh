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
# and -p), no program may take more than 30% of the kernel's limit (the most
# now: 140,597, tp_switch with -p): tp_switch once took 97% of it
# (WPROF_RUNQ=wakeup), with the user-stack walk's state on the BPF stack,
# where the verifier told its values apart at every step, and a lock's tries
# in a plain loop; the next small change, or another kernel, would have
# refused it. With both back (the rest as now), tp_switch takes up to
# 461,897, and this test fails.
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"
require_bpf

MOST=300000
sleep 300 &
idle=$!
LIB_PIDS+=("$idle")
envs="WPROF_RUNQ=wakeup WPROF_RESUME_WALK=exit WPROF_ATTACH=raw_tp"
# BPF task works: Linux 6.18 and later (resume_task_work.sh checks the refusal elsewhere)
bpftool btf dump file /sys/kernel/btf/vmlinux 2>/dev/null |
	grep -q "'bpf_task_work_schedule_resume_impl'" && envs="$envs WPROF_RESUME_WALK=task_work"
n=0
for env in "" $envs; do
	for mode in "-a" "-p $idle"; do
		n=$((n + 1))
		[ -n "$env" ] && export "${env?}"
		# shellcheck disable=SC2086 # mode is an option and its value
		run_wprof "v$n" record $mode --wakers --check-deferred --stats -d 0.3 -o /dev/null
		[ -n "$env" ] && unset "${env%%=*}"
		check_wprof_ok "v$n"
		# a program the kernel refused would have wprof fall back to lighter
		# ones (raw_tp, no start snapshot), and load
		[ "$env" = WPROF_ATTACH=raw_tp ] || check "${env:-defaults} $mode: the tp_btf programs loaded" \
			grep -q '^wprof: bpf tp_switch ' "$TMP/v$n.err"
		check "${env:-defaults} $mode: the start snapshot's programs loaded" \
			grep -q '^wprof: bpf snapshot_threads ' "$TMP/v$n.err"
		line=$(grep '^wprof: bpf load ' "$TMP/v$n.err")
		most=$(echo "$line" | sed -n 's/.* most \([0-9]*\) in \([a-z_]*\) .*/\1/p')
		prog=$(echo "$line" | sed -n 's/.* most [0-9]* in \([a-z_]*\) .*/\1/p')
		check_le "${env:-defaults} $mode: instructions verified in one program (${prog:-none})" \
			"$most" "$MOST"
		check_ge "${env:-defaults} $mode: the kernel counted them" "$most" 1
		check "${env:-defaults} $mode: the load's time is reported" \
			grep -Eq '^wprof: bpf load +[0-9]+ ms, [0-9]+ instructions verified' "$TMP/v$n.err"
	done
done
kill "$idle"
finish
