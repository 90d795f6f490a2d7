#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Steal: time the hypervisor ran something else while a thread was current
# on a vCPU. A spinner pinned to the last CPU, real-time (SCHED_FIFO) so that
# it has that CPU nearly to itself on a busy machine too (the kernel keeps 5%
# for the rest), is recorded 10 s (wprof and this script on CPU 0). Ground truth, read when wprof says its
# window is open and 10 s later, scaled to the window:
# - the kernel's schedstat of the spinner: its run time leaves steal out, and
#   it never sleeps, so the window less its run and run-queue wait is its
#   steal;
# - /proc/stat's steal column of that CPU, in 10 ms ticks: all the steal the
#   CPU had, nearly all while the spinner ran (its share: the part of the
#   window it was current, as the others that ran there have theirs).
# Checks:
# - on-CPU + steal + runqueue = the window (it never blocks), to 1 ms;
# - on-CPU time = schedstat's run time, within 20 ms (steal, kept out, is
#   what used to make on-CPU exceed it);
# - steal within 10% (at least 20 ms) of the steal schedstat leaves, and of
#   /proc/stat's growth, where the spinner had its CPU nearly to itself (waited
#   for it less than 10% of the window: it always should); else at most
#   /proc/stat's growth;
# - the steal lines are the spinner's on-CPU stacks (spin_until), and add up
#   to steal_us;
# - WPROF_STEAL=off: no steal lines, steal_us 0.
# A machine with no steal passes with 0 against 0 (the log says so).
# test-timeout: 150
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"
require_bpf
require_workload runq

cpus=$(nproc)
[ "$cpus" -ge 2 ] || skip "needs 2 CPUs: one for the spinner alone"
spin_cpu=$((cpus - 1))

# the spinner: runq with one thread, moved from CPU 0 to the last CPU
start_bg "$TMP/runq.log" taskset -c "$spin_cpu" "$WORKLOADS/runq" -t 1 -n 60
wait_line "$TMP/runq.log" '^ready$' 10 || fatal "runq did not start"
tid=$(awk '$2 == "spin0" { print $1 }' <(ps -L -o tid=,comm= -p "$BG_PID"))
[ -n "$tid" ] || fatal "no spin0 thread in runq"
taskset -p -c "$spin_cpu" "$tid" >/dev/null || fatal "cannot pin spin0 to CPU $spin_cpu"
chrt -f -p 1 "$tid" || fatal "cannot make spin0 real-time"

# measure OUT.json ENV...: records the spinner with ENV set; prints the
# ground truth "scale run_ns delay_ns procstat_steal_ns" over the window
measure()
{
	local out=$1

	shift
	env "$@" taskset -c 0 "$PYTHON" - "$BG_PID" "$tid" "$spin_cpu" "$WPROF" "$out" <<'EOF'
import subprocess, sys, time
pid, tid, cpu, wprof, out = sys.argv[1:6]

def read():
    with open("/proc/%s/task/%s/schedstat" % (pid, tid)) as f:
        run, delay = (int(x) for x in f.read().split()[:2])
    with open("/proc/stat") as f:
        for line in f:
            if line.startswith("cpu%s " % cpu):
                steal = int(line.split()[8]) * 10000000  # USER_HZ 100
    return time.monotonic(), run, delay, steal

p = subprocess.Popen([wprof, "record", "-p", pid, "-d", "10", "-f", "json", "-o", out],
                     stderr=subprocess.PIPE, text=True)
err = []
for line in p.stderr:
    err.append(line)
    if line.startswith("wprof: recording"):
        a = read()
        time.sleep(10)
        b = read()
        break
err += p.stderr.readlines()
sys.stderr.write("".join(err))
if p.wait() != 0:
    sys.exit(1)
print("%.6f %d %d %d" % (b[0] - a[0], b[1] - a[1], b[2] - a[2], b[3] - a[3]))
EOF
}

read -r span run delay pst < <(measure "$TMP/on.json" 2>"$TMP/on.err") ||
	{ sed 's/^/#   /' "$TMP/on.err"; fatal "the recording failed"; }
