#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Who ran instead: for each thread's wait for a CPU, the threads that had
# the CPU meanwhile (`-f json` ran_instead, `-f threads` RAN_INSTEAD).
# Ground truth: the kernel's schedstat of every thread involved, read when
# wprof says its window is open and 5 s later (scaled to nothing: the
# tolerances cover the few ms between the two clocks).
#
# 1. runq's three spinners, pinned to CPU 0, never block, recorded with -p
#    for 5 s. A spinner is runnable all the time: whenever another thread
#    runs on CPU 0, it is waiting. So, for spinner A and each other spinner
#    B, A's ran_instead entry for B is B's run time over the window (within
#    10% + 20 ms), and each of the two has 35-65% of what A's entries give
#    the two. A's entries add up to its schedstat run delay over the window
#    within 10%, and [not known] is at most 10% of it. On a busy machine
#    other tasks on CPU 0 have their shares of the waits too: the run times
#    and the run delay say so as well, the shares among the two stay halves.
#    -f threads names the JSON's first three runners, in order; the summary
#    says the process waited behind its own threads first, for twice the
#    spinners' run times of their run delays (within 10 points).
# 2. One spinner of runq beside a hog, a shell loop run from a copy of sh
#    named ranhog (not a target), both on CPU 0: ranhog is the first entry
#    of the spinner's ran_instead, with the hog's pid, and its time is the
#    hog's run time over the window (within 10% + 20 ms); the summary names
#    it first.
# 3. WPROF_RAN_INSTEAD=off: no ran_instead; -f threads: RAN_INSTEAD is "-".
# test-timeout: 120
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"
require_bpf
require_workload runq

# measure OUT.json PIDS TIDS ENV...: records PIDS (-p, commas) for 5 s with
# ENV set; prints "tid run_ns delay_ns" per tid of TIDS (commas) over the window
measure()
{
	local out=$1 pids=$2 tids=$3

	shift 3
	env "$@" "$PYTHON" - "$WPROF" "$out" "$pids" "$tids" <<'EOF'
import subprocess, sys, time
wprof, out, pids, tids = sys.argv[1:5]
tids = [t.split(":") for t in tids.split(",")]

def read():
    r = {}
    for pid, tid in tids:
        with open("/proc/%s/task/%s/schedstat" % (pid, tid)) as f:
            r[tid] = [int(x) for x in f.read().split()[:2]]
    return r

p = subprocess.Popen([wprof, "record", "--stats", "-p", pids, "-d", "5", "-f", "json", "-o", out,
                      "-f", "threads", "-o", out + ".txt"], stderr=subprocess.PIPE, text=True)
err = []
for line in p.stderr:
    err.append(line)
    if line.startswith("wprof: recording"):
        a = read()
        time.sleep(5)
        b = read()
        break
err += p.stderr.readlines()
sys.stderr.write("".join(err))
if p.wait() != 0:
    sys.exit(1)
for pid, tid in tids:
    print(tid, b[tid][0] - a[tid][0], b[tid][1] - a[tid][1])
EOF
}

# ran OUT.json TID: "runner_tid us pid comm" a line (tab-separated), in order, of TID's
# ran_instead ([others]: tid -1, [not known]: -2; pid -1 for both)
ran()
{
	json_eval "$1" '["%s\t%d\t%s\t%s" % (e.get("tid", -1 if e["comm"] == "[others]" else -2), e["us"],
		e.get("pid", -1), e["comm"]) for e in thread_tid('"$2"').get("ran_instead", [])]'
}

JSON_PY+='
def thread_tid(tid):
	return next(t for t in threads() if t["tid"] == tid)
'

# --- 1. three spinners on one CPU
start_bg "$TMP/runq3.log" "$WORKLOADS/runq" -t 3 -n 40
wait_line "$TMP/runq3.log" '^ready$' 10 || fatal "runq did not start"
rpid=$BG_PID
mapfile -t spins < <(ps -L -o tid=,comm= -p "$rpid" | awk '$2 ~ /^spin[0-9]$/ { print $1 }')
[ "${#spins[@]}" = 3 ] || fatal "runq has not 3 spinners: ${spins[*]}"
tids=$(printf "$rpid:%s," "${spins[@]}")
measure "$TMP/three.json" "$rpid" "${tids%,}" >"$TMP/three.truth" 2>"$TMP/three.err" ||
	{ sed 's/^/#   /' "$TMP/three.err"; fatal "wprof failed (three spinners)"; }
sed 's/^/#   /' "$TMP/three.err" | head -20
check_json "$TMP/three.json"
declare -A RUN DELAY
while read -r t r d; do
	RUN[$t]=$r
	DELAY[$t]=$d
	log "spinner $t: schedstat run $((r / 1000)) us, run delay $((d / 1000)) us over the window"
done <"$TMP/three.truth"

