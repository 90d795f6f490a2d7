#!/usr/bin/env bash
# wprof overhead benchmark: throughput of `perf bench sched pipe` (a context
# switch storm) without a profiler, under `wprof record -a`, under wprof aimed
# at one idle process, and under a bpftrace off-CPU script (the peer design:
# stacks summed in the kernel at every switch). Repetitions are interleaved so
# that drift of this shared machine hits every configuration alike; medians.
#
# The bench never waits for good: every tool it starts is stopped with SIGINT
# and a bounded wait, then SIGTERM, then SIGKILL (and that is reported); a
# tool that exits or has not attached within BENCH_START_TIMEOUT seconds is
# reported with the end of its log, and its row says `failed`; one run of the
# workload is cut at BENCH_RUN_TIMEOUT seconds. A missing optional tool
# (bpftrace) makes its rows say `skipped`.
set -u
OUT=${OUT:-build}
WPROF=${WPROF:-$OUT/wprof}
BPFTRACE=${BPFTRACE:-bpftrace}
REPS=${BENCH_REPS:-5}
LOOPS=${BENCH_LOOPS:-60000}
START_S=${BENCH_START_TIMEOUT:-30}
STOP_S=${BENCH_STOP_TIMEOUT:-10}
RUN_S=${BENCH_RUN_TIMEOUT:-20}
tmp=$(mktemp -d)
notes=$tmp/notes
live="" # pids of the tools running now, for the exit trap
idle=""
shim=""

[ "$(id -u)" -eq 0 ] || { echo "bench: needs root (BPF)" >&2; exit 1; }
command -v perf >/dev/null || { echo "bench: perf is not installed (apt-get install linux-perf)" >&2; exit 1; }
[ -x "$WPROF" ] || { echo "bench: $WPROF is not built (make)" >&2; exit 1; }

# say it now, and again under the table
note() {
	echo "bench: $*" >&2
	echo "$*" >>"$notes"
}

# alive PID: running, not a zombie waiting for us to reap it (kill -0
# succeeds on those)
alive() {
	local st
	st=$(sed -n 's/.*) \(.\).*/\1/p' "/proc/$1/stat" 2>/dev/null)
	[ -n "$st" ] && [ "$st" != Z ]
}

# wait_gone PID SECONDS: 0 once PID has exited, 1 if it is still there
wait_gone() {
	local n=$(($2 * 10))
	while alive "$1"; do
		[ "$n" -gt 0 ] || return 1
		sleep 0.1
		n=$((n - 1))
	done
}

forget() {
	local p keep=""
	for p in $live; do
		[ "$p" = "$1" ] || keep="$keep $p"
	done
	live=$keep
}

# stop_tool NAME PID: SIGINT, wait up to STOP_S; then SIGTERM, then SIGKILL,
# 5 s each. Anything beyond SIGINT is noted. Sets stop_rc to the tool's exit
# status (empty if it could not be reaped). Never waits on a live process.
stop_tool() {
	local name=$1 pid=$2 how=""
	stop_rc=""
	kill -INT "$pid" 2>/dev/null
	if ! wait_gone "$pid" 3; then
		# bpftrace 0.17 loses a SIGINT that lands before its poll loop
		# sleeps in epoll_wait, and then sleeps there for good (seen here
		# once in a few starts); a second SIGINT gets through. wprof
		# takes signals from a signalfd, redis shuts down at once on a
		# second one: for them it changes nothing.
		kill -INT "$pid" 2>/dev/null
		how="a second SIGINT"
		if ! wait_gone "$pid" $((STOP_S > 3 ? STOP_S - 3 : 1)); then
			kill -TERM "$pid" 2>/dev/null
			how="SIGTERM, after ${STOP_S} s"
			if ! wait_gone "$pid" 5; then
				kill -KILL "$pid" 2>/dev/null
				how="SIGKILL, after SIGINT and SIGTERM were ignored for $((STOP_S + 5)) s"
				if ! wait_gone "$pid" 5; then
					note "$name (pid $pid) is still there after SIGKILL; left behind"
					forget "$pid"
					return 1
				fi
			fi
		fi
	fi
	wait "$pid" 2>/dev/null
	stop_rc=$?
	forget "$pid"
	[ -z "$how" ] && return 0
	note "$name did not stop on SIGINT; stopped by $how"
	return 1
}

