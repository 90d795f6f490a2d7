#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# A target in a cgroup with a CPU limit: the summary and the JSON report
# give the cgroup, its limit, and its periods, throttled periods and
# throttled time over the window, from the cgroup's own cpu.stat. The test
# makes a cgroup of the cpu controller (v1 where it is mounted, else v2)
# limited to 20% of a CPU (20000 us every 100000 us), starts runq's
# spinner in it and a sleeper outside it, and records both for 3 s
# (`-p SPINNER,SLEEPER -f json`). Ground truth: cpu.stat as this script
# reads it before wprof starts and once it has exited (a range around
# wprof's window). Checks:
# - the spinner's entry, with the cgroup's path, its version, the limit as
#   written; none for the sleeper unless the script's own cgroup is capped;
# - periods, throttled periods and throttled time no more than the script
#   saw around them; at least 25 periods in a 3 s window, nearly all of them
#   throttled, and throttled time at least half the window and at most the
#   periods' length (a spinner capped at 20%: busy machine or not, it uses
#   its 20 ms early in each period);
# - the summary names the cgroup and its limit; a saved recording keeps it
#   (`wprof report X.wprof -f json` has the same "cgroups").
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"
require_bpf
require_workload runq

name=wprof-test-$$
spin_pid="" sleeper="" cg=""
# lib_cleanup exits with the status it is entered with: keep the script's
cleanup_cg() {
	local rc=$?

	[ -n "$spin_pid" ] && kill "$spin_pid" 2>/dev/null && wait "$spin_pid" 2>/dev/null
	[ -n "$sleeper" ] && kill "$sleeper" 2>/dev/null
	[ -n "$cg" ] && rmdir "$cg" 2>/dev/null
	(exit $rc)
	lib_cleanup
}
trap cleanup_cg EXIT
cpu_cgroup "$name" 20000 100000
cg=$CG version=$CG_VERSION throttled_key=$CG_THROTTLED

# the spinner joins the cgroup before it execs runq
sh -c "echo \$\$ >'$cg/cgroup.procs' && exec '$WORKLOADS/runq' -t 1 -n 60" >"$TMP/runq.log" 2>&1 &
spin_pid=$!
wait_line "$TMP/runq.log" '^ready$' 10 || fatal "runq did not start in $cg"
sleep 60 &
sleeper=$!

# stat "periods throttled_periods throttled_us" of the cgroup
cgstat() {
	awk -v k="$throttled_key" -v v="$version" '
		$1 == "nr_periods" { p = $2 } $1 == "nr_throttled" { t = $2 }
		$1 == k { n = (v == 1 ? $2 / 1000 : $2) }
		END { printf "%d %d %d\n", p, t, n }' "$cg/cpu.stat"
}
# read before wprof starts and after it exits: a range around its window
read -r p0 t0 n0 < <(cgstat)
"$WPROF" record -p "$spin_pid,$sleeper" -d 3 -o "$TMP/out.json" -o "$TMP/out.wprof" \
	2>"$TMP/rec.err"
rc=$?
read -r p1 t1 n1 < <(cgstat)
# whether the sleeper's own cgroup (the script's) has a cap: then it is listed too
sleeper_capped=$("$PYTHON" - "$sleeper" "$version" <<'PY'
import os, sys
pid, v = sys.argv[1], sys.argv[2]
for line in open("/proc/%s/cgroup" % pid):
    h, ctl, path = line.rstrip("\n").split(":", 2)
    if (v == "1" and "cpu" in ctl.split(",")) or (v == "2" and h == "0"):
        break
else:
    print(0); sys.exit()
base = "/sys/fs/cgroup/cpu" if v == "1" else [l.split()[1] for l in open("/proc/self/mounts") if l.split()[2] == "cgroup2"][0]
capped = 0
while True:
    d = base + path.rstrip("/")
    try:
        q = open(d + ("/cpu.cfs_quota_us" if v == "1" else "/cpu.max")).read().split()[0]
        capped |= q not in ("-1", "max")
    except OSError:
        pass
    if path in ("/", ""):
        break
    path = path.rsplit("/", 1)[0] or "/"
print(int(capped))
PY
)
sed 's/^/#   /' "$TMP/rec.err" | head -12
check "wprof exits 0 (got $rc)" test "$rc" -eq 0
check_json "$TMP/out.json"
read -r n pid path ver quota period periods thr thr_us < <(json_eval "$TMP/out.json" "
[c for c in j['cgroups'] if c['pid'] == $spin_pid] and '%d %s' % (len(j['cgroups']),
    ' '.join(str([c for c in j['cgroups'] if c['pid'] == $spin_pid][0][k]) for k in ('pid',
    'path', 'version', 'quota_us', 'period_us', 'periods', 'throttled_periods',
    'throttled_us'))) or '%d - - - - - - - -' % len(j['cgroups'])")
log "the script's cpu.stat range: $((p1 - p0)) periods, $((t1 - t0)) throttled, $((n1 - n0)) us throttled; wprof: $periods periods, $thr throttled, $thr_us us"
check "the spinner's cgroup is listed, the sleeper's only if capped ($sleeper_capped): $n listed, pid $pid" \
	test "$n/$pid" = "$((1 + ${sleeper_capped:-0}))/$spin_pid"
check "its path, version and limit as made ($path v$ver, $quota us every $period us)" \
	test "$path/$ver/$quota/$period" = "/$name/$version/20000/100000"
check "periods within the script's ($periods of $((p1 - p0))), 25 or more" \
	test "${periods:-0}" -le "$((p1 - p0))" -a "${periods:-0}" -ge 25
check "throttled periods within the script's, nearly every period ($thr of $((t1 - t0)) and of $periods)" \
	test "${thr:-0}" -le "$((t1 - t0))" -a "${thr:-0}" -ge "$((${periods:-0} - 3))"
check "throttled time within the script's, at most the periods' ($thr_us of $((n1 - n0)) us)" \
	test "${thr_us:-0}" -le "$((n1 - n0))" -a "${thr_us:-0}" -le "$((${periods:-0} * 100000))"
check_ge "throttled time, half the window or more (us)" "${thr_us:-0}" 1500000
check "the summary names the cgroup and its limit" \
	grep -q "^wprof: pid $spin_pid: cgroup \"/$name\" caps its CPU at 0.2 CPUs " "$TMP/rec.err"
run_wprof rep report "$TMP/out.wprof" -f json -o "$TMP/again.json"
check_wprof_ok rep
check "the saved recording keeps them: wprof report's cgroups are the same" \
	test "$(json_eval "$TMP/out.json" 'j["cgroups"]')" = "$(json_eval "$TMP/again.json" 'j["cgroups"]')"
finish
