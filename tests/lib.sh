# SPDX-License-Identifier: GPL-2.0-only
# shellcheck shell=bash
#
# Helpers for tests/integration/*.sh. Each script is one test:
#	exit 0 = pass, 1 = fail, 2 = skip (only: not root / no BPF).
# A script sources this file, calls require_bpf, runs wprof, and states what
# it expects with check_* helpers, which print one `ok:`/`not ok:` line each
# (with the numbers), then ends with `finish`.
#
# The runner exports OUT (build dir) and WPROF (the binary); both default
# sensibly so a script can also be run by hand from the repo root:
#	OUT=build bash tests/integration/cmd.sh
# KEEP_TMP=1 keeps the scratch directory even when the test passes (it is
# always kept, and named, when the test fails).

set -u

: "${OUT:=build}"
if ! OUT=$(cd "$OUT" 2>/dev/null && pwd); then
	echo "not ok: build directory '$OUT' does not exist; run make" >&2
	exit 1
fi
: "${WPROF:=$OUT/wprof}"
WORKLOADS=$OUT/tests/workloads
FOLDCHECK=$OUT/tests/tools/foldcheck
TEST_NAME=$(basename "$0" .sh)

# 0755 so the unprivileged-user test can reach files in it.
TMP=$(mktemp -d "/tmp/wprof-$TEST_NAME.XXXXXX") || exit 1
chmod 755 "$TMP"

LIB_PIDS=()
LIB_FAILED=0

lib_cleanup()
{
	local rc=$? pid

	for pid in "${LIB_PIDS[@]}"; do
		kill -TERM "$pid" 2>/dev/null
	done
	for pid in "${LIB_PIDS[@]}"; do
		# A workload that ignores SIGTERM for 3 s gets SIGKILL.
		timeout 3 tail --pid="$pid" -f /dev/null 2>/dev/null || kill -KILL "$pid" 2>/dev/null
	done
	if [ "$rc" -eq 1 ] || [ "${KEEP_TMP:-0}" = 1 ]; then
		echo "# evidence kept in $TMP"
	else
		rm -rf "$TMP"
	fi
	exit "$rc"
}
trap lib_cleanup EXIT

log()
{
	echo "# $*"
}

ok()
{
	echo "ok: $*"
}

not_ok()
{
	echo "not ok: $*"
	LIB_FAILED=1
}

# Stop now: the rest of the test cannot run.
fatal()
{
	not_ok "$@"
	exit 1
}

skip()
{
	echo "SKIP: $*"
	exit 2
}

# fail_later DESC: a failed check inside $(...), where not_ok's count is
# lost with the subshell: finish() fails the test for it.
fail_later()
{
	echo "not ok: $*" >&2
	echo "$*" >>"$TMP/.failed_in_subshell"
}

finish()
{
	if [ -s "$TMP/.failed_in_subshell" ]; then
		while read -r line; do
			not_ok "$line"
		done <"$TMP/.failed_in_subshell"
	fi
	[ "$LIB_FAILED" -eq 0 ] && exit 0
	exit 1
}

# Skip (exit 2) only when BPF cannot run here; a missing wprof or workload is
# a failure (the build is broken), not a skip.
require_bpf()
{
	[ "$(id -u)" -eq 0 ] || skip "needs root for BPF (uid $(id -u))"
	[ -r /sys/kernel/btf/vmlinux ] || skip "kernel has no BTF (/sys/kernel/btf/vmlinux)"
	[ -x "$WPROF" ] || fatal "wprof binary $WPROF not built (run make)"
	[ -x "$FOLDCHECK" ] || fatal "$FOLDCHECK not built (run make test-bins)"
}

require_workload()
{
	local w

	for w in "$@"; do
		[ -x "$WORKLOADS/$w" ] || fatal "workload $WORKLOADS/$w not built (run make test-bins)"
	done
}

# rerun_tests HOW TEST...: run each integration TEST again (in the
# environment this test exported), one check each: "TEST passes HOW".
rerun_tests()
{
	local how=$1 t rc

	shift
	for t in "$@"; do
		log "$t $how"
		bash "$(dirname "${BASH_SOURCE[0]}")/integration/$t.sh" >"$TMP/$t.log" 2>&1
		rc=$?
		sed 's/^/#   /' "$TMP/$t.log" | grep -E '^#   (not ok|SKIP|# evidence)' | head -20
		check "$t passes $how (exit $rc; log $TMP/$t.log)" test "$rc" -eq 0
	done
}

# check DESC CMD... : ok when CMD succeeds.
check()
{
	local desc=$1

	shift
	if "$@"; then
		ok "$desc"
	else
		not_ok "$desc"
	fi
}