cleanup() {
	local p
	for p in $live; do
		stop_tool "leftover tool" "$p"
	done
	[ -n "$idle" ] && kill "$idle" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# fail CONFIG REASON [LOG]: this configuration is not run again, its row says failed
fail() {
	note "$1: $2"
	if [ -n "${3:-}" ] && [ -s "$3" ]; then
		echo "bench: the end of its log:" >&2
		tail -n 15 "$3" | sed 's/^/  | /' >&2
	fi
	echo "failed: $2" >"$tmp/$1.off"
}

# start_tool CONFIG TOOL LOG PATTERN CMD...: start CMD (named TOOL in messages)
# in the background and wait until its log says PATTERN, i.e. it is attached.
# Sets tool_pid.
start_tool() {
	local c=$1 tool=$2 log=$3 pat=$4 n=$((START_S * 10))
	shift 4
	"$@" >"$log" 2>&1 &
	tool_pid=$!
	live="$live $tool_pid"
	until grep -q -- "$pat" "$log" 2>/dev/null; do
		if ! alive "$tool_pid"; then
			stop_tool "$c" "$tool_pid"
			fail "$c" "$tool exited (status $stop_rc) before it was attached" "$log"
			return 1
		fi
		if [ "$n" -le 0 ]; then
			stop_tool "$c" "$tool_pid"
			fail "$c" "$tool was not attached after $START_S s" "$log"
			return 1
		fi
		sleep 0.1
		n=$((n - 1))
	done
}

# bpftrace's tracepoints need tracefs, which this machine does not mount by default
if ! [ -e /sys/kernel/tracing/events ]; then
	mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null || true
fi

# Both tasks of the pipe pinned to one CPU: every op is then exactly two
# context switches and two wakeups. Unpinned, throughput on 2 CPUs swings
# with where the scheduler puts the two tasks (cross-CPU wakeups from idle
# cost more than the switches), and any tracer shifts that placement: runs
# under a profiler came out faster than without one.
# Both are reported: pinned is the worst case for a profiler (an op is
# two switches and two wakeups, ~5 us here), unpinned is the ordinary case
# (an op is dominated by cross-CPU wakeups, ~35 us here).
BENCH_CPU=${BENCH_CPU:-$(($(nproc) - 1))}
PIN=1

# pipe_run CONFIG REP: one run of the pipe, its ops/s appended to CONFIG.ops as
# "VALUE BOUND"; BOUND is 1 when the run was cut at RUN_S and VALUE is only
# the most it can have been
pipe_run() {
	local out rc v bound=0
	if [ "$PIN" = 1 ]; then
		out=$(timeout -k 5 "$RUN_S" taskset -c "$BENCH_CPU" perf bench sched pipe -l "$LOOPS" 2>&1)
	else
		out=$(timeout -k 5 "$RUN_S" perf bench sched pipe -l "$LOOPS" 2>&1)
	fi
	rc=$?
	v=$(echo "$out" | awk '/ops\/sec/ {print $1}')
	if [ -z "$v" ] && { [ $rc = 124 ] || [ $rc = 137 ]; }; then
		v=$((LOOPS / RUN_S))
		bound=1
		note "$1, rep $2: $LOOPS loops took over $RUN_S s, counted as $v ops/s (an upper bound)"
	fi
	if [ -z "$v" ]; then
		fail "$1" "perf bench sched pipe gave no figure (status $rc): $(echo "$out" | tail -n 1)"
		return 1
	fi
	echo "$v $bound" >>"$tmp/$1.ops"
	printf 'rep %d %-18s %s%s ops/s\n' "$2" "$1" "$([ $bound = 1 ] && echo "< ")" "$v"
}

# run_under CONFIG REP TOOL PATTERN CMD...: one pipe run with CMD running beside it
run_under() {
	local c=$1 i=$2 tool=$3 pat=$4 log=$tmp/$1.$2.log
	shift 4
	start_tool "$c" "$tool" "$log" "$pat" "$@" || return 1
	pipe_run "$c" "$i"
	if ! alive "$tool_pid"; then
		stop_tool "$c" "$tool_pid"
		fail "$c" "$tool exited (status $stop_rc) during rep $i" "$log"
		return 1
	fi
	stop_tool "$c, rep $i" "$tool_pid"
	[ "$stop_rc" = 0 ] || note "$c, rep $i: $tool exited with status $stop_rc"
}

median() { sort -n | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }

# median_of FILE: "VALUE BOUND" of the median of a config's "VALUE BOUND" lines
median_of() {
	sort -n "$1" | awk '{ v[NR] = $1; b[NR] = $2 }
		END {
			if (!NR) exit
			if (NR % 2) print v[(NR + 1) / 2], b[(NR + 1) / 2]
			else print (v[NR / 2] + v[NR / 2 + 1]) / 2, b[NR / 2] || b[NR / 2 + 1]
		}'
}

cat >"$tmp/offcpu.bt" <<'BT'
BEGIN { printf("bench: attached\n"); }
tracepoint:sched:sched_switch
{
	@ts[args->prev_pid] = nsecs;
	@ks[args->prev_pid] = kstack;
	@us[args->prev_pid] = ustack;
	$s = @ts[args->next_pid];
	if ($s) {
		@off[@ks[args->next_pid], @us[args->next_pid]] = sum(nsecs - $s);
		delete(@ts[args->next_pid]);
	}
}
END { clear(@ts); clear(@ks); clear(@us); clear(@off); }
BT

# bpftrace prints BEGIN's line once its probes are attached ("Attaching N
# probes" comes before); -B line gets it to the log at once
if ! command -v "$BPFTRACE" >/dev/null; then
	for c in bpftrace bpftrace-unpinned; do
		echo "skipped: bpftrace not installed" >"$tmp/$c.off"
	done
elif ! [ -e /sys/kernel/tracing/events ]; then
	for c in bpftrace bpftrace-unpinned; do
		echo "skipped: tracefs cannot be mounted" >"$tmp/$c.off"
	done
else
	# bpftrace 0.17 gives up where RLIMIT_MEMLOCK cannot be raised (see the shim)
	shim=$tmp/memlock-shim.so
	if ! gcc -shared -fPIC -O2 -Wall -Wextra -Werror "$(dirname "$0")/memlock-shim.c" \
		-o "$shim" -ldl 2>"$tmp/shim.log"; then
		for c in bpftrace bpftrace-unpinned; do
			fail "$c" "the memlock shim for bpftrace does not build" "$tmp/shim.log"
		done
	fi
fi

sleep 100000 &
idle=$!

configs="base wprof-a wprof-p-idle bpftrace base-unpinned wprof-a-unpinned bpftrace-unpinned"
for i in $(seq 1 "$REPS"); do
	for c in $configs; do
		[ -e "$tmp/$c.off" ] && continue
		case $c in
		*-unpinned) PIN=0 ;;
		*) PIN=1 ;;
		esac
		case $c in
		base*) pipe_run "$c" "$i" ;;
		wprof-a*)
			run_under "$c" "$i" wprof "recording with" \
				"$WPROF" record -a --stats -o /dev/null ;;
		wprof-p-idle)
			run_under "$c" "$i" wprof "recording with" \
				"$WPROF" record -p "$idle" -o /dev/null ;;
		bpftrace*)
			run_under "$c" "$i" bpftrace "bench: attached" \
				env LD_PRELOAD="$shim" "$BPFTRACE" -B line "$tmp/offcpu.bt" ;;
		esac
	done