for a in "${spins[@]}"; do
	ran "$TMP/three.json" "$a" >"$TMP/ran.$a" || fatal "no ran_instead for $a"
	log "ran_instead of $a: $(tr '\n' ' ' <"$TMP/ran.$a")"
	sum=$(awk -F'\t' '{ s += $2 } END { print s + 0 }' "$TMP/ran.$a")
	unknown=$(awk -F'\t' '$1 == -2 { print $2 }' "$TMP/ran.$a")
	check_near "$a: ran_instead adds up to its run delay (us)" "$sum" \
		"$((DELAY[$a] / 1000))" "$(calc "0.1 * ${DELAY[$a]} / 1000")"
	check_le "$a: [not known] (us)" "${unknown:-0}" "$(calc "0.1 * ${DELAY[$a]} / 1000")"
	pair=0
	for b in "${spins[@]}"; do
		[ "$b" = "$a" ] && continue
		got=$(awk -F'\t' -v t="$b" '$1 == t { print $2 }' "$TMP/ran.$a")
		check_near "$a: its entry for $b vs $b's run time (us)" "${got:-0}" \
			"$((RUN[$b] / 1000))" "$(calc "0.1 * ${RUN[$b]} / 1000 + 20000")"
		pair=$((pair + ${got:-0}))
	done
	for b in "${spins[@]}"; do
		[ "$b" = "$a" ] && continue
		got=$(awk -F'\t' -v t="$b" '$1 == t { print $2 }' "$TMP/ran.$a")
		share=$(calc "100 * ${got:-0} / ($pair ? $pair : 1)")
		check_ge "$a: $b's share of the other two's (%)" "$share" 35
		check_le "$a: $b's share of the other two's (%)" "$share" 65
	done
	got=$(awk -v t="$a" 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == "RAN_INSTEAD") c = i }
		$2 == t { print $c }' "$TMP/three.json.txt")
	# the table's names have no blank or comma (safe text, "_" for those)
	want=$(awk -F'\t' '$1 >= 0 && n++ < 3 { c = $4; gsub(/[ ,]/, "_", c)
		printf "%s%s/%s:", (n > 1 ? "," : ""), c, $1 }' \
		"$TMP/ran.$a")
	check "$a: -f threads names the JSON's first three, in order ($got; want $want)" \
		bash -c '[ "$(sed "s/[0-9]*%//g" <<<"$1")" = "$2" ]' _ "$got" "$want"
done
# the summary: the process waited behind its own threads for the spinners' run times, twice
line=$(grep -E '^wprof:   waited for a CPU [0-9.]+ s, behind: ' "$TMP/three.err")
own=$(sed -nE 's/.*behind: its own threads ([0-9.]+)%.*/\1/p' <<<"$line")
runs=$((RUN[${spins[0]}] + RUN[${spins[1]}] + RUN[${spins[2]}]))
delays=$((DELAY[${spins[0]}] + DELAY[${spins[1]}] + DELAY[${spins[2]}]))
want=$(calc "100 * 2 * $runs / $delays")
check_near "summary: waited behind its own threads first (${line:-no line}) (%)" "${own:-none}" \
	"$want" 10
kill "$rpid" 2>/dev/null

# --- 2. a hog beside a target
cp "$(command -v sh)" "$TMP/ranhog" || fatal "cannot copy sh"
start_bg "$TMP/hog.log" taskset -c 0 "$TMP/ranhog" -c 'while :; do :; done'
hog=$BG_PID
start_bg "$TMP/runq1.log" "$WORKLOADS/runq" -t 1 -n 40
wait_line "$TMP/runq1.log" '^ready$' 10 || fatal "runq did not start"
rpid=$BG_PID
spin=$(ps -L -o tid=,comm= -p "$rpid" | awk '$2 == "spin0" { print $1 }')
[ -n "$spin" ] || fatal "no spin0 in runq"
measure "$TMP/hog.json" "$rpid" "$rpid:$spin,$hog:$hog" >"$TMP/hog.truth" 2>"$TMP/hog.err" ||
	{ sed 's/^/#   /' "$TMP/hog.err"; fatal "wprof failed (hog)"; }
check_json "$TMP/hog.json"
ran "$TMP/hog.json" "$spin" >"$TMP/ran.hog" || fatal "no ran_instead for $spin"
log "ran_instead of $spin: $(tr '\n' ' ' <"$TMP/ran.hog")"
IFS=$'\t' read -r t us p c < <(head -1 "$TMP/ran.hog")
check "the hog is first in spin0's ran_instead (first: $c, tid $t, pid $p; hog $hog)" \
	test "$c" = ranhog -a "$t" = "$hog" -a "$p" = "$hog"
hogrun=$(awk -v t="$hog" '$1 == t { print $2 }' "$TMP/hog.truth")
check_near "the hog's entry vs its run time (us)" "${us:-0}" "$((hogrun / 1000))" \
	"$(calc "0.1 * $hogrun / 1000 + 20000")"
line=$(grep -E '^wprof:   waited for a CPU [0-9.]+ s, behind: ' "$TMP/hog.err")
check "summary: the hog first (${line:-no line})" grep -qE ": ranhog \(pid $hog\) [0-9.]+%" <<<"$line"
kill "$hog" 2>/dev/null

# --- 3. off
measure "$TMP/off.json" "$rpid" "$rpid:$spin" WPROF_RAN_INSTEAD=off >/dev/null 2>"$TMP/off.err" ||
	{ sed 's/^/#   /' "$TMP/off.err"; fatal "wprof failed (WPROF_RAN_INSTEAD=off)"; }
got=$(json_eval "$TMP/off.json" "sum('ran_instead' in t for t in threads())")
check "WPROF_RAN_INSTEAD=off: no thread has ran_instead (got $got)" test "$got" = 0
got=$(awk 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == "RAN_INSTEAD") c = i; next }
	!c || $c != "-"' "$TMP/off.json.txt" | wc -l)
check "WPROF_RAN_INSTEAD=off: RAN_INSTEAD is - in every row (others: $got)" test "$got" = 0
finish
