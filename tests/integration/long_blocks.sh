#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Every off-CPU interval of at least --long-block (default 100 ms) is kept
# one by one in the JSON output's "long_blocks". `wprof record --stats -o
# X.json -- stalls -n 6`: its thread "staller" runs 6 rounds of { 150-900 ms
# of CPU; a nanosleep of 200-700 ms in stall_here(), no two alike }, and logs
# each stall as it saw it: CLOCK_REALTIME just before, and its length by
# CLOCK_MONOTONIC from just before to just after (so the wait for a CPU after
# the wakeup is in it, as it is in a block's duration_ns). That log is the
# ground truth. Checks:
# - per logged stall: exactly one long block of the staller starts within
#   2 ms of it (it leaves the CPU a few us after its clock read); it is a
#   sleep; its duration_ns is the logged length within 1% (>= 2 ms: the
#   clock reads are us from the switches, the wait for a CPU after the
#   wakeup is in both); its stack has stall_here. A block whose resume the
#   kernel gave no sched_switch event for may have no stack ("[no stack]",
#   see unseen_switches in tests/lib.sh): allowed as often as the --stats
#   summary reports such switches.
# - the staller's long sleeps are the logged stalls, no more, no fewer (it
#   blocks nowhere else for 100 ms); its long blocks with stall_here, plus
#   those matched with no stack, are as many.
# - the window (start_unix_ns, window_ns) holds every logged stall, within
#   the 2 ms allowed above; long_block_ns is 100 ms; nothing dropped or lost.
# - every long block agrees with itself: blocked_ns + runq_ns = duration_ns,
#   offset_ns = its start_unix_ns less the window's, the list sorted by
#   start, and at least long_block_ns unless still open at the window's end.
# - the slices (--slice 10ms, made longer past 128 of them by WPROF_SLICES=few:
#   at 1.28 s, 2.56 s and, should it get there, 5.12 s and 10.24 s) are 10 ms
#   times a power of 2, at least 4 (the command runs over 5 s), and at most
#   128 of them plus what the last second adds; each thread's slices stay
#   within their length and add up to its wall time, and the staller's sleep
#   by slice is where the log puts its stalls.
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"
require_bpf
require_workload stalls

# -d 40 is only a safety net: recording ends when the command exits (~6 s
# idle, ~10 s beside two CPU burners).
WPROF_SLICES=few run_wprof rec record --stats -d 40 --slice 10ms -o "$TMP/s.json" -o "$TMP/s.wprof" -- \
	"$WORKLOADS/stalls" -n 6 -l "$TMP/stalls.log"
check_wprof_ok rec
[ -s "$TMP/s.json" ] || fatal "no output"
nstalls=$(grep -c '^stall ' "$TMP/stalls.log")
check "stalls logged its 6 stalls (got $nstalls)" test "$nstalls" -eq 6
check_json "$TMP/s.json"
unseen=$(unseen_switches rec)

# One line per check: "1<TAB>what" passed, "0<TAB>what" failed, "#<TAB>text"
# for the log.
"$PYTHON" -c "$JSON_PY"'
log_path, unseen = sys.argv[2], int(sys.argv[3])
SLACK_NS = 2000000

def out(ok, what):
	print("%s\t%s" % ("1" if ok else "0", what))

tid, stalls = None, []
with open(log_path) as f:
	for line in f:
		w = line.split()
		if w[0] == "worker":
			tid = int(w[1])
		elif w[0] == "stall":
			stalls.append((int(w[1]), int(w[2])))
if tid is None:
	raise SystemExit("%s: no worker line" % log_path)
for k in ("start_unix_ns", "window_ns", "long_block_ns", "long_blocks", "counters"):
	if k not in j:
		raise SystemExit("json: no %r" % k)
w0, wn, lbs = j["start_unix_ns"], j["window_ns"], j["long_blocks"]
mine = [b for b in lbs if b["tid"] == tid]
print("#\twindow %d + %d ns; %d long blocks, %d of the staller (tid %d)" %
      (w0, wn, len(lbs), len(mine), tid))

