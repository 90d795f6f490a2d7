#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Which programs run at every context switch, how a switch is timed, and why.
# - Alone on sched_switch, wprof times a switch by the clock __schedule()
#   read as it started (the run queue's), with no program of its own for
#   that, except where the scheduler may have left that clock at a wakeup's
#   time (a switch from idle, ...): tests/workloads/shortruns (two threads
#   of many short runs and sleeps) has more than a quarter of its switches
#   timed by the run queue's clock (--stats counts those and the ones timed
#   by a clock read of wprof's), and none with WPROF_SWITCH_TIME=switch. A
#   user stack left to its thread's resume is walked by a BPF task work
#   under -a where the kernel has them (6.18+), else by a sched_exit_tp
#   program: --stats names the programs that make up the time per switch.
# - Another tool's BPF program on sched_switch (tests/workloads/tphook: a
#   tracepoint perf event as bpftrace and bcc attach them, then a raw
#   tracepoint link) runs before wprof's and may delay some switches more
#   than others. That does not move the run queue's clock: no stamp then.
#   Where wprof times switches by its own clock read (WPROF_RUNQ=wakeup:
#   no way to the run queue is used), it finds the program at the start,
#   says so, and times switches at the entry of __schedule() (the
#   sched_entry_tp program).
# - WPROF_SWITCH_TIME=entry|switch and WPROF_RESUME_WALK=exit|task_work
#   choose by hand (every switch then reads the clock); a value they do not
#   know is an error, exit 2.
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"
require_bpf
require_workload tphook
require_workload shortruns

if ! grep -qw tracefs /proc/mounts; then
	mount -t tracefs nodev /sys/kernel/tracing ||
		fatal "tracefs is not mounted and cannot be (the perf tracepoint needs its ids)"
fi
resume="tp_sched_exit \+ tp_switch"
if bpftool btf dump file /sys/kernel/btf/vmlinux 2>/dev/null |
	grep -q "'bpf_task_work_schedule_resume_impl'"; then
	resume="tp_switch \+ resume task work"
fi
# absent ERE FILE: no line of FILE matches ERE
absent()
{
	! grep -Eq "$1" "$2"
}

# record NAME [ENV=V...]: a short -a recording with --stats (DUR seconds: 0.3)
record()
{
	local name=$1

	shift
	env "$@" "$WPROF" record -a -d "${DUR:-0.3}" --stats -o "$TMP/$name.folded" \
		>"$TMP/$name.out" 2>"$TMP/$name.err"
	RC=$?
	check "$name: wprof exits 0 (got $RC)" test "$RC" -eq 0
}

record alone
check "alone: no stamp, no word on the timing" \
	absent 'switches are timed|tp_sched_entry' "$TMP/alone.err"
check "alone: the time per switch is $resume's" \
	grep -Eq "^wprof: bpf per context switch .* \($resume, over [0-9]+ switches\)" "$TMP/alone.err"

# timing NAME: $rq and $read, the switches of NAME's recording timed by the
# clock __schedule() read and by a clock read of wprof's
timing()
{
	read -r rq read < <(sed -n 's/^wprof: switches timed by the clock __schedule() read \([0-9]*\), by a clock read \([0-9]*\);.*$/\1 \2/p' "$TMP/$1.err")
	rq=${rq:-0} read=${read:-0}
}

start_bg "$TMP/shortruns.log" "$WORKLOADS/shortruns" -n 2
busy=$BG_PID
wait_line "$TMP/shortruns.log" '^ready$' 10 ||
	fatal "shortruns did not start: $(cat "$TMP/shortruns.log")"
DUR=1 record busy
timing busy
log "busy: $rq switches timed by the run queue's clock, $read by a clock read"
check "busy: the switches are counted ($((rq + read)))" test $((rq + read)) -ge 100
check "busy: over a quarter are timed by the run queue's clock ($rq, $read by a read)" \
	test $((rq * 4)) -gt $((rq + read))
DUR=1 record busy-switch WPROF_SWITCH_TIME=switch
timing busy-switch
check "WPROF_SWITCH_TIME=switch: every switch by a clock read ($read, $rq by the run queue's)" \
	test "$rq" -eq 0 -a "$read" -ge 100
kill "$busy"
wait "$busy" 2>/dev/null

for how in perf raw; do
	start_bg "$TMP/hook-$how.log" "$WORKLOADS/tphook" "$how"
	hook=$BG_PID
	wait_line "$TMP/hook-$how.log" '^ready$' 10 || fatal "tphook $how did not attach: $(cat "$TMP/hook-$how.log")"
	record "hook-$how"
	check "hook-$how: the run queue's clock, no stamp" \
		absent 'switches are timed|tp_sched_entry' "$TMP/hook-$how.err"
	record "hook-$how-wakeup" WPROF_RUNQ=wakeup
	check "hook-$how-wakeup: says another program runs on sched_switch first, and names it" \
		grep -q "^wprof: switches are timed where __schedule() starts (1 other BPF program on sched_switch runs before wprof's: tphook" \
		"$TMP/hook-$how-wakeup.err"
	check "hook-$how-wakeup: the sched_entry_tp program is part of the time per switch" \
		grep -Eq '^wprof: bpf per context switch .* \(tp_sched_entry \+' "$TMP/hook-$how-wakeup.err"
	if [ "$how" = raw ]; then
		record forced-switch WPROF_SWITCH_TIME=switch
		check "WPROF_SWITCH_TIME=switch: no stamp though another program is there" \
			absent 'switches are timed|tp_sched_entry' "$TMP/forced-switch.err"
	fi
	kill "$hook"
	wait "$hook" 2>/dev/null
done

record forced-entry WPROF_SWITCH_TIME=entry
check "WPROF_SWITCH_TIME=entry: the stamp, and why" \
	grep -q '^wprof: switches are timed where __schedule() starts (WPROF_SWITCH_TIME=entry)' \
	"$TMP/forced-entry.err"
record forced-exit WPROF_RESUME_WALK=exit
check "WPROF_RESUME_WALK=exit: sched_exit_tp walks at resume" \
	grep -Eq '^wprof: bpf per context switch .* \(tp_sched_exit \+ tp_switch, over' \
	"$TMP/forced-exit.err"
# (WPROF_RESUME_WALK=task_work: resume_task_work.sh)

for var in WPROF_SWITCH_TIME WPROF_RESUME_WALK; do
	env "$var=sometimes" "$WPROF" record -a -d 0.3 -o /dev/null >"$TMP/bad.out" 2>"$TMP/bad.err"
	RC=$?
	check "$var=sometimes: exit 2, one line (got $RC: $(cat "$TMP/bad.err"))" \
		test "$RC" -eq 2 -a "$(wc -l <"$TMP/bad.err")" -eq 1
	check "$var=sometimes: the line names the variable" grep -q "^wprof: $var=" "$TMP/bad.err"
done
finish