# is_num V: V is a decimal number (an empty value, "nan" or "-nan" is not).
is_num()
{
	[[ $1 =~ ^-?[0-9]+(\.[0-9]+)?([eE][-+]?[0-9]+)?$ ]]
}

# check_near DESC VALUE EXPECTED TOLERANCE: |VALUE - EXPECTED| <= TOLERANCE.
# Every operand must be a number: an empty or NaN value fails the check.
check_near()
{
	if is_num "$2" && is_num "$3" && is_num "$4" &&
		awk -v v="$2" -v e="$3" -v t="$4" 'BEGIN { d = v - e; if (d < 0) d = -d; exit !(d <= t) }'; then
		ok "$1: $2 (want $3 +/- $4)"
	else
		not_ok "$1: $2 (want $3 +/- $4)"
	fi
}

# check_ge DESC VALUE MIN / check_le DESC VALUE MAX
check_ge()
{
	if is_num "$2" && is_num "$3" && awk -v v="$2" -v m="$3" 'BEGIN { exit !(v >= m) }'; then
		ok "$1: $2 (want >= $3)"
	else
		not_ok "$1: $2 (want >= $3)"
	fi
}

check_le()
{
	if is_num "$2" && is_num "$3" && awk -v v="$2" -v m="$3" 'BEGIN { exit !(v <= m) }'; then
		ok "$1: $2 (want <= $3)"
	else
		not_ok "$1: $2 (want <= $3)"
	fi
}

# calc EXPR: floating-point arithmetic, printed with 4 decimals.
calc()
{
	awk "BEGIN { printf \"%.4f\\n\", $* }"
}

# ratio A B: A / B (0 when B is 0).
ratio()
{
	awk -v a="$1" -v b="$2" 'BEGIN { printf "%.4f\n", b ? a / b : 0 }'
}

# start_bg LOG CMD...: start CMD in the background, stdout+stderr to LOG;
# its pid is in BG_PID and it is killed at exit if still running.
start_bg()
{
	local logf=$1

	shift
	"$@" >"$logf" 2>&1 &
	BG_PID=$!
	LIB_PIDS+=("$BG_PID")
}

# wait_line FILE ERE SECONDS: wait until FILE has a line matching ERE.
wait_line()
{
	local i

	for ((i = 0; i < $3 * 10; i++)); do
		grep -Eq "$2" "$1" 2>/dev/null && return 0
		sleep 0.1
	done
	return 1
}

# wait_exit PID SECONDS: wait for our child PID to exit; its status is in
# WAIT_RC. Returns 1 if it is still running after SECONDS.
# shellcheck disable=SC2034 # WAIT_RC is read by the test scripts
wait_exit()
{
	local pid=$1 i state

	WAIT_RC=
	for ((i = 0; i < $2 * 20; i++)); do
		# A dead child stays a zombie (kill -0 succeeds) until waited for.
		state=$(awk '{ sub(/.*\) /, ""); print substr($0, 1, 1) }' "/proc/$pid/stat" 2>/dev/null)
		if [ -z "$state" ] || [ "$state" = Z ]; then
			wait "$pid"
			WAIT_RC=$?
			return 0
		fi
		sleep 0.05
	done
	return 1
}

now_ms()
{
	date +%s%3N
}

# run_wprof NAME ARGS...: run wprof (killed after 120 s) with stdout in
# $TMP/NAME.out, stderr in $TMP/NAME.err; sets RC and ELAPSED_MS.
run_wprof()
{
	local name=$1 t0

	shift
	log "wprof $*"
	t0=$(now_ms)
	# --foreground: wprof stays in the script's process group, so the
	# runner's own timeout takes it down with the script
	timeout --foreground -k 5 120 "$WPROF" "$@" >"$TMP/$name.out" 2>"$TMP/$name.err"
	RC=$?
	ELAPSED_MS=$(($(now_ms) - t0))
	log "exit $RC after $ELAPSED_MS ms; stderr:"
	sed 's/^/#   /' "$TMP/$name.err" | head -40
}