nostack = 0
for i, (start, length) in enumerate(stalls):
	near = [b for b in mine if abs(b["start_unix_ns"] - start) <= SLACK_NS]
	what = "stall %d (%.3f ms logged at +%.3f s): %d long blocks of the staller start within 2 ms" % \
		(i + 1, length / 1e6, (start - w0) / 1e9, len(near))
	if len(near) != 1:
		out(False, what + " (want 1)")
		continue
	b = near[0]
	st = b["stack"]
	has = "stall_here" in st
	if not has and st == ["[no stack]"]:
		nostack += 1
	ok = b["state"] == "sleep" and abs(b["duration_ns"] - length) <= length / 100 and \
		(has or st == ["[no stack]"]) and b["open"] is False
	what += ": %+.3f ms, %s, duration %.3f ms (%+.3f ms, want +/- 1%%), runq %.3f ms, %s%s" % \
		((b["start_unix_ns"] - start) / 1e6, b["state"], b["duration_ns"] / 1e6,
		 (b["duration_ns"] - length) / 1e6, b["runq_ns"] / 1e6,
		 "stack with stall_here" if has else "stack " + ";".join(st[-8:]),
		 ", open" if b["open"] is not False else "")
	out(ok, what)
	if i == 0:
		print("#\tits stack: %s" % ";".join(st))

sleeps = [b for b in mine if b["state"] == "sleep"]
here = [b for b in mine if "stall_here" in b["stack"]]
out(len(sleeps) == len(stalls),
    "the staller long sleeps %d times, as it logged (%d)" % (len(sleeps), len(stalls)))
out(len(here) + nostack == len(stalls),
    "its long blocks with stall_here (%d) and those with no stack (%d) are its %d stalls" %
    (len(here), nostack, len(stalls)))
out(nostack <= unseen, "stalls with no stack: %d (want <= %d, the switches the summary says were unseen)" %
    (nostack, unseen))
if stalls:
	first = min(s for s, _ in stalls)
	last = max(s + n for s, n in stalls)
	out(w0 - SLACK_NS <= first and last <= w0 + wn + SLACK_NS,
	    "the window holds the stalls, within 2 ms (first starts at %+.3f ms, last ends %.3f ms before its end)" %
	    ((first - w0) / 1e6, (w0 + wn - last) / 1e6))
out(j["long_block_ns"] == 100000000, "long_block_ns is the default 100 ms (%d)" % j["long_block_ns"])
c = j["counters"]
out(c.get("long_blocks_dropped") == 0 and c.get("long_blocks_lost") == 0,
    "no long block dropped (%s) or lost (%s)" % (c.get("long_blocks_dropped"), c.get("long_blocks_lost")))

bad = []
prev = None
for b in lbs:
	what = "tid %s at %s" % (b.get("tid"), b.get("offset_ns"))
	if b["blocked_ns"] + b["runq_ns"] != b["duration_ns"]:
		bad.append("%s: blocked_ns %d + runq_ns %d != duration_ns %d" %
			   (what, b["blocked_ns"], b["runq_ns"], b["duration_ns"]))
	if b["offset_ns"] != b["start_unix_ns"] - w0:
		bad.append("%s: offset_ns != start_unix_ns - window start (%d)" %
			   (what, b["start_unix_ns"] - w0))
	if not b["open"] and b["duration_ns"] < j["long_block_ns"]:
		bad.append("%s: duration_ns %d < long_block_ns" % (what, b["duration_ns"]))
	if b["state"] not in ("sleep", "disk", "runqueue") or not isinstance(b["open"], bool):
		bad.append("%s: state %r, open %r" % (what, b["state"], b["open"]))
	if prev is not None and b["start_unix_ns"] < prev:
		bad.append("%s: before the block listed ahead of it" % what)
	prev = b["start_unix_ns"]
out(not bad, "each of the %d long blocks agrees with itself (durations, offsets, order)%s" %
    (len(lbs), ": " + "; ".join(bad[:4]) if bad else ""))

# Each thread time by slice: no slice holds more than the slice (its
# states each rounded to the us), and its slices add up to its wall time
# (rounded once per slice and state); the staller sleep in the slices
# the log puts each stall in is the stall time there (to 0.2 ms a slice,
# beyond its wait for a CPU there, which the log counts in the stall).
sl = j["slice_ns"] // 1000
cols = ("on_cpu_us", "steal_us", "runqueue_us", "throttled_us", "sleep_us", "disk_us")
walls = {t["tid"]: t["wall_us"] for p in j["processes"] for t in p["threads"]}
bad = []
for t in j["slices"]:
	per = [sum(x) for x in zip(*(t[c] for c in cols))]
	over = [i for i, v in enumerate(per) if v > sl + 3]
	if over:
		bad.append("tid %d: slice %d holds %d us" % (t["tid"], over[0], per[over[0]]))
	w = walls.get(t["tid"])
	if w is None or abs(sum(per) - w) > 3 * len(per) + 2:
		bad.append("tid %d: slices sum to %d us, wall_us %s" % (t["tid"], sum(per), w))
