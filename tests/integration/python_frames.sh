#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Python frames: a threaded Python program (tests/workloads/pythreads.py)
# whose threads nap, wait for a lock and compute, several functions deep,
# is recorded 3 s (`-p PID -f json`) under Debian's python3 and under every
# other CPython 3.10 to 3.13 installed (pyenv's). Ground truth: what Python
# itself says each thread runs (sys._current_frames(), read 100 times a
# second by the program over the same seconds). Checks, per interpreter:
# - the sleeper's and the waiter's off-CPU time is 95% or more under their
#   own Python call path (the qualnames, 3.10: the names, in order, root
#   first, exactly as Python gives them), with the native frames kept below
#   it where blocked (the sleep's clock_nanosleep, 3.10: select, or the
#   futex wait for the interpreter's lock after it; the lock's futex wait),
#   90% or more of it at the lines Python gives for each frame;
# - the burner's on-CPU time is 90% or more under burn_leaf;
# - nothing lost to the Python frames (no [py: ...] frame);
# - the summary's longest blocks name the Python function they were in.
# A CPython 3.9 installed: the summary names its version as one whose
# frames are not read, and its stacks have no Python frame. And a program
# `wprof record -- python3` starts, which makes new code as it runs (as an
# import does) and ends first: its sleep in that code is named, as long as
# the program's own clock says it slept.
# test-timeout: 180
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"
require_bpf

workload=$(dirname "$0")/../workloads/pythreads.py
pythons=()
[ -x /usr/bin/python3 ] || fatal "no /usr/bin/python3 (make deps installs it)"
pythons+=(/usr/bin/python3)
# and one older (3.9, if there), whose frames are not read
for p in "$HOME"/.pyenv/versions/3.*/bin/python3.[0-9]*; do
	[[ $p =~ python3\.(9|1[0-3])$ ]] || continue
	[ -x "$p" ] && pythons+=("$p")
done

# one PYTHON: its checks
one() {
	local py=$1 n=$2 ver pid
	local log=$TMP/w$n.log truth=$TMP/truth$n.txt out=$TMP/out$n.json err=$TMP/rec$n.err

	ver=$("$py" -c 'import sys; print("%d.%d" % sys.version_info[:2])')
	start_bg "$log" "$py" "$workload" -n 6 -d 5.5 -o "$truth"
	pid=$BG_PID
	wait_line "$log" '^ready$' 15 || fatal "$py: the workload did not start"
	run_wprof "rec$n" record -p "$pid" -d 3 -f json -o "$out"
	check_wprof_ok "rec$n"
	wait_exit "$pid" 20 || true
	[ -s "$truth" ] || fatal "$py: the workload wrote no ground truth"
	case $ver in
	3.1[0-3]) ;;
	*)
		check "$py ($ver): the summary says its frames are not read" \
			grep -q "CPython $ver, whose frames wprof cannot read" "$TMP/rec$n.err"
		check "$py ($ver): no Python frame" sh -c "! grep -q '\\.py:[0-9]*)' '$out'"
		return
		;;
	esac
	# the summary's longest blocks (the holder's naps, the waiter's waits: 0.2 s each)
	local blocks bad
	blocks=$(grep -cE '^wprof:   [0-9.]+ s [a-z]+ at ' "$TMP/rec$n.err")
	bad=$(grep -E '^wprof:   [0-9.]+ s [a-z]+ at ' "$TMP/rec$n.err" |
		grep -vE ' under [^ ]+ \((pythreads|threading)\.py(:[0-9]+)?\)$' | head -2)
	check "$py ($ver): the summary's $blocks longest blocks name the Python function they were in (bad: ${bad:-none})" \
		test "$blocks" -gt 0 -a -z "$bad"
	while IFS= read -r line; do
		case $line in
		"check ok: "*) ok "$1 ($ver): ${line#check ok: }" ;;
		"check bad: "*) not_ok "$1 ($ver): ${line#check bad: }" ;;
		*) log "$line" ;;
		esac
	done < <("$PYTHON" "$TMP/eval.py" "$out" "$truth" "$log")
}

cat >"$TMP/eval.py" <<'PY'
import json, re, sys
out, truth, log = sys.argv[1:4]
j = json.load(open(out))
tids = {l.split()[1]: int(l.split()[2]) for l in open(log) if l.startswith("thread ")}
want = {}
for l in open(truth):
    tid, c, n = l.split()
    tid, n = int(tid), int(n)
    if n > want.get(tid, ("", 0))[1]:
        want[tid] = ([f.split("@") for f in c.split(";")], n)
