#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Stacks of a real Go program against gdb: tests/fixtures/gohttp, a
# net/http server on a unix socket in $TMP, idle after one request. Its
# threads park in the Go scheduler: futex sleeps under runtime.notesleep,
# runtime.stopm, runtime.schedule ... runtime.mcall, or under runtime.sysmon
# or runtime.templateThread ... runtime.mstart; the main thread in
# runtime.netpoll's epoll wait. Go keeps frame pointers, but its assembly
# functions (runtime.futex, runtime.mcall) and its stack switches are where
# an unwinder that guesses goes wrong.
#
# Truth: gdb's backtrace of each thread that did not run between the two
# reads of its context switches around the 2 s window (stackcmp.py; gdb's
# frames past the Go stack root, which it reads from garbage, are left out,
# as are the frames gdb shows for calls Go inlined).
# Checks: every such thread's wprof stack equals gdb's frame for frame;
# every thread of the program is among them.
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"
# shellcheck source=tests/lib_real.sh
. "$(dirname "$0")/../lib_real.sh"
require_bpf
rs_require_gdb
gohttp=$OUT/tests/fixtures/gohttp
if [ ! -x "$gohttp" ]; then
	command -v go >/dev/null && fatal "$gohttp not built (run make test-bins)"
	[ "${CI:-}" = true ] && fatal "go is not installed (Debian package golang-go)"
	skip "go is not installed (Debian package golang-go)"
fi

sock=$TMP/go.sock
start_bg "$TMP/gohttp.log" "$gohttp" "$sock"
pid=$BG_PID
wait_line "$TMP/gohttp.log" '^ready [0-9]+$' 10 || fatal "gohttp did not start: $(head -3 "$TMP/gohttp.log")"
reply=$(rs_http_get "$sock")
check "gohttp answers on $sock (got '$reply')" test "$reply" = ok
log "$(go version 2>/dev/null): threads $(rs_tids "$pid" | awk '{ print $2 }' | tr '\n' ' ')"
rs_wait_quiet "$pid" '.*' 500 10 || log "gohttp never went quiet"

rs_check_blocked "$pid" --label "$pid=gohttp" --need "pid=$pid"
finish
