#!/usr/bin/env bash
# wprof overhead benchmark: throughput of `perf bench sched pipe` (a context
# switch storm) without a profiler, under `wprof record -a`, under wprof aimed
# at one idle process, and under a bpftrace off-CPU script (the peer design:
# stacks summed in the kernel at every switch). Repetitions are interleaved so
# that drift of this shared machine hits every configuration alike; medians.
set -u
OUT=${OUT:-build}
WPROF=${WPROF:-$OUT/wprof}
REPS=${BENCH_REPS:-5}
LOOPS=${BENCH_LOOPS:-60000}
tmp=$(mktemp -d)
trap 'kill $idle 2>/dev/null; rm -rf "$tmp"' EXIT

[ "$(id -u)" -eq 0 ] || { echo "bench: needs root (BPF)" >&2; exit 1; }
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
pipe_ops() {
	if [ "$PIN" = 1 ]; then
		taskset -c "$BENCH_CPU" perf bench sched pipe -l "$LOOPS" 2>/dev/null
	else
		perf bench sched pipe -l "$LOOPS" 2>/dev/null
	fi | awk '/ops\/sec/ {print $1}'
}

# wait until a background tool's log says it is attached
wait_for() { # file pattern
	for _ in $(seq 1 600); do
		grep -q "$2" "$1" 2>/dev/null && return 0
		sleep 0.1
	done
	echo "bench: tool did not start; its log:" >&2
	cat "$1" >&2
	return 1
}

# run_under NAME CMD...: ops/s of one pipe run with CMD running beside it
run_under() {
	local name=$1; shift
	local log=$tmp/$name.log
	"$@" >"$log" 2>&1 &
	local pid=$!
	case $name in
	bpftrace*) wait_for "$log" "Attaching" || return 1 ;;
	*) wait_for "$log" "recording with" || return 1 ;;
	esac
	local ops
	ops=$(pipe_ops)
	kill -INT $pid
	wait $pid
	cat "$log" >>"$tmp/$name.all"
	echo "$ops"
}

median() { sort -n | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }

cat >"$tmp/offcpu.bt" <<'BT'
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

# bpftrace 0.17 gives up where RLIMIT_MEMLOCK cannot be raised (see the shim)
shim=$tmp/memlock-shim.so
gcc -shared -fPIC -O2 -Wall -Wextra -Werror "$(dirname "$0")/memlock-shim.c" -o "$shim" -ldl || exit 1

sleep 100000 &
idle=$!

configs="base wprof-a wprof-p-idle bpftrace base-unpinned wprof-a-unpinned bpftrace-unpinned"
for i in $(seq 1 "$REPS"); do
	for c in $configs; do
		case $c in
		*-unpinned) PIN=0 ;;
		*) PIN=1 ;;
		esac
		case $c in
		base*) v=$(pipe_ops) ;;
		wprof-a*) v=$(run_under "$c" "$WPROF" record -a --stats -o /dev/null) ;;
		wprof-p-idle) v=$(run_under "$c" "$WPROF" record -p $idle -o /dev/null) ;;
		bpftrace*) v=$(run_under "$c" env LD_PRELOAD="$shim" bpftrace "$tmp/offcpu.bt") ;;
		esac
		[ -n "$v" ] || { echo "bench: $c produced no figure" >&2; exit 1; }
		echo "$v" >>"$tmp/$c.ops"
		printf 'rep %d %-18s %s ops/s\n' "$i" "$c" "$v"
	done
done

for pin in pinned unpinned; do
	if [ $pin = pinned ]; then
		base=$(median <"$tmp/base.ops")
		set -- base wprof-a wprof-p-idle bpftrace
		echo
		echo "perf bench sched pipe -l $LOOPS pinned to CPU $BENCH_CPU (worst case)," \
			"$REPS interleaved repetitions, medians:"
	else
		base=$(median <"$tmp/base-unpinned.ops")
		set -- base-unpinned wprof-a-unpinned bpftrace-unpinned
		echo
		echo "perf bench sched pipe -l $LOOPS unpinned, $REPS interleaved repetitions, medians:"
	fi
	for c in "$@"; do
		m=$(median <"$tmp/$c.ops")
		awk -v c="$c" -v m="$m" -v b="$base" \
			'BEGIN {printf "  %-18s %8.0f ops/s  ratio %.3f  overhead %5.1f%%\n", c, m, m/b, 100*(1-m/b)}'
	done
done
echo
echo "wprof record -a, BPF run time per event (last repetition):"
grep -E 'wprof: (bpf|user stacks)' "$tmp/wprof-a.all" | tail -n 9 | sed 's/^/  /'
echo "wprof record -a, peak RSS (median):"

grep 'peak RSS' "$tmp/wprof-a.all" | awk '{print $4}' | median | sed 's/^/  /; s/$/ KiB/'
echo
echo "Symbolization (10,000 distinct stacks of 20 frames over 20 modules, target < 1 s):"
"$OUT/tests/tools/symbench" --check | sed 's/^/  /'