py = re.compile(r"^(.*) \([^()]*\.py(?::(\d+))?\)$")

def pyframes(s, lines=False):
    return [[py.match(f).group(1), py.match(f).group(2)] if lines else py.match(f).group(1)
            for f in s["frames"] if py.match(f)]

def after_python(s):
    last = max(i for i, f in enumerate(s["frames"]) if py.match(f))
    return s["frames"][last + 1:]

# the sleep (3.10: select), or the wait for the interpreter's lock after it; the lock
natives = {"sleeper": re.compile("clock_nanosleep|select|futex"), "waiter": re.compile("futex")}
for role in ("sleeper", "waiter"):
    native = natives[role]
    other = {}
    tid = tids[role]
    path = [q for q, line in want[tid][0]]
    ss = [s for s in j["stacks"] if s["tid"] == tid and s["tag"].startswith("off-cpu")]
    tot = sum(s["total_us"] for s in ss)
    mine = [s for s in ss if pyframes(s) == path]
    lined = sum(s["total_us"] for s in mine if pyframes(s, True) == want[tid][0])
    for s in ss:
        if pyframes(s) != path:
            k = ";".join(s["frames"][-14:])
            other[k] = other.get(k, 0) + s["total_us"]
    for k, v in sorted(other.items(), key=lambda x: -x[1])[:3]:
        print("%s, elsewhere: %d us in ...%s" % (role, v, k))
    good = sum(s["total_us"] for s in mine)
    # blocked (not waiting for a CPU, which can come anywhere)
    slept = [s for s in mine if s["tag"] == "off-cpu:sleep"]
    good_sl = sum(s["total_us"] for s in slept)
    below = sum(s["total_us"] for s in slept if any(native.search(f) for f in after_python(s)))
    print("check %s: %s's off-CPU time under its Python path %s: %d of %d us" %
          ("ok" if tot and good >= 0.95 * tot else "bad", role, ";".join(path), good, tot))
    print("check %s: ... blocked there with %s among the native frames below it: %d of %d us" %
          ("ok" if good_sl and below >= 0.95 * good_sl else "bad", native.pattern, below, good_sl))
    print("check %s: ... at the lines Python gives (%s): %d of %d us" %
          ("ok" if good and lined >= 0.9 * good else "bad",
           ";".join("%s:%s" % (q, l) for q, l in want[tid][0][-3:]), lined, good))
tid = tids["burner"]
ss = [s for s in j["stacks"] if s["tid"] == tid and s["tag"] == "on-cpu"]
tot = sum(s["total_us"] for s in ss)
good = sum(s["total_us"] for s in ss if "burn_leaf" in pyframes(s))
print("check %s: burner's on-CPU time under burn_leaf: %d of %d us" %
      ("ok" if tot and good >= 0.9 * tot else "bad", good, tot))
cut = [f for s in j["stacks"] for f in s["frames"] if f.startswith("[py:")]
print("check %s: no [py: ...] frame (%d)" % ("ok" if not cut else "bad", len(cut)))
PY
n=0
for py in "${pythons[@]}"; do
	one "$py" "$n"
	n=$((n + 1))
done

# A program started by wprof that makes new code (as an import does) while
# it runs and ends before the recording does: its sleep in the new code is
# named, as long as its own clock says it slept (to 10%, on a busy machine
# the wait for a CPU after it too).
run_wprof short record -o "$TMP/short.folded" -- /usr/bin/python3 \
	"$(dirname "$0")/../workloads/pyshort.py" -s 0.5
check_wprof_ok short
slept=$(awk '$1 == "slept" { print int($2 / 1000) }' "$TMP/short.out")
named=$(awk '$0 ~ /;<module> \(pyshort\.py:[0-9]+\);main \(pyshort\.py:[0-9]+\);late_phase \(latemod\.py:[0-9]+\);late_leaf \(latemod\.py:[0-9]+\);/ &&
	/^off-cpu:/ { s += $NF } END { print s + 0 }' "$TMP/short.folded")
check_near "an ended program's sleep in code made while it ran, under <module>;main;late_phase;late_leaf (us)" \
	"$named" "${slept:-x}" "$(calc "${slept:-0} / 10")"
finish
