#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Stacks of a real FP-less program against gdb: redis-server (Debian's,
# built without frame pointers, linked to libjemalloc). Started on a unix
# socket only (port 0), no persistence, in $TMP. It runs three bio threads
# (bio_close_file, bio_aof_fsync, bio_lazy_free) that wait in
# pthread_cond_wait under bioProcessBackgroundJobs, and jemalloc's
# background thread (jemalloc_bg_thd), which waits in the same libc
# function under jemalloc's own functions: the case where a profiler that
# reuses the callers of one thread blocked in an FP-less function for
# another shows jemalloc_bg_thd under bioProcessBackgroundJobs.
#
# Truth: gdb's backtrace of each thread that did not run between the two
# reads of its context switches around the 2 s window (stackcmp.py; the
# main thread wakes every 100 ms for serverCron and is not compared).
# Checks: every such thread's wprof stack equals gdb's frame for frame; the
# 3 bio threads and jemalloc_bg_thd are among them.
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"
# shellcheck source=tests/lib_real.sh
. "$(dirname "$0")/../lib_real.sh"
require_bpf
rs_require_gdb
rs_need_cmd redis-server redis-server
rs_need_cmd redis-cli redis-tools

sock=$TMP/redis.sock
start_bg "$TMP/redis.log" redis-server --port 0 --unixsocket "$sock" --save '' \
	--appendonly no --dir "$TMP" --daemonize no --logfile ''
pid=$BG_PID
log "$(redis-server --version)"
for _ in $(seq 50); do
	[ "$(redis-cli -s "$sock" ping 2>/dev/null)" = PONG ] && break
	sleep 0.1
done
[ "$(redis-cli -s "$sock" ping 2>/dev/null)" = PONG ] ||
	fatal "redis-server did not answer on $sock: $(tail -3 "$TMP/redis.log")"
log "threads: $(rs_switches "$pid" | awk '{ print $2 "=" $5 }' | tr '\n' ' ')"
rs_wait_quiet "$pid" 'bio_.*|jemalloc_bg_thd' 500 10 || log "redis's helper threads never went quiet"

rs_check_blocked "$pid" --label "$pid=redis-server" --need 'comm=bio_.*:3' \
	--need 'comm=jemalloc_bg_thd:1'
finish
