#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Stacks of a real C++ program against gdb: node, idle in a 60 s timer
# (node -e 'setTimeout(...)'), no socket at all. Its main thread waits in
# epoll_pwait under uv__io_poll, uv_run and node's startup functions; the
# V8 platform's worker threads wait in pthread_cond_wait under uv_cond_wait
# and node::(anonymous namespace)::PlatformWorkerThread; the delayed-task
# scheduler runs its own uv loop; the inspector's I/O thread waits in
# sem_wait under uv_sem_wait. Several threads blocked in the same libc
# function under different callers, in a binary whose C++ names wprof and
# gdb print differently (stackcmp.py normalizes that notation).
#
# Truth: gdb's backtrace of each thread that did not run between the two
# reads of its context switches around the 2 s window (stackcmp.py).
# Checks: every such thread's wprof stack equals gdb's frame for frame;
# every thread of node is among them.
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"
# shellcheck source=tests/lib_real.sh
. "$(dirname "$0")/../lib_real.sh"
require_bpf
rs_require_gdb
: "${NODE:=node}" # another node to profile, e.g. a wrapper that execs it
rs_need_cmd "$NODE" nodejs

start_bg "$TMP/node.log" "$NODE" -e 'console.log("ready " + process.pid); setTimeout(() => {}, 60000)'
pid=$BG_PID
wait_line "$TMP/node.log" '^ready [0-9]+$' 20 || fatal "node did not start: $(head -3 "$TMP/node.log")"
log "node $("$NODE" --version): threads $(rs_tids "$pid" | awk '{ print $2 }' | tr '\n' ' ')"
rs_wait_quiet "$pid" '.*' 500 10 || log "node never went quiet"

rs_check_blocked "$pid" --label "$pid=node" --need "pid=$pid"
finish