k, nsl = j["slice_ns"] // 10000000, -(-j["window_us"] * 1000 // j["slice_ns"])
out(j["slice_ns"] % 10000000 == 0 and k >= 4 and k & (k - 1) == 0 and
    nsl <= 128 + 1000000000 // j["slice_ns"] + 1,
    "the slices were made longer: %d ms, %d of them" % (j["slice_ns"] // 1000000, nsl))
out(len(j["slices"]) >= 2 and not bad,
    "threads by slice (slice_ns %d, %d threads): within their slices, adding up to their wall time%s" %
    (j["slice_ns"], len(j["slices"]), ": " + "; ".join(bad[:4]) if bad else ""))
mine_sl = [t for t in j["slices"] if t["tid"] == tid]
if mine_sl:
	sleep = mine_sl[0]["sleep_us"]
	want = [0] * len(sleep)
	for start, length in stalls:
		a, b = (start - w0) / 1e3, (start + length - w0) / 1e3
		for i in range(len(want)):
			want[i] += max(0, min(b, (i + 1) * sl) - max(a, i * sl))
	# the log ends a stall once the thread runs again: after its wait for a CPU
	rq = mine_sl[0]["runqueue_us"]
	worst = max(abs(x - y) - r for x, y, r in zip(sleep, want, rq))
	out(worst <= 200, "the staller sleeps by slice where its log puts its stalls (worst slice off by %.0f us beyond its runqueue time)" % worst)
else:
	out(False, "the staller has its time by slice")
' "$TMP/s.json" "$TMP/stalls.log" "$unseen" >"$TMP/checks" 2>"$TMP/checks.err"
rc=$?
sed 's/^/#   /' "$TMP/checks.err" | head -10
check "the long-block checks ran (python exit $rc)" test "$rc" -eq 0
while IFS=$'\t' read -r res what; do
	case $res in
	'#') log "$what" ;;
	*) check "$what" test "$res" = 1 ;;
	esac
done <"$TMP/checks"
# --from/--to around one stall (the third: 622 ms), rounded out to the
# slices (160 ms at most): that stall's off-CPU time under stall_here, to 1%
# of its logged length (the wait for a CPU after it included, as in the log),
# and none of the others' (174 ms of CPU before it, 511 after); the range's
# window is the slices it covers.
read -r w0 < <(json_eval "$TMP/s.json" 'j["start_unix_ns"]')
read -r st len < <(awk '$1 == "stall" { if (++n == 3) print $2, $3 }' "$TMP/stalls.log")
from=$(awk -v s="$st" -v w="$w0" 'BEGIN { printf "%.6f", (s - w) / 1e9 }')
to=$(awk -v s="$st" -v l="$len" -v w="$w0" 'BEGIN { printf "%.6f", (s + l - w) / 1e9 }')
run_wprof range report "$TMP/s.wprof" --from "$from" --to "$to" -f json -o "$TMP/range.json"
check_wprof_ok range
check_json "$TMP/range.json"
got=$(json_eval "$TMP/range.json" 'sum(s["total_us"] for s in j["stacks"]
	if s["tag"].startswith("off-cpu") and "stall_here" in s["frames"])')
win=$(json_eval "$TMP/range.json" 'j["window_us"]')
log "stall 3: ${len} ns logged from +${from} s; --from $from --to $to: ${got:-?} us under stall_here, window ${win:-?} us"
check "--from/--to around stall 3: its time under stall_here is its logged length within 1% ($got us vs $((len / 1000)) us)" \
	awk -v g="${got:-0}" -v l="$len" 'BEGIN { d = g * 1000 - l; exit !(d <= l / 100 && -d <= l / 100) }'
over=$(json_eval "$TMP/range.json" '[t["tid"] for p in j["processes"] for t in p["threads"] if t["wall_us"] > j["window_us"]]')
check "--from/--to: no thread has more time than the range (${over:-none over})" test -z "$over"
sl=$(json_eval "$TMP/s.json" 'j["slice_ns"] // 1000')
check "--from/--to: the range's window is whole $((sl / 1000)) ms slices around the stall (${win} us)" \
	awk -v w="${win:-0}" -v l="$len" -v s="${sl:-1}" \
	'BEGIN { exit !(w * 1000 >= l && w * 1000 <= l + 2000 * s && w % s == 0) }'
finish