check_json "$TMP/on.json"
read -r window on steal rq sleep disk st_lines on_lines st_spin < <(json_eval "$TMP/on.json" '
"%d %d %d %d %d %d %d %d %d" % ((j["window_us"],) + tuple(thread("spin0")[k] for k in
    ("on_cpu_us", "steal_us", "runqueue_us", "sleep_us", "disk_us")) + (
    total(stacks("steal", "spin0")), total(stacks("on-cpu", "spin0")),
    total(stacks("steal", "spin0", "spin_until"))))')
# schedstat and /proc/stat over the reads, scaled to the window
scale=$(calc "$window / ($span * 1e6)")
run_us=$(calc "$run / 1000 * $scale")
delay_us=$(calc "$delay / 1000 * $scale")
truth=$(calc "$window - $run_us - $delay_us")
pst_us=$(calc "$pst / 1000 * $scale")
log "window $window us (reads $span s apart, scale $scale); wprof: on-CPU $on, steal $steal," \
	"runqueue $rq, sleep $sleep, disk $disk us; schedstat: run $run_us, wait $delay_us us," \
	"steal it leaves $truth us; /proc/stat steal of CPU $spin_cpu: $pst_us us"
[ "$(calc "($pst_us > 0)")" = 1.0000 ] || log "this machine had no steal on CPU $spin_cpu meanwhile"

check_near "on-CPU + steal + runqueue = the window (us)" "$((on + steal + rq))" "$window" 1000
check "it never blocked (sleep $sleep, disk $disk)" test "$((sleep + disk))" -eq 0
# each read of a running thread's schedstat lags by a tick at most
check_near "on-CPU vs schedstat's run time (us)" "$on" "$run_us" 20000
check "steal lines add up to steal_us ($st_lines vs $steal)" test "$st_lines" -eq "$steal"
check "on-cpu lines add up to on_cpu_us ($on_lines vs $on)" test "$on_lines" -eq "$on"
check_ge "share of the steal lines under spin_until (%)" \
	"$(calc "$steal ? 100 * $st_spin / $steal : 100")" 90
# a thread's steal is part of its CPU's, whatever else ran there
check_le "steal vs /proc/stat's steal growth of CPU $spin_cpu + 20 ms (us)" "$steal" \
	"$(calc "$pst_us + 20000")"
# Alone on its CPU, the spinner has nearly all of the CPU's steal, and
# schedstat's reads are off by a tick at most; sharing it (a busy machine),
# the others' runs have their share of the steal, and a read while it waits
# lacks that wait: the two-sided checks need it alone.
if [ "$(calc "($rq < 0.1 * $window)")" = 1.0000 ]; then
	bound=$(calc "($truth * 0.1 > 20000) ? $truth * 0.1 : 20000")
	check_near "steal vs the window less schedstat's run and wait (us)" "$steal" "$truth" "$bound"
	# the CPU's steal while the others ran there is theirs: the spinner's
	# share is the part of the window it was current
	mine=$(calc "$pst_us * ($window - $rq) / $window")
	bound=$(calc "($mine * 0.1 > 20000) ? $mine * 0.1 : 20000")
	check_near "steal vs /proc/stat's steal growth of CPU $spin_cpu while the spinner ran (us)" \
		"$steal" "$mine" "$bound"
else
	not_ok "CPU $spin_cpu was shared although the spinner is real-time (it waited $rq us): steal compared one way"
fi

measure "$TMP/off.json" WPROF_STEAL=off >/dev/null 2>"$TMP/off.err" ||
	{ sed 's/^/#   /' "$TMP/off.err"; fatal "the recording with WPROF_STEAL=off failed"; }
read -r steal n < <(json_eval "$TMP/off.json" \
	'"%d %d" % (thread("spin0")["steal_us"], len(stacks("steal")))')
check "WPROF_STEAL=off: steal_us 0 and no steal lines (got $steal us, $n lines)" \
	test "$steal/$n" = 0/0
finish
