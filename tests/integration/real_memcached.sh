#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Stacks of a real, stripped, FP-less program against gdb: Debian's
# memcached, with 4 worker threads, on a unix socket. Its binary has no
# .symtab, so every frame of its own is named by file and offset. Four of its
# threads block in one libc function, pthread_cond_wait, each under another
# of memcached's functions (mc-log, mc-assocmaint, mc-itemcrawler,
# mc-slabmaint in Debian 12's 1.6.18): a profiler that
# gives one thread blocked in an FP-less libc function another's callers
# shows them all under one caller. The four mc-worker threads and the main
# thread wait in epoll_wait under libevent's event_base_loop, from two
# different callers. A few requests go through before the recording, so
# the workers have served and gone back to their loop.
#
# Truth: gdb's backtrace of each thread that did not run between the two
# reads of its context switches around the 2 s window (stackcmp.py;
# mc-lrumaint naps in a loop and is not compared).
# Checks: every such thread's wprof stack equals gdb's frame for frame; at
# least 3 pthread_cond_wait threads and the 4 mc-worker threads are among
# them.
# Then under load: two clients, each on a connection of its own (so two
# workers), send get requests in a loop with a 0.2 ms nap between, and
# every thread's on-CPU and run-queue time over 2 s is checked against its
# schedstat (tests/tools/schedcmp.py, as in real_schedstat.sh), with at
# least 2 threads that ran 300 times or more in the window.
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"
# shellcheck source=tests/lib_real.sh
. "$(dirname "$0")/../lib_real.sh"
require_bpf
rs_require_gdb
rs_need_cmd memcached memcached

sock=$TMP/memcached.sock
# -u: memcached refuses to run as root without a user to run as
start_bg "$TMP/memcached.log" memcached -u root -s "$sock" -a 0700 -t 4 -m 16
pid=$BG_PID
log "$(memcached -V)"
# mc_request TEXT: send TEXT, print the answer (memcached's text protocol)
mc_request()
{
	"$RS_PYTHON" -c '
import socket, sys
s = socket.socket(socket.AF_UNIX)
s.settimeout(5)
s.connect(sys.argv[1])
s.sendall(sys.argv[2].encode())
print(s.recv(4096).decode(errors="replace").strip())' "$sock" "$1" 2>&1
}
for _ in $(seq 50); do
	[ -S "$sock" ] && mc_request $'version\r\n' | grep -q '^VERSION' && break
	sleep 0.1
done
mc_request $'version\r\n' | grep -q '^VERSION' ||
	fatal "memcached did not answer on $sock: $(tail -3 "$TMP/memcached.log")"
# each connection goes to the next worker: one request for each
for i in 1 2 3 4; do
	answer=$(mc_request $'set k'"$i"$' 0 0 5\r\nhello\r\n')
	[ "$answer" = STORED ] || fatal "memcached did not store k$i: $answer"
done
log "threads: $(rs_switches "$pid" | awk '{ print $2 "=" $5 }' | tr '\n' ' ')"
rs_wait_quiet "$pid" 'mc-worker|mc-log|mc-assocmaint|mc-itemcrawler|mc-slabmaint' 500 10 ||
	log "memcached's threads never went quiet"

rs_check_blocked "$pid" --label "$pid=memcached" --need 'comm=mc-worker:4' \
	--need 'comm=mc-log|mc-assocmaint|mc-itemcrawler|mc-slabmaint:3'

if [ ! -r "/proc/$$/schedstat" ]; then
	log "the kernel has no schedstat (CONFIG_SCHED_INFO): times under load not checked"
	finish
fi
cat >"$TMP/client.py" <<'PY'
import socket, sys, time
s = socket.socket(socket.AF_UNIX)
s.settimeout(5)
s.connect(sys.argv[1])
print("ready", flush=True)
end = time.monotonic() + 30
while time.monotonic() < end:
	s.sendall(b"get k1\r\n")
	data = b""
	while not data.endswith(b"END\r\n"):
		chunk = s.recv(4096)
		if not chunk:
			sys.exit("memcached closed the connection")
		data += chunk
	time.sleep(0.0002)
PY
for c in 1 2; do
	start_bg "$TMP/client$c.log" "$RS_PYTHON" "$TMP/client.py" "$sock"
	wait_line "$TMP/client$c.log" '^ready$' 10 || fatal "client $c did not start: $(head -3 "$TMP/client$c.log")"
done
sleep 0.5
log "memcached under load"
rs_schedcmp load "$pid" --label "$pid=memcached" --need "$pid:2:300"
rc=$?
check "schedcmp.py: every memcached thread within its bounds, two busy enough" test "$rc" -eq 0
finish