# run_wprof_rss NAME ARGS...: as run_wprof, and the run's peak RSS in RSS_KB
# (counting the python3 that starts it: some 14 MiB), for the tests of what
# a file makes wprof take. Standard input is wprof's.
run_wprof_rss()
{
	local name=$1 res

	shift
	log "wprof $*"
	res=$(python3 -c '
import resource, subprocess, sys, time
t = time.monotonic()
with open(sys.argv[1], "wb") as out, open(sys.argv[2], "wb") as err:
	try:
		rc = subprocess.call(sys.argv[3:], stdout=out, stderr=err, timeout=120)
	except subprocess.TimeoutExpired:
		rc = 124
print(rc, int((time.monotonic() - t) * 1000),
      resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)' \
		"$TMP/$name.out" "$TMP/$name.err" "$WPROF" "$@")
	read -r RC ELAPSED_MS RSS_KB <<<"$res"
	log "exit $RC after $ELAPSED_MS ms, peak RSS $RSS_KB KiB; stderr:"
	sed 's/^/#   /' "$TMP/$name.err" | head -10
}

# check_wprof_ok NAME: exit 0 and every stderr line is a `wprof: ` line.
check_wprof_ok()
{
	check "wprof exits 0 (got $RC)" test "$RC" -eq 0
	check "every stderr line starts with 'wprof: '" \
		awk '!/^wprof: /{ bad = 1 } END { exit bad }' "$TMP/$1.err"
}

# check_folded FILE: every line parses (strict), stacks unique and sorted.
check_folded()
{
	local out

	if out=$("$FOLDCHECK" "$1" 2>&1); then
		ok "$(basename "$1"): valid folded, $(wc -l <"$1") lines, all parse"
	else
		not_ok "$(basename "$1"): invalid folded output"
		echo "$out" | head -12 | sed 's/^/#   /'
	fi
}

# unseen_switches NAME: how many switches of recorded threads the --stats summary of
# run NAME timed from the thread's run time when next seen: resumes the
# kernel gave no sched_switch event for (this VM's 6.18 does that a few
# times a second; bpftrace misses them too), or left it with none. The
# block before each is timed exactly but has no stack (a "[no stack]" block
# of its thread) where the thread left the CPU unseen, or where no program
# runs at every resume (the resume task work). 0 when there were none.
unseen_switches()
{
	local n

	has_stats_lines "$1" || return 0
	n=$(sed -n 's/.*timed otherwise: .* \([0-9][0-9]*\) from its run time when next seen.*/\1/p' \
		"$TMP/$1.err")
	echo "${n:-0}"
}

# Folded-line fields. With FOLD_TAG_LEAF=1 the tag is the last frame and
# the comm the first; otherwise tag first, comm second. Frames passed to
# FRAME_ERE tests exclude tag and comm.
FOLD_TAG_LEAF=${FOLD_TAG_LEAF:-0}

# fold_sum FILE TAG_ERE COMM_ERE [FRAME_ERE]: sum of weights (us) of lines
# whose tag and comm match the anchored EREs and, if given, that have a frame
# matching FRAME_ERE (anchored too: use .* for substrings).
fold_sum()
{
	awk -v tre="^($2)\$" -v cre="^($3)\$" -v fre="${4:+^($4)\$}" -v leaf="$FOLD_TAG_LEAF" '
	{
		sp = match($0, / [0-9]+$/)
		if (!sp)
			next
		w = substr($0, sp + 1)
		n = split(substr($0, 1, sp - 1), f, ";")
		if (leaf) { tag = f[n]; comm = f[1]; lo = 2; hi = n - 1 }
		else { tag = f[1]; comm = f[2]; lo = 3; hi = n }
		if (tag !~ tre || comm !~ cre)
			next
		if (fre != "") {
			hit = 0
			for (i = lo; i <= hi; i++)
				if (f[i] ~ fre) { hit = 1; break }
			if (!hit)
				next
		}
		sum += w
	}
	END { printf "%.0f\n", sum }' "$1"
}

# fold_sum_ordered FILE TAG_ERE COMM_ERE ROOT_ERE LEAF_ERE: weight of lines
# where a frame matching ROOT_ERE comes before (rootward of) one matching
# LEAF_ERE.
fold_sum_ordered()
{
	awk -v tre="^($2)\$" -v cre="^($3)\$" -v rre="^($4)\$" -v lre="^($5)\$" \
		-v leaf="$FOLD_TAG_LEAF" '
	{
		sp = match($0, / [0-9]+$/)
		if (!sp)
			next
		w = substr($0, sp + 1)
		n = split(substr($0, 1, sp - 1), f, ";")
		if (leaf) { tag = f[n]; comm = f[1]; lo = 2; hi = n - 1 }
		else { tag = f[1]; comm = f[2]; lo = 3; hi = n }
		if (tag !~ tre || comm !~ cre)
			next
		r = 0
		for (i = lo; i <= hi; i++) {
			if (!r && f[i] ~ rre)
				r = i
			else if (r && f[i] ~ lre) { sum += w; break }
		}
	}
	END { printf "%.0f\n", sum }' "$1"
}

# fold_field FILE tag|comm: the distinct tags or comms, one per line.
fold_field()
{
	awk -v want="$2" -v leaf="$FOLD_TAG_LEAF" '
	{
		sp = match($0, / [0-9]+$/)
		if (!sp)
			next
		n = split(substr($0, 1, sp - 1), f, ";")
		if (want == "tag")
			v = leaf ? f[n] : f[1]
		else
			v = leaf ? f[1] : f[2]
		if (!(v in seen)) { seen[v] = 1; print v }
	}' "$1" | LC_ALL=C sort
}

# fold_bad_kernel_order FILE: lines where a user frame follows a kernel
# (`_[k]`) frame; kernel frames must be the leaf end of the stack.
fold_bad_kernel_order()
{
	awk -v leaf="$FOLD_TAG_LEAF" '
	{
		sp = match($0, / [0-9]+$/)
		if (!sp)
			next
		n = split(substr($0, 1, sp - 1), f, ";")
		if (leaf) { lo = 2; hi = n - 1 } else { lo = 3; hi = n }
		k = 0
		for (i = lo; i <= hi; i++) {
			if (f[i] ~ /_\[k\]$/)
				k = 1
			else if (k) { print; break }
		}
	}' "$1"
}

# switches_of NAME: the context switches of the targets that wprof's summary
# in $TMP/NAME.err counted.
switches_of()
{
	has_stats_lines "$1" || return 0
	sed -n 's/^wprof: [0-9]* samples, \([0-9]*\) context switches.*/\1/p' "$TMP/$1.err"
}

# has_stats_lines NAME: run NAME's summary has --stats's lines (its events
# line); else the test fails (fail_later) and 0 is printed.
has_stats_lines()
{
	grep -q '^wprof: [0-9]* samples, [0-9]* context switches' "$TMP/$1.err" && return 0
	fail_later "run $1's summary has the lines of --stats (run it with --stats)"
	echo 0
	return 1
}

# SWITCH_SLACK_US: how far a thread's on-CPU time by the switch timestamps may
# drift, per context switch, from the kernel's run time (schedstat,
# CLOCK_THREAD_CPUTIME_ID): the kernel starts and stops its clock elsewhere
# in the scheduler's path than the sched_switch tracepoint, and the BPF
# programs at that tracepoint (wprof's, and those of any other tracer) run
# in between. About 9 us a switch was seen on a 2-CPU VM under load.
SWITCH_SLACK_US=20

# report_get FILE KEY: value of a `key value` line of a workload report.
report_get()
{
	awk -v k="$2" '$1 == k { print $2; found = 1 } END { exit !found }' "$1"
}

# schedstat PID TID: "run_ns wait_ns" of a thread, from the kernel.
schedstat()
{
	awk '{ print $1, $2 }' "/proc/$1/task/$2/schedstat"
}

# cpu_cgroup NAME QUOTA_US PERIOD_US: make a cgroup NAME of the cpu
# controller (v1 where it is mounted, else v2), its CPU capped at QUOTA_US
# every PERIOD_US (QUOTA_US -1: no cap). Sets CG (its directory), CG_VERSION
# and CG_THROTTLED ("throttled_time" in ns, v1; "throttled_usec", v2: the
# key of its cpu.stat). The caller removes it (rmdir "$CG").
cpu_cgroup()
{
	local name=$1 quota=$2 period=$3 root

	if [ -e /sys/fs/cgroup/cpu/cpu.cfs_quota_us ]; then
		CG_VERSION=1 CG_THROTTLED=throttled_time CG=/sys/fs/cgroup/cpu/$name
		mkdir "$CG" || fatal "cannot make $CG"
		echo "$period" >"$CG/cpu.cfs_period_us" && echo "$quota" >"$CG/cpu.cfs_quota_us" ||
			fatal "cannot set the limit of $CG"
		return
	fi
	root=$(awk '$3 == "cgroup2" { print $2; exit }' /proc/self/mounts)
	[ -n "$root" ] && grep -qw cpu "$root/cgroup.controllers" 2>/dev/null ||
		skip "no cgroup hierarchy with the cpu controller"
	# (left enabled: other cgroups of the root may use it by now)
	echo +cpu >"$root/cgroup.subtree_control" 2>/dev/null
	CG_VERSION=2 CG_THROTTLED=throttled_usec CG=$root/$name
	mkdir "$CG" || fatal "cannot make $CG"
	[ "$quota" = -1 ] && quota=max
	echo "$quota $period" >"$CG/cpu.max" || fatal "cannot set the limit of $CG"
}

# unused_pid: a pid that no process or thread has right now (a child that
# was just reaped; pids are reused only after wrapping around pid_max).
unused_pid()
{
	local p

	while :; do
		sleep 0 &
		p=$!
		wait "$p"
		[ -e "/proc/$p" ] || { echo "$p"; return; }
	done
}

# --format json helpers, in python3 (Debian package python3). JSON_PY is the
# prelude of every query: it loads the file strictly (no NaN/Infinity, no
# duplicate keys, nothing after the object) into `j` and defines
#	threads(comm=ERE)        thread objects (plus their process's "pid")
#	thread(comm)             the one thread whose comm matches the ERE
#	stacks(tag, comm, frame, tid)  stacks whose tag and comm match the EREs,
#	                         with a frame matching the ERE `frame` (if given)
#	                         and of thread `tid` (if given)
#	total(stacks, key)       sum of a key (default total_us)
#	hist(pid)                that process's block_hist
#	bucket(pid, us)          count of the block_hist bucket holding `us`
# All EREs are anchored (use .* for substrings), as in fold_sum.
: "${PYTHON:=python3}"
JSON_PY='
import json, re, sys

def _const(name):
	raise ValueError("not JSON: " + name)

def _pairs(pairs):
	keys = [k for k, _ in pairs]
	if len(set(keys)) != len(keys):
		raise ValueError("duplicate key in %s" % keys)
	return dict(pairs)

try:
	with open(sys.argv[1]) as _f:
		j = json.load(_f, parse_constant=_const, object_pairs_hook=_pairs)
except (OSError, ValueError) as e:
	raise SystemExit("json: %s: %s" % (sys.argv[1], e))

def threads(comm=".*"):
	return [dict(t, pid=p["pid"]) for p in j["processes"] for t in p["threads"]
		if re.fullmatch(comm, t["comm"])]

def thread(comm):
	ts = threads(comm)
	if len(ts) != 1:
		raise SystemExit("json: %d threads named %r" % (len(ts), comm))
	return ts[0]

def stacks(tag=".*", comm=".*", frame=None, tid=None):
	return [s for s in j["stacks"] if re.fullmatch(tag, s["tag"]) and
		re.fullmatch(comm, s["comm"]) and (tid is None or s["tid"] == tid) and
		(frame is None or any(re.fullmatch(frame, f) for f in s["frames"]))]

def total(ss, key="total_us"):
	# several stacks (kernel paths) of one call site: counts and totals add up, maxima do not
	if key == "max_us":
		return max((s[key] for s in ss), default=0)
	return sum(s[key] for s in ss)

def hist(pid):
	return [p for p in j["processes"] if p["pid"] == pid][0]["block_hist"]

def bucket(pid, us):
	return sum(b["count"] for b in hist(pid) if b["min_us"] <= us <= b["max_us"])
'

# json_eval FILE EXPR: print the value of the python expression EXPR (see
# JSON_PY); a list prints one item a line, a bool as 1 or 0. On an error it
# prints the error on stderr and returns 1.
json_eval()
{
	"$PYTHON" -c "$JSON_PY
r = eval(sys.argv[2])
if isinstance(r, bool):
	r = int(r)
if isinstance(r, (list, tuple)):
	for x in r:
		print(x)
else:
	print(r)" "$1" "$2"
}

# check_json FILE: FILE is one strict JSON object in wprof's format: every
# key of the spec with values of the right type, counters >= 0, tags known,
# frames free of ';' and newlines, log2 histogram buckets [2^k, 2^(k+1))
# that are not empty; per thread, on-CPU stacks weighing its on-CPU time and
# off-CPU stacks no more than its time in their state; [unsampled] lines as
# counted; max_us no more than total_us, and equal for one interval.
check_json()
{
	local out

	if out=$("$PYTHON" -c "$JSON_PY"'
bad = []
def need(obj, keys, what):
	for k, ty in keys.items():
		if k not in obj:
			bad.append("%s: no %r" % (what, k))
		elif not isinstance(obj[k], ty) or isinstance(obj[k], bool):
			bad.append("%s: %r is %r" % (what, k, obj[k]))
		elif ty is int and obj[k] < 0:
			bad.append("%s: %r < 0" % (what, k))
counters = ("wall_us", "on_cpu_us", "steal_us", "runqueue_us", "throttled_us", "sleep_us",
	    "disk_us", "blocks")
if not isinstance(j, dict):
	raise SystemExit("not an object")
need(j, {"window_us": int, "freq_hz": int, "period_us": int, "processes": list,
	 "stacks": list, "lost": dict, "unsampled_threads": int, "unsampled_us": int,
	 "untimed_threads": int}, "top")
for p in j.get("processes", []):
	need(p, dict({"pid": int, "comm": str, "block_hist": list, "threads": list},
		     **{k: int for k in counters}), "process %s" % p.get("pid"))
	for b in p.get("block_hist", []):
		need(b, {"min_us": int, "max_us": int, "count": int}, "bucket")
		lo = b.get("min_us", 0)
		# bucket k is [2^k, 2^(k+1)) us; the first, [0, 2), also holds 0
		first = lo == 0 and b.get("max_us") == 1
		if not first and (lo & (lo - 1) or b.get("max_us") not in (2 * lo - 1, 2 * lo)) \
				or not b.get("count"):
			bad.append("process %s: bad bucket %r" % (p.get("pid"), b))
	for t in p.get("threads", []):
		need(t, dict({"tid": int, "comm": str, "max_block_us": int},
			     **{k: int for k in counters}), "thread %s" % t.get("tid"))
for s in j.get("stacks", []):
	what = "stack %s/%s" % (s.get("tid"), s.get("tag"))
	need(s, {"tag": str, "pid": int, "tid": int, "comm": str, "frames": list,
		 "count": int, "total_us": int, "max_us": int}, what)
	if s.get("tag") not in ("on-cpu", "steal", "off-cpu", "off-cpu:sleep", "off-cpu:disk",
				"off-cpu:runqueue", "off-cpu:runqueue:throttled"):
		bad.append("%s: unknown tag" % what)
	for f in s.get("frames", []):
		if not isinstance(f, str) or not f or ";" in f or "\n" in f:
			bad.append("%s: bad frame %r" % (what, f))
	# a thread that ran unsampled has one on-CPU line of count 0, no stack (and one of steal)
	unsampled = s.get("tag") in ("on-cpu", "steal") and \
		s.get("frames", [""])[-1:] == ["[unsampled]"]
	if s.get("tag") in ("on-cpu", "steal") and (s.get("count") == 0) != unsampled:
		bad.append("%s: count %s with frames ending %s" % (what, s.get("count"),
								  s.get("frames", [])[-1:]))
	if s.get("count") == 1 and s.get("max_us") != s.get("total_us") or \
			s.get("max_us", 0) > s.get("total_us", 0):
		bad.append("%s: max_us %s, total_us %s, count %s" % (what, s.get("max_us"),
								     s.get("total_us"), s.get("count")))
# Per thread, its on-CPU lines weigh exactly its on-CPU time; only a thread
# sampled but never seen switching (untimed) has a period per sample. Its
# off-CPU lines weigh at most its time in those states: all of it, unless
# --min-block/--max-block left intervals out.
offs = {"off-cpu:sleep": ("sleep_us",), "off-cpu:disk": ("disk_us",),
	"off-cpu:runqueue": ("runqueue_us",), "off-cpu:runqueue:throttled": ("throttled_us",),
	"off-cpu": ("sleep_us", "disk_us", "runqueue_us", "throttled_us")}
period_us = 1e6 / max(j.get("freq_hz", 1), 1)
for t in threads() if not bad else []:
	mine = [s for s in j["stacks"] if s["tid"] == t["tid"]]
	on = [s for s in mine if s["tag"] == "on-cpu"]
	if t["on_cpu_us"] or not on:
		if total(on) != t["on_cpu_us"]:
			bad.append("thread %d: on-CPU stacks %d us != on_cpu_us %d" %
				   (t["tid"], total(on), t["on_cpu_us"]))
	elif abs(total(on) - total(on, "count") * period_us) > 1:
		bad.append("thread %d: untimed, on-CPU stacks %d us != samples * period" %
			   (t["tid"], total(on)))
	steal = total([s for s in mine if s["tag"] == "steal"])
	if steal != t["steal_us"]:
		bad.append("thread %d: steal stacks %d us != steal_us %d" % (t["tid"], steal,
									   t["steal_us"]))
	for tag, keys in offs.items():
		w = total([s for s in mine if s["tag"] == tag])
		if w > sum(t[k] for k in keys):
			bad.append("thread %d: %s stacks %d us > its %s" % (t["tid"], tag, w, keys))
us = [s for s in j.get("stacks", []) if s.get("frames", [""])[-1:] == ["[unsampled]"]]
if not bad and (len({s["tid"] for s in us}), total(us)) != (j.get("unsampled_threads"),
							  j.get("unsampled_us")):
	bad.append("[unsampled] lines: %d threads, %d us; unsampled_threads %s, unsampled_us %s" %
		   (len({s["tid"] for s in us}), total(us), j.get("unsampled_threads"),
		    j.get("unsampled_us")))
for k, v in j.get("lost", {}).items():
	if not isinstance(v, int) or isinstance(v, bool) or v < 0:
		bad.append("lost: %r is %r" % (k, v))
for b in bad[:12]:
	print(b)
sys.exit(1 if bad else 0)
' "$1" 2>&1); then
		ok "$(basename "$1"): strict JSON in the wprof format, $(json_eval "$1" \
			'"%d processes, %d threads, %d stacks" % (len(j["processes"]), len(threads()), len(j["stacks"]))')"
	else
		not_ok "$(basename "$1"): invalid JSON output"
		echo "$out" | head -12 | sed 's/^/#   /'
	fi
}

# disk_path NAME: a path for a scratch file on a disk-backed file system:
# under $TMP unless that is tmpfs (no block I/O), else under /var/tmp (the
# workloads that take it remove the file themselves).
disk_path()
{
	if [ "$(stat -f -c %T "$TMP")" = tmpfs ]; then
		echo "/var/tmp/wprof-$TEST_NAME.$$.$1"
	else
		echo "$TMP/$1"
	fi
}

# --- symbolization tests (tests/integration/sym_*.sh) ---

# i4_fold_sum_run FILE TAG_ERE COMM_ERE ERE...: weight (us) of lines with a
# run of adjacent frames matching the EREs in order, root to leaf: e.g.
# `outer` `helper_[[]i[]]` for helper inlined right under outer. EREs are
# anchored, as in fold_sum; these are passed as awk arguments, so a
# backslash is taken literally.
i4_fold_sum_run()
{
	local file=$1 tre=$2 cre=$3

	shift 3
	awk -v tre="^($tre)\$" -v cre="^($cre)\$" -v leaf="$FOLD_TAG_LEAF" '
	BEGIN {
		for (k = 2; k < ARGC; k++)
			s[k - 1] = "^(" ARGV[k] ")$"
		ns = ARGC - 2
		ARGC = 2
	}
	{
		sp = match($0, / [0-9]+$/)
		if (!sp)
			next
		w = substr($0, sp + 1)
		n = split(substr($0, 1, sp - 1), f, ";")
		if (leaf) { tag = f[n]; comm = f[1]; lo = 2; hi = n - 1 }
		else { tag = f[1]; comm = f[2]; lo = 3; hi = n }
		if (tag !~ tre || comm !~ cre)
			next
		for (i = lo; i + ns - 1 <= hi; i++) {
			for (k = 1; k <= ns; k++)
				if (f[i + k - 1] !~ s[k])
					break
			if (k > ns) {
				sum += w
				break
			}
		}
	}
	END { printf "%.0f\n", sum }' "$file" "$@"
}

# i4_heaviest FILE LINE_ERE [N]: the N (default 3) heaviest lines matching
# LINE_ERE, for the log (frame names may hold spaces: the weight is the
# last field); the middle of lines over 300 characters is left out.
i4_heaviest()
{
	grep -E "$2" "$1" | awk '{ print $NF "\t" $0 }' | sort -rn | head -"${3:-3}" | cut -f2- |
		awk '{ if (length($0) > 300) $0 = substr($0, 1, 100) " ... " substr($0, length($0) - 199)
		       print "#   " $0 }'
}

# i4_pct PART WHOLE: 100 * PART / WHOLE, 0 when WHOLE is 0.
i4_pct()
{
	awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f\n", b ? 100 * a / b : 0 }'
}

# i4_check_sym_call FILE COMM: the checks shared by the tests that profile
# tests/workloads/sym_call (PIE + libsymcall.so) through -p: its thread COMM
# loops { call_outer -> exe_static_step -> symlib_burn -> symlib_mix for
# 30 ms of CPU; symlib_nap -> symlib_nap_call -> nanosleep for 10 ms }.
# - >= 90% of COMM's on-CPU weight has the whole chain, adjacent, from the
#   program (call_outer, static exe_static_step) into the library
#   (symlib_burn, static symlib_mix). The other ~1% of the truth is in the
#   CPU-clock syscalls symlib_burn makes every ~100 us; 90% leaves room for
#   a few samples at the edges of each burst (nanosleep's return, the loop).
# - >= 95% of its off-cpu:sleep weight is under symlib_nap: it sleeps nowhere
#   else. A frame-pointer walk finds symlib_nap (symlib_nap_call is the
#   caller that libc's nanosleep hides), so this checks names, not CFI. The
#   5% is room for the edges of the window (one nap is 2% of the ~0.5 s
#   slept in 2 s).
# - no frame of COMM's stacks is left unnamed (`module+0xOFFSET`): its
#   program, library and vDSO all have symbols, and so have libc and the
#   loader where their debug files are installed (libc6-dbg, which holds
#   both). Without it, libc's local functions (start_thread) and the
#   loader's (_dl_fixup, under a thread's first call through a PLT slot
#   bound lazily) have no name on any machine: only libc.so.6+0x and
#   ld-linux-x86-64.so.2+0x frames may then be unnamed.
i4_check_sym_call()
{
	local file=$1 comm=$2 on chain sl nap bad allowed what

	on=$(fold_sum "$file" on-cpu "$comm")
	chain=$(i4_fold_sum_run "$file" on-cpu "$comm" call_outer exe_static_step symlib_burn symlib_mix)
	sl=$(fold_sum "$file" off-cpu:sleep "$comm")
	nap=$(fold_sum "$file" off-cpu:sleep "$comm" symlib_nap)
	log "$comm: on-CPU $on us, $chain us with call_outer;exe_static_step;symlib_burn;symlib_mix;" \
		"off-cpu:sleep $sl us, $nap us under symlib_nap"
	check "$comm has on-CPU weight ($on us)" test "$on" -gt 0
	check_ge "$comm: share of on-CPU weight in call_outer;exe_static_step;symlib_burn;symlib_mix (%)" \
		"$(i4_pct "$chain" "$on")" 90
	check "$comm has off-cpu:sleep weight ($sl us)" test "$sl" -gt 0
	check_ge "$comm: share of off-cpu:sleep weight under symlib_nap (%)" "$(i4_pct "$nap" "$sl")" 95
	# what may stay unnamed: nothing, or libc's frames without its debug file
	allowed='^$'
	what="no unnamed (module+0xOFFSET) frame in $comm's stacks"
	if ! libc_has_debug; then
		allowed='^(libc[.]so[.]6|ld-linux-x86-64[.]so[.]2)[+]0x'
		what="$what, libc's and the loader's aside (no debug file for libc6)"
	fi
	bad=$(i4_unnamed "$file" "$comm" | grep -Ev "$allowed" | vdso_named_only | head -5 |
		tr '\n' ' ')
	check "$what, the vDSO's code outside its functions aside (got: ${bad:-none})" \
		test -z "$bad"
}

# vdso_named_only: the frames of stdin but those `[vdso]+0xOFFSET` where no
# function of the vDSO's symbol table is (this machine's vDSO, copied from
# a process's memory): code of its own no symbol names, such as the
# paravirtual clock read of a VM's (0x780-0x80f here, under clock_gettime).
vdso_named_only()
{
	"$PYTHON" -c '
import re, subprocess, sys
for l in open("/proc/self/maps"):
	if l.rstrip().endswith("[vdso]"):
		lo, hi = (int(x, 16) for x in l.split()[0].split("-"))
		with open("/proc/self/mem", "rb") as m:
			m.seek(lo)
			open(sys.argv[1], "wb").write(m.read(hi - lo))
out = subprocess.run(["readelf", "-sW", sys.argv[1]], capture_output=True, text=True).stdout
funcs = [(int(f[1], 16), int(f[1], 16) + int(f[2])) for f in (l.split() for l in out.splitlines())
	 if len(f) > 3 and f[3] == "FUNC"]
for fr in sys.stdin.read().split():
	m = re.fullmatch(r"\[vdso\]\+0x([0-9a-f]+)", fr)
	if m and funcs and not any(a <= int(m.group(1), 16) < b for a, b in funcs):
		continue
	print(fr)
' "$TMP/vdso.so"
}

# libc_has_debug: the debug file of the libc that the workloads use is
# installed where libc6-dbg puts it (by build-id under /usr/lib/debug), so
# that wprof can name libc's local functions too.
libc_has_debug()
{
	local libc id

	libc=$(ldd "$WORKLOADS/sleepburn" 2>/dev/null | awk '$1 == "libc.so.6" { print $3 }')
	[ -n "$libc" ] || return 1
	id=$(readelf -n "$libc" 2>/dev/null | awk '/Build ID:/ { print $3 }')
	[ -n "$id" ] && [ -e "/usr/lib/debug/.build-id/${id:0:2}/${id:2}.debug" ]
}

# i4_unnamed FILE COMM_ERE: the distinct frames of COMM_ERE's stacks that
# wprof could not name (`module+0xOFFSET`, `[unmapped]`), one a line.
i4_unnamed()
{
	awk -v cre="^($2)\$" -v leaf="$FOLD_TAG_LEAF" '
	{
		sp = match($0, / [0-9]+$/)
		if (!sp)
			next
		n = split(substr($0, 1, sp - 1), f, ";")
		if (leaf) { comm = f[1]; lo = 2; hi = n - 1 }
		else { comm = f[2]; lo = 3; hi = n }
		if (comm !~ cre)
			next
		for (i = lo; i <= hi; i++)
			if ((f[i] ~ /[+]0x[0-9a-f]+$/ || f[i] == "[unmapped]") && !(f[i] in seen)) {
				seen[f[i]] = 1
				print f[i]
			}
	}' "$1"
}
