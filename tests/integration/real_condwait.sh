#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Whose callers a stack shows: tests/workloads/condwait runs four threads
# under one worker_loop(); two ("job0", "job1") wait in
# pthread_cond_timedwait() called from wait_for_job(), two ("flush0",
# "flush1") in the same libc function called from wait_for_flush(), all for
# the whole run; the main thread waits in pthread_join(). The workload
# prints which tid waits under which caller. libc has no frame pointers, so
# an unwinder that walks frame pointers from the syscall, or that reuses
# the callers found for one thread blocked at an address for the next,
# shows a thread under the wrong caller (or under none).
#
# Both builds, side by side: the workload with frame pointers (condwait)
# and without (condwait-nofp, -O2 -fomit-frame-pointer). For each:
# - a recording as the machine is (libc's debug files used if installed):
#   100% of each worker's off-CPU sleep is under its own caller
#   (wait_for_job or wait_for_flush, below worker_loop), none under the
#   other's;
# - a recording with /usr/lib/debug hidden (as on a machine without
#   libc6-dbg): the same, and every thread's stack equals gdb's backtrace
#   frame for frame (stackcmp.py), all five threads compared.
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"
# shellcheck source=tests/lib_real.sh
. "$(dirname "$0")/../lib_real.sh"
require_bpf
rs_require_gdb
require_workload condwait condwait-nofp

# own_callers JSON REPORT WHAT: the caller checks for one recording.
own_callers()
{
	local json=$1 report=$2 what=$3 role tid all own other mine theirs

	# per worker: "role tid off-CPU-us us-under-own-caller us-under-the-other"
	"$RS_PYTHON" -c "$JSON_PY"'
callers = {"job": ("wait_for_job", "wait_for_flush"), "flush": ("wait_for_flush", "wait_for_job")}
def under(s, caller):
	f = [x for x in s["frames"] if not x.endswith("_[k]")]
	return "worker_loop" in f and caller in f and f.index("worker_loop") < f.index(caller)
for line in open(sys.argv[2]):
	role, tid = line.split()
	ss = stacks("off-cpu:.*", tid=int(tid))
	mine, theirs = callers[role]
	print(role, tid, total(ss), total(s for s in ss if under(s, mine)),
	      total(s for s in ss if theirs in s["frames"]))' "$json" "$report" >"$json.callers" ||
		{ not_ok "$what: cannot read $json"; return; }
	while read -r role tid all own other; do
		mine=wait_for_$role
		theirs=wait_for_$([ "$role" = job ] && echo flush || echo job)
		log "$what: $role tid $tid: off-CPU $all us, $own us under worker_loop;$mine, $other us under $theirs"
		check_ge "$what: $role thread $tid: share of its off-CPU time under worker_loop;$mine (%)" \
			"$(calc "100 * $own / ($all ? $all : 1)")" 100
		check "$what: $role thread $tid: no time under $theirs ($other us)" test "$other" -eq 0
	done <"$json.callers"
}

# both builds at once: one recording of each kind for the two
pids="" args=()
for build in condwait condwait-nofp; do
	start_bg "$TMP/$build.log" "$WORKLOADS/$build" -n 60
	pid=$BG_PID
	wait_line "$TMP/$build.log" '^ready [0-9]+$' 10 || fatal "$build did not start"
	grep -E '^(job|flush) ' "$TMP/$build.log" >"$TMP/$build.roles"
	log "$build: pid $pid, $(tr '\n' ' ' <"$TMP/$build.roles")"
	pids+=${pids:+,}$pid
	args+=(--label "$pid=$build" --need "pid=$pid")
done
rs_wait_quiet "$pids" '.*' 300 5 || log "the workloads never went quiet"

run_wprof asis record -p "$pids" -d "$RS_SECONDS" -f json -o "$TMP/asis.json"
check_wprof_ok asis
for build in condwait condwait-nofp; do
	own_callers "$TMP/asis.json" "$TMP/$build.roles" "$build"
done

rs_check_blocked "$pids" "${args[@]}"
for build in condwait condwait-nofp; do
	own_callers "$TMP/$RS_LAST.json" "$TMP/$build.roles" "$build, no /usr/lib/debug"
done
finish
