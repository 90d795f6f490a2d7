#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Stacks of a real FP-less program against gdb: PostgreSQL's server
# (Debian's postgresql-15, built without frame pointers). A cluster made by
# initdb in $TMP, run as user postgres (setpriv), listening on a unix socket
# in $TMP only (listen_addresses ''). Its background processes wait in
# epoll_wait under WaitEventSetWait, WaitLatch and their main functions,
# called from PostmasterMain -> main; PostgreSQL 15 forks some of them from
# the postmaster's signal handler, so their stacks go on through the signal
# frame into the postmaster's select() loop: deep, FP-less stacks, and a
# signal frame to unwind through.
#
# The timers are set long (bgwriter_delay, wal_writer_delay 10 s,
# autovacuum_naptime and checkpoint_timeout 1 h) so that the processes stay
# asleep through the 2 s window after they settle.
#
# Truth: gdb's backtrace of each process that did not run between the two
# reads of its context switches around the window (stackcmp.py).
# Checks: every such process's wprof stack equals gdb's frame for frame;
# the postmaster, checkpointer, background writer, walwriter, autovacuum
# launcher and logical replication launcher are all among them.
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"
# shellcheck source=tests/lib_real.sh
. "$(dirname "$0")/../lib_real.sh"
require_bpf
rs_require_gdb
rs_need_cmd setpriv util-linux
bindir=$(printf '%s\n' /usr/lib/postgresql/*/bin | sort -V | tail -1)
if [ ! -x "$bindir/postgres" ] || ! id postgres >/dev/null 2>&1; then
	[ "${CI:-}" = true ] && fatal "postgres is not installed (Debian package postgresql)"
	skip "postgres is not installed (Debian package postgresql)"
fi

as_postgres()
{
	setpriv --reuid=postgres --regid=postgres --init-groups -- "$@"
}

data=$TMP/pgdata
sockdir=$TMP/pgsock
{ mkdir -p "$data" "$sockdir" && chown postgres: "$data" "$sockdir"; } || fatal "cannot make $data"
as_postgres "$bindir/initdb" -D "$data" -A trust -U postgres --no-sync >"$TMP/initdb.log" 2>&1 ||
	fatal "initdb failed: $(tail -3 "$TMP/initdb.log")"
start_bg "$TMP/postgres.log" setpriv --reuid=postgres --regid=postgres --init-groups -- \
	"$bindir/postgres" -D "$data" -k "$sockdir" -c listen_addresses= -c fsync=off \
	-c bgwriter_delay=10s -c wal_writer_delay=10s -c autovacuum_naptime=1h \
	-c checkpoint_timeout=1h
pid=$BG_PID
log "$("$bindir/postgres" --version)"
# the server is up when it accepts a connection; its children by then exist
for _ in $(seq 100); do
	kill -0 "$pid" 2>/dev/null || break
	"$bindir/pg_isready" -q -h "$sockdir" -U postgres && break
	sleep 0.1
done
"$bindir/pg_isready" -q -h "$sockdir" -U postgres || fatal "postgres did not start: $(tail -3 "$TMP/postgres.log")"

declare -A role
want="checkpointer|background writer|walwriter|autovacuum launcher|logical replication launcher"
for _ in $(seq 50); do
	role=()
	for c in $(pgrep -P "$pid"); do
		r=$(tr '\0' ' ' <"/proc/$c/cmdline" | sed -n 's/^postgres: \(.*[^ ]\) *$/\1/p')
		[ -n "$r" ] && role[$c]=$r
	done
	[ "$(printf '%s\n' "${role[@]}" | grep -Ec "^($want)\$")" -eq 5 ] && break
	sleep 0.1
done
pids=$pid
labels=(--label "$pid=postmaster" --need "pid=$pid")
for c in "${!role[@]}"; do
	log "pid $c: ${role[$c]}"
	pids+=,$c
	labels+=(--label "$c=${role[$c]// /_}")
	[[ ${role[$c]} =~ ^($want)$ ]] && labels+=(--need "pid=$c")
done
[ "$(printf '%s\n' "${role[@]}" | grep -Ec "^($want)\$")" -eq 5 ] ||
	fatal "not every background process started: ${role[*]}"
rs_wait_quiet "$pids" '.*' 500 10 || log "postgres never went quiet"

rs_check_blocked "$pids" "${labels[@]}"
finish
