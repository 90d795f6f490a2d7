#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# JIT frames named from a perf map: node --perf-basic-prof writes
# /tmp/perf-PID.map, one line per compiled JavaScript function. A script
# calls hotJsLoop() (100000 rounds of integer arithmetic a call) in a loop
# for 30 s; 0.5 s after it starts (time for V8 to compile hotJsLoop: it is
# optimized after a few ms of calls), it is recorded with
# `-p PID -F 499 -d 2`. V8's compiled code keeps frame pointers, so the
# frame-pointer walk goes through the JavaScript frames.
#
# Truth: node's main thread spends its time in hotJsLoop; between calls the
# top-level loop only reads Date.now(). (With --no-turbo-inlining: else V8
# may compile the top-level loop with hotJsLoop inlined into it, a JIT frame
# of its own, "JS:* hot.js:1:1": 12.6% of the weight in one CI run.) hotJsLoop works on small integers,
# so it allocates nothing and the garbage collector and the compiler
# threads stay idle once it is optimized. Check: >= 90% of the process's
# on-CPU weight (all threads) has a frame matching hotJsLoop with the JIT
# suffix _[j] (measured 99.7%; ~1000 samples make the noise < 1 point; the
# rest is room for a late recompilation or a collection on another thread).
# Then the same script without --perf-basic-prof: its JIT frames are
# [anon]+0x..., and the summary says node's JIT code is named with
# --perf-basic-prof.
#
# Needs node (Debian package nodejs). Without it the test is skipped, and
# under CI=true (where every dependency is installed) it fails.
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"
require_bpf
NODE=$(command -v node)
if [ -z "$NODE" ]; then
	[ "${CI:-}" = true ] && fatal "node is not installed (Debian package nodejs)"
	skip "node is not installed (Debian package nodejs)"
fi
log "$NODE $("$NODE" --version)"

cat >"$TMP/hot.js" <<'JS'
'use strict';
function hotJsLoop(n) {
	let acc = 0;
	for (let i = 0; i < n; i++)
		acc = (acc * 31 + i) % 1000003;
	return acc;
}
const end = Date.now() + 1000 * Number(process.argv[2]);
let sink = 0;
console.log('ready ' + process.pid);
while (Date.now() < end)
	sink += hotJsLoop(100000);
console.log('done ' + sink);
JS

# In $TMP: --perf-basic-prof also makes V8 write an isolate-*-v8.log into
# the working directory. env execs node, so BG_PID is node's pid.
start_bg "$TMP/node.log" env -C "$TMP" "$NODE" --perf-basic-prof --no-turbo-inlining "$TMP/hot.js" 30
pid=$BG_PID
map=/tmp/perf-$pid.map
wait_line "$TMP/node.log" '^ready [0-9]+$' 20 || fatal "node did not start: $(head -3 "$TMP/node.log")"
sleep 0.5
run_wprof rec record -p "$pid" -F 499 -d 2 -o "$TMP/out.folded"
check_wprof_ok rec
check "node still runs after wprof detached" kill -0 "$pid"
kill -TERM "$pid"
wait_exit "$pid" 5 || fatal "node ignored SIGTERM"
# node leaves its perf map behind; keep a copy with the evidence
if [ -f "$map" ]; then
	grep hotJsLoop "$map" | sed 's/^/#   perf map: /'
	mv "$map" "$TMP/"
else
	fatal "node wrote no $map"
fi
[ -s "$TMP/out.folded" ] || fatal "no output"
check_folded "$TMP/out.folded"
i4_heaviest "$TMP/out.folded" '^on-cpu;' 2

on=$(fold_sum "$TMP/out.folded" on-cpu '.*')
hot=$(fold_sum "$TMP/out.folded" on-cpu '.*' '.*hotJsLoop.*_[[]j[]]')
log "node: on-CPU $on us, $hot us with a hotJsLoop_[j] frame"
check_ge "node on-CPU weight (us)" "$on" 1000000
check_ge "share of node's on-CPU weight with a hotJsLoop JIT frame (_[j]) (%)" \
	"$(i4_pct "$hot" "$on")" 90

# Without --perf-basic-prof the JIT code has no names ([anon]+0x...): the
# summary's line of unnamed frames says which runtime and what flag names them.
start_bg "$TMP/bare.log" env -C "$TMP" "$NODE" --no-turbo-inlining "$TMP/hot.js" 30
pid=$BG_PID
wait_line "$TMP/bare.log" '^ready [0-9]+$' 20 || fatal "node did not start: $(head -3 "$TMP/bare.log")"
sleep 0.5
run_wprof bare record -p "$pid" -F 499 -d 1 -o "$TMP/bare.folded"
check_wprof_ok bare
kill -TERM "$pid"
wait_exit "$pid" 5 || fatal "node ignored SIGTERM"
anon=$(grep -c '\[anon\]+0x' "$TMP/bare.folded" || true)
hint=$(grep '^wprof: frames without symbol names, by file:' "$TMP/bare.err" || true)
log "without a perf map: $anon lines with [anon] frames; $hint"
check "node's JIT frames are [anon] without a perf map ($anon lines)" test "$anon" -gt 0
check "the summary names node's JIT code and --perf-basic-prof" \
	bash -c "echo \"\$1\" | grep -q 'node [0-9]* (its JIT code: start node with --perf-basic-prof)'" \
	_ "$hint"
finish
