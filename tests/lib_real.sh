# SPDX-License-Identifier: GPL-2.0-only
# shellcheck shell=bash
#
# Helpers for the tests that profile real programs (tests/integration/real_*.sh),
# sourced after tests/lib.sh. Their ground truth comes from outside wprof:
# gdb's backtraces of threads that slept through the recording, and the
# kernel's per-thread schedstat.
#
# Symbols: wprof and gdb must name frames from the same files, and a fresh
# Debian machine has no separate debug files (libc6-dbg and friends), so
# both run with /usr/lib/debug hidden (rs_nodebug) and gdb is told to look
# for no debug file at all. gdb still reads DWARF that a binary carries
# itself (Go, node); stackcmp.py drops the inlined frames that adds.

RS_EMPTY=$TMP/empty-debug-dir
mkdir -p "$RS_EMPTY"
STACKCMP=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/tools/stackcmp.py
: "${RS_SECONDS:=2}"
# Debian's python3 for the helpers and workloads here, when there is one: a
# python3 earlier in PATH may be a version manager's shim that costs a
# second a start on a loaded machine (the JSON checks of lib.sh keep PYTHON).
RS_PYTHON=$PYTHON
[ -x /usr/bin/python3 ] && RS_PYTHON=/usr/bin/python3

# rs_need_cmd CMD PACKAGE: CMD is installed, else skip (fail under CI=true,
# where scripts/install-deps.sh has installed every package).
rs_need_cmd()
{
	command -v "$1" >/dev/null 2>&1 && return 0
	[ "${CI:-}" = true ] && fatal "$1 is not installed (Debian package $2)"
	skip "$1 is not installed (Debian package $2)"
}

# rs_require_gdb: what the gdb comparison needs.
rs_require_gdb()
{
	rs_need_cmd gdb gdb
	rs_need_cmd nm binutils
	rs_need_cmd unshare util-linux
	rs_need_cmd "$RS_PYTHON" python3
}

# rs_nodebug CMD...: run CMD in a mount namespace where /usr/lib/debug is
# empty, as on a machine without debug packages.
rs_nodebug()
{
	if [ -d /usr/lib/debug ]; then
		# shellcheck disable=SC2016 # expanded by that sh
		unshare -m sh -c 'mount --bind "$0" /usr/lib/debug && exec "$@"' "$RS_EMPTY" "$@"
	else
		"$@"
	fi
}

# rs_http_get SOCK: the body of GET / over the unix socket SOCK (or the error).
rs_http_get()
{
	"$RS_PYTHON" -c '
import socket, sys
s = socket.socket(socket.AF_UNIX)
s.settimeout(5)
s.connect(sys.argv[1])
s.sendall(b"GET / HTTP/1.0\r\n\r\n")
data = b""
while True:
	b = s.recv(4096)
	if not b:
		break
	data += b
print(data.decode(errors="replace").split("\r\n\r\n", 1)[-1].strip())' "$1" 2>&1
}

# rs_tids PIDS: "pid tid" of every thread of the comma-separated PIDS.
rs_tids()
{
	local pid d

	for pid in ${1//,/ }; do
		for d in /proc/"$pid"/task/*; do
			[ -d "$d" ] && echo "$pid ${d##*/}"
		done
	done
}

# rs_switches PIDS: one line per thread, "PID TID VOLUNTARY NONVOLUNTARY
# COMM": its context switches so far. A thread whose two counts stay the
# same between two reads did not run in between.
rs_switches()
{
	local pid tid

	rs_tids "$1" | while read -r pid tid; do
		awk -v p="$pid" -v t="$tid" '
			/^Name:/ { sub(/^Name:[ \t]*/, ""); c = $0 }
			/^voluntary_ctxt_switches:/ { v = $2 }
			/^nonvoluntary_ctxt_switches:/ { n = $2 }
			END { if (v != "") print p, t, v, n, c }' "/proc/$pid/task/$tid/status" 2>/dev/null
	done
}

# rs_wait_quiet PIDS COMM_ERE MS MAX_S: wait until no thread of PIDS whose
# comm matches COMM_ERE (anchored) has switched for MS ms, at most MAX_S
# seconds; returns 1 on timeout. Programs settle after they start (GC,
# JIT, first timers); the window should open on threads already asleep.
rs_wait_quiet()
{
	local pids=$1 ere=$2 ms=$3 max_s=$4 cur prev="" t0 since

	t0=$(now_ms)
	since=$t0
	while :; do
		cur=$(rs_switches "$pids" | awk -v re="^($ere)\$" '$5 ~ re { print $2, $3, $4 }')
		if [ "$cur" != "$prev" ]; then
			prev=$cur
			since=$(now_ms)
		elif [ $(($(now_ms) - since)) -ge "$ms" ]; then
			return 0
		fi
		[ $(($(now_ms) - t0)) -ge $((max_s * 1000)) ] && return 1
		sleep 0.1
	done
}

# rs_gdb_bt PID: gdb's backtrace of every thread of PID, on stdout. The
# debug-file settings are -iex: gdb attaches (and reads the symbols) before
# it runs the -ex commands. No frame arguments: names only; past-main: on
# to _start, as wprof shows it.
rs_gdb_bt()
{
	rs_nodebug timeout -k 5 60 gdb -batch -nx -p "$1" \
		-iex 'set debug-file-directory /nonexistent' \
		-iex 'set debuginfod enabled off' \
		-iex 'set auto-load off' \
		-ex 'set print frame-arguments none' \
		-ex 'set backtrace past-main on' \
		-ex 'thread apply all bt' </dev/null 2>&1
}