done

for pin in pinned unpinned; do
	if [ $pin = pinned ]; then
		basec="base"
		set -- base wprof-a wprof-p-idle bpftrace
		echo
		echo "perf bench sched pipe -l $LOOPS pinned to CPU $BENCH_CPU (worst case)," \
			"$REPS interleaved repetitions, medians:"
	else
		basec="base-unpinned"
		set -- base-unpinned wprof-a-unpinned bpftrace-unpinned
		echo
		echo "perf bench sched pipe -l $LOOPS unpinned, $REPS interleaved repetitions, medians:"
	fi
	read -r base _ < <(median_of "$tmp/$basec.ops" 2>/dev/null)
	for c in "$@"; do
		if [ -e "$tmp/$c.off" ] && ! [ -s "$tmp/$c.ops" ]; then
			printf '  %-18s %s\n' "$c" "$(cat "$tmp/$c.off")"
			continue
		fi
		read -r m bound < <(median_of "$tmp/$c.ops")
		awk -v c="$c" -v m="$m" -v b="$base" -v lt="$([ "$bound" = 1 ] && echo "<")" \
			'BEGIN {printf "  %-18s %1s%7.0f ops/s  ratio %.3f  overhead %5.1f%%\n", c, lt, m, m/b, 100*(1-m/b)}'
	done
done
echo
echo "wprof record -a, BPF run time per event (last repetition):"
grep -hE 'wprof: (bpf|user stacks)' "$tmp"/wprof-a.*.log 2>/dev/null | tail -n 9 | sed 's/^/  /'
echo "wprof record -a, peak RSS (median):"
cat "$tmp"/wprof-a.*.log 2>/dev/null | grep 'peak RSS' | awk '{print $4}' | median | sed 's/^/  /; s/$/ KiB/'
if [ -s "$notes" ]; then
	echo
	echo "Notes:"
	sed 's/^/  /' "$notes"
fi
echo
echo "Symbolization (10,000 distinct stacks of 20 frames over 20 modules, target < 1 s):"
"$OUT/tests/tools/symbench" --check | sed 's/^/  /'
