#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Stacks of a real FP-less program against gdb: nginx (Debian's, built
# without frame pointers), a master and two worker processes serving a
# unix socket in $TMP (no TCP port), in the foreground (daemon off), its
# prefix, pid file, temp paths and logs in $TMP. The master waits in
# sigsuspend under ngx_master_process_cycle; each worker in epoll_wait under
# ngx_process_events_and_timers, ngx_worker_process_cycle (a static
# function: "??" to gdb), ngx_spawn_process and the master's cycle it was
# forked from. Each worker also runs a thread pool of 2 threads ("aio
# threads"), which wait in pthread_cond_wait under ngx_thread_pool_cycle.
# One request first, so the workers have served something.
#
# Truth: gdb's backtrace of each process that did not run between the two
# reads of its context switches around the 2 s window (stackcmp.py).
# Checks: every such process's wprof stack equals gdb's frame for frame;
# the master and every thread of both workers are among them. The processes are given to
# -p joined by commas.
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"
# shellcheck source=tests/lib_real.sh
. "$(dirname "$0")/../lib_real.sh"
require_bpf
rs_require_gdb
rs_need_cmd nginx nginx-light

sock=$TMP/nginx.sock
mkdir -p "$TMP/nginx/logs"
cat >"$TMP/nginx.conf" <<CONF
worker_processes 2;
thread_pool pool2 threads=2;
pid $TMP/nginx/nginx.pid;
error_log stderr;
events { worker_connections 64; }
http {
	access_log off;
	client_body_temp_path $TMP/nginx/body;
	proxy_temp_path $TMP/nginx/proxy;
	fastcgi_temp_path $TMP/nginx/fastcgi;
	uwsgi_temp_path $TMP/nginx/uwsgi;
	scgi_temp_path $TMP/nginx/scgi;
	server {
		listen unix:$sock;
		location / { aio threads=pool2; return 200 "ok\n"; }
	}
}
CONF
start_bg "$TMP/nginx.log" nginx -p "$TMP/nginx" -c "$TMP/nginx.conf" -e stderr -g 'daemon off;'
master=$BG_PID
log "$(nginx -v 2>&1)"
for _ in $(seq 50); do
	[ -S "$sock" ] && [ "$(pgrep -c -P "$master")" -eq 2 ] && break
	sleep 0.1
done
workers=$(pgrep -P "$master" | tr '\n' ',')
workers=${workers%,}
[ "$(echo "$workers" | tr ',' '\n' | grep -c .)" -eq 2 ] ||
	fatal "nginx did not start 2 workers: $(tail -3 "$TMP/nginx.log")"
reply=$(rs_http_get "$sock")
check "nginx answers on $sock (got '$reply')" test "$reply" = ok
log "master $master, workers $workers"
rs_wait_quiet "$master,$workers" '.*' 500 10 || log "nginx never went quiet"

args=(--label "$master=master" --need "pid=$master")
for w in ${workers//,/ }; do
	args+=(--label "$w=worker" --need "pid=$w")
done
rs_check_blocked "$master,$workers" "${args[@]}"
finish