# rs_record_blocked NAME PIDS: record PIDS (comma-separated) for RS_SECONDS
# with wprof and /usr/lib/debug hidden; read every thread's switch counts
# right before and after, each process's maps, then gdb's backtraces. Files:
# $TMP/NAME.{json,err,before,after} and $TMP/NAME.{maps,gdb}.PID.
rs_record_blocked()
{
	local name=$1 pids=$2 pid gdbs

	rs_switches "$pids" >"$TMP/$name.before"
	log "wprof record -p $pids -d $RS_SECONDS -f json (no /usr/lib/debug)"
	rs_nodebug timeout --foreground -k 5 60 "$WPROF" record -p "$pids" -d "$RS_SECONDS" \
		-f json -o "$TMP/$name.json" 2>"$TMP/$name.err"
	RC=$?
	rs_switches "$pids" >"$TMP/$name.after"
	sed 's/^/#   /' "$TMP/$name.err" | grep -v '^#   wprof:   tid' | head -20
	# one gdb per process, side by side: each stops only its own process
	gdbs=()
	for pid in ${pids//,/ }; do
		cp "/proc/$pid/maps" "$TMP/$name.maps.$pid" 2>/dev/null
		rs_gdb_bt "$pid" >"$TMP/$name.gdb.$pid" &
		gdbs+=($!)
	done
	wait "${gdbs[@]}"
	for pid in ${pids//,/ }; do
		grep -q '^#0 ' "$TMP/$name.gdb.$pid" ||
			{ sed 's/^/#   /' "$TMP/$name.gdb.$pid" | head -10; fatal "gdb could not read pid $pid's stacks"; }
	done
}

# rs_compare NAME PIDS [stackcmp.py options]: compare the recording NAME of
# PIDS with gdb's backtraces; prints stackcmp's report, returns its status
# (0 match, 1 differ, 3 too few threads slept through the window).
rs_compare()
{
	local name=$1 pids=$2 pid args=()

	shift 2
	for pid in ${pids//,/ }; do
		args+=(--gdb "$pid=$TMP/$name.gdb.$pid" --maps "$pid=$TMP/$name.maps.$pid")
	done
	"$RS_PYTHON" "$STACKCMP" --json "$TMP/$name.json" --before "$TMP/$name.before" \
		--after "$TMP/$name.after" "${args[@]}" "$@"
}

# rs_check_blocked PIDS [stackcmp.py options]: record and compare; when the
# threads the options --need ran during the window, record once more. Sets
# LIB_FAILED through ok/not_ok lines, and RS_LAST to the name of the
# recording compared (rec1 or rec2: $TMP/$RS_LAST.json).
rs_check_blocked()
{
	local pids=$1 try rc out

	shift
	for try in 1 2; do
		RS_LAST=rec$try
		rs_record_blocked "$RS_LAST" "$pids"
		[ "$RC" -eq 0 ] || fatal "wprof exited $RC"
		out=$(rs_compare "rec$try" "$pids" "$@")
		rc=$?
		if [ "$rc" -eq 3 ] && [ "$try" -eq 1 ]; then
			echo "$out" | grep -v '^ok' | sed 's/^not ok/# (retrying) not ok/'
			log "the threads to compare ran during the window: recording again"
			continue
		fi
		echo "$out"
		case $rc in
		0) ok "wprof's stacks of the threads that slept through the window match gdb's" ;;
		3) not_ok "too few threads slept through the window to compare (setup)" ;;
		*) not_ok "wprof's stacks differ from gdb's (stackcmp exit $rc)" ;;
		esac
		return
	done
}

# rs_schedcmp NAME PIDS [schedcmp.py options]: record PIDS (comma-separated)
# for RS_SECONDS into $TMP/NAME.json, comparing every thread's times with its
# schedstat (tests/tools/schedcmp.py, report in $TMP/NAME.out); prints the
# recording's summary and the report. Returns schedcmp's status (0 within
# bounds, 1 not); fails the test if the recording failed or its JSON is not
# wprof's.
rs_schedcmp()
{
	local name=$1 pids=$2 rc

	shift 2
	log "wprof record -p $pids -d $RS_SECONDS -f json"
	"$RS_PYTHON" "$(dirname "$STACKCMP")/schedcmp.py" --pids "$pids" --seconds "$RS_SECONDS" \
		--json "$TMP/$name.json" --stderr "$TMP/$name.err" "$@" \
		-- timeout --foreground -k 5 60 "$WPROF" record -p "$pids" -d "$RS_SECONDS" -f json \
		-o "$TMP/$name.json" >"$TMP/$name.out"
	rc=$?
	grep -v '^wprof:   tid' "$TMP/$name.err" | sed 's/^/#   /' | head -12
	cat "$TMP/$name.out"
	[ "$rc" -eq 2 ] && fatal "the recording failed"
	check_json "$TMP/$name.json"
	return "$rc"
}

# rs_row_field NAME TID N: field N of thread TID's row in the report of
# rs_schedcmp NAME (4: its runs, 7: its run-queue time by schedstat, us).
rs_row_field()
{
	awk -v t="$2" -v n="$3" '$1 == "#" && $3 == t { print $n }' "$TMP/$1.out"
}
