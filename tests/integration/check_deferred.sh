#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# The user stack of an off-CPU interval is walked as its thread gets the CPU
# back (sched_exit_tp, in the thread's own context), not when it leaves:
# that is sound only if nothing changes the thread's user registers or the
# frames they point to while it is off the CPU. Checked on real programs
# under load, which block and wake in many ways: redis-server under
# redis-benchmark (epoll, its bio threads), a Go net/http server under
# requests (futex parking, goroutine stack switches, preemption), python3
# threads passing a queue (the GIL's condition variable, sleeps), and a
# C workload that blocks, sleeps and burns (tests/workloads/mixed).
#
# Truth: a second walk of the same stack, at the other end of the interval:
# --check-deferred also walks each deferred user stack at switch-out, in the
# thread's context as it leaves the CPU, and counts the walks at resume that
# differ. Every interval is walked (--exact-above 0).
# Checks: at least 2000 intervals compared, none differed; no resume missed.
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"
# shellcheck source=tests/lib_real.sh
. "$(dirname "$0")/../lib_real.sh"
require_bpf
require_workload mixed
rs_need_cmd redis-server redis-server
rs_need_cmd redis-benchmark redis-tools
gohttp=$OUT/tests/fixtures/gohttp
[ -x "$gohttp" ] || fatal "$gohttp not built (run make test-bins; needs golang-go)"

pids=()
sock=$TMP/redis.sock
start_bg "$TMP/redis.log" redis-server --port 0 --unixsocket "$sock" --save '' \
	--appendonly no --dir "$TMP" --daemonize no --logfile ''
pids+=("$BG_PID")
gosock=$TMP/go.sock
start_bg "$TMP/gohttp.log" "$gohttp" "$gosock"
pids+=("$BG_PID")
start_bg "$TMP/py.log" "$RS_PYTHON" -c '
import queue, threading, time
q = queue.Queue()
def producer():
	while True:
		for i in range(50):
			q.put(i)
		time.sleep(0.002)
def consumer():
	while True:
		q.get()
for f in (producer, consumer, consumer):
	threading.Thread(target=f, daemon=True).start()
print("ready", flush=True)
time.sleep(3600)'
pids+=("$BG_PID")
start_bg "$TMP/mixed.log" "$WORKLOADS/mixed" -n 60
pids+=("$BG_PID")
wait_line "$TMP/gohttp.log" '^ready [0-9]+$' 10 || fatal "gohttp did not start: $(head -3 "$TMP/gohttp.log")"
wait_line "$TMP/py.log" '^ready' 10 || fatal "python3 did not start: $(head -3 "$TMP/py.log")"
for _ in $(seq 50); do
	[ -S "$sock" ] && break
	sleep 0.1
done

# load for the whole recording, stopped by the cleanup
start_bg "$TMP/bench.log" redis-benchmark -s "$sock" -c 4 -n 100000000 -q -t get,set
start_bg "$TMP/gets.log" bash -c "while :; do $(declare -f rs_http_get); RS_PYTHON=$RS_PYTHON rs_http_get $gosock >/dev/null; done"
sleep 0.5

run_wprof rec record --stats -p "$(IFS=,; echo "${pids[*]}")" -d 3 --exact-above 0 --check-deferred \
	-o "$TMP/out.folded"
check_wprof_ok rec
line=$(grep '^wprof: --check-deferred:' "$TMP/rec.err")
log "$line"
checked=$(echo "$line" | awk '{ print $3 }')
differed=$(echo "$line" | awk '{ for (i = 1; i <= NF; i++) if ($i == "differed") print $(i - 1) }')
is_num "$checked" && is_num "$differed" || fatal "no --check-deferred summary line"
check_ge "intervals compared" "$checked" 2000
check "no deferred walk differed from the walk at switch-out (got $differed of $checked)" \
	test "$differed" -eq 0
check "no resume was missed" bash -c "! grep -q 'did not resume the thread' '$TMP/rec.err'"
finish
