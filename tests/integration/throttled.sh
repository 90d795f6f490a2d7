#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Waits in a cgroup over its CPU quota: off-cpu:runqueue:throttled. The test
# makes two cgroups of the cpu controller: one capped at 20% of a CPU (20000
# us every 100000 us) with a spinner (runq -t 1, moved to the last CPU), one
# with no cap with three spinners sharing CPU 0 (runq -t 3). Both are
# recorded 5 s (`-p CAPPED,UNCAPPED -f json -f folded`). Ground truth: the
# capped cgroup's cpu.stat throttled time, read when wprof says its window
# is open and 5 s later, scaled to the window. Checks:
# - the capped spinner's throttled_us within 10% of the cgroup's throttled
#   time; its throttled stacks in JSON, and the folded throttled lines, add
#   up to it within 10% too, and those in JSON are under spin_until (the
#   function that spins);
# - its on-CPU + steal + runqueue + throttled time is the window (it never
#   blocks), to 1 ms;
# - the uncapped spinners: no throttled time, no throttled line, and a wait
#   for a CPU of more than half the window each (three share one CPU).
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"
require_bpf
require_workload runq

cpus=$(nproc)
[ "$cpus" -ge 2 ] || skip "needs 2 CPUs: one for the capped spinner"
name=wprof-test-$$
capped="" uncapped="" cg_capped="" cg_free=""
# lib_cleanup exits with the status it is entered with: keep the script's
cleanup_cg() {
	local rc=$?

	[ -n "$capped" ] && kill "$capped" 2>/dev/null && wait "$capped" 2>/dev/null
	[ -n "$uncapped" ] && kill "$uncapped" 2>/dev/null && wait "$uncapped" 2>/dev/null
	[ -n "$cg_capped" ] && rmdir "$cg_capped" 2>/dev/null
	[ -n "$cg_free" ] && rmdir "$cg_free" 2>/dev/null
	(exit $rc)
	lib_cleanup
}
trap cleanup_cg EXIT
cpu_cgroup "$name-free" -1 100000
cg_free=$CG
cpu_cgroup "$name" 20000 100000
cg_capped=$CG

# each joins its cgroup before it execs runq
sh -c "echo \$\$ >'$cg_capped/cgroup.procs' && exec '$WORKLOADS/runq' -t 1 -n 60" \
	>"$TMP/capped.log" 2>&1 &
capped=$!
sh -c "echo \$\$ >'$cg_free/cgroup.procs' && exec '$WORKLOADS/runq' -t 3 -n 60" \
	>"$TMP/free.log" 2>&1 &
uncapped=$!
wait_line "$TMP/capped.log" '^ready$' 10 || fatal "runq did not start in $cg_capped"
wait_line "$TMP/free.log" '^ready$' 10 || fatal "runq did not start in $cg_free"
tid=$(awk '$2 == "spin0" { print $1 }' <(ps -L -o tid=,comm= -p "$capped"))
[ -n "$tid" ] || fatal "no spin0 thread in the capped runq"
taskset -p -c "$((cpus - 1))" "$tid" >/dev/null || fatal "cannot move spin0 to CPU $((cpus - 1))"

# wprof and the cgroup's throttled time (ns) over its window, read when it
# says the window is open and 5 s later: prints "seconds_apart throttled_ns"
"$PYTHON" - "$WPROF" "$capped,$uncapped" "$TMP" "$cg_capped/cpu.stat" "$CG_THROTTLED" \
	"$CG_VERSION" >"$TMP/truth" 2>"$TMP/rec.err" <<'EOF'
import subprocess, sys, time
wprof, pids, tmp, stat, key, version = sys.argv[1:7]

def read():
    with open(stat) as f:
        for line in f:
            k, v = line.split()
            if k == key:
                return time.monotonic(), int(v) * (1 if version == "1" else 1000)
    raise SystemExit("no %s in %s" % (key, stat))

p = subprocess.Popen([wprof, "record", "-p", pids, "-d", "5", "-f", "json", "-o",
                      tmp + "/out.json", "-f", "folded", "-o", tmp + "/out.folded"],
                     stderr=subprocess.PIPE, text=True)
err = []
a = b = None
for line in p.stderr:
    err.append(line)
    if line.startswith("wprof: recording"):
        a = read()
        time.sleep(5)
        b = read()
        break
err += p.stderr.readlines()
sys.stderr.write("".join(err))
if p.wait() != 0 or not a:
    sys.exit(1)
print("%.6f %d" % (b[0] - a[0], b[1] - a[1]))
EOF
rc=$?
sed 's/^/#   /' "$TMP/rec.err" | head -16
check "wprof exits 0 (got $rc)" test "$rc" -eq 0
check_json "$TMP/out.json"
check_folded "$TMP/out.folded"
read -r span thr_ns <"$TMP/truth"
read -r window on steal rq thr sleep disk st_json st_spin < <(json_eval "$TMP/out.json" "
'%d %d %d %d %d %d %d %d %d' % ((j['window_us'],) + tuple([t for t in threads()
    if t['tid'] == $tid][0][k] for k in ('on_cpu_us', 'steal_us', 'runqueue_us',
    'throttled_us', 'sleep_us', 'disk_us')) +
    (total(stacks('off-cpu:runqueue:throttled', tid=$tid)),
     total(stacks('off-cpu:runqueue:throttled', tid=$tid, frame='spin_until'))))")
truth=$(calc "$thr_ns / 1000 * $window / ($span * 1e6)")
st_folded=$(awk '$1 ~ /^off-cpu:runqueue:throttled;/ { s += $NF } END { print s + 0 }' \
	"$TMP/out.folded")
log "window $window us; the cgroup's throttled time $truth us (reads $span s apart, scaled);" \
	"wprof, spin0: on-CPU $on, steal $steal, runqueue $rq, throttled $thr, sleep $sleep," \
	"disk $disk us; throttled stacks: json $st_json us ($st_spin under spin_until)," \
	"folded $st_folded us"
check_ge "the cgroup was throttled for a fifth of the window or more (us)" "$truth" "$((window / 5))"
check_near "throttled_us vs the cgroup's throttled time (us)" "${thr:-x}" "$truth" \
	"$(calc "$truth / 10")"
check_near "its throttled stacks in JSON add up to it (us)" "${st_json:-x}" "$truth" \
	"$(calc "$truth / 10")"
check_near "... and the folded throttled lines (us)" "$st_folded" "$truth" "$(calc "$truth / 10")"
check_ge "... those in JSON under spin_until (us)" "${st_spin:-0}" "$(calc "$st_json * 0.95")"
check_near "on-CPU + steal + runqueue + throttled = the window (us)" \
	"$((on + steal + rq + thr))" "$window" 1000
check "no sleep, no disk ($sleep, $disk us)" test "$sleep/$disk" = 0/0
while read -r t_tid t_rq t_thr t_lines; do
	check "uncapped $t_tid: no throttled time, no throttled line ($t_thr us, $t_lines lines)" \
		test "$t_thr/$t_lines" = 0/0
	check_ge "uncapped $t_tid: waits for a CPU half the window or more (us)" "$t_rq" \
		"$((window / 2))"
done < <(json_eval "$TMP/out.json" "['%d %d %d %d' % (t['tid'], t['runqueue_us'],
    t['throttled_us'], len(stacks('off-cpu:runqueue:throttled', tid=t['tid'])))
    for t in threads() if t['pid'] == $uncapped and t['comm'].startswith('spin')]")
finish
