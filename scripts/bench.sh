#!/usr/bin/env bash
# wprof overhead benchmark: throughput of `perf bench sched pipe` (a context
# switch storm) without a profiler, under `wprof record -a`, under wprof aimed
# at one idle process, under a bpftrace off-CPU script (the peer design:
# stacks summed in the kernel at every switch) and under the floor, the
# cheapest hook there is (bpftrace counting sched_switch); and requests/s of a
# redis-server of its own under `redis-benchmark -c 1`, without and with
# `wprof record -p` on it, and under the floor; wprof's RSS under process
# churn, and its own CPU beside 2000 idle processes; this project's build,
# `make -j2 all`, without and with `wprof record --` (the build's time and
# wprof's own CPU, beside the build's). Repetitions are
# interleaved so that drift of this shared machine hits every configuration
# alike; medians. The end is one Markdown table, to paste into an issue.
#
# The bench never waits for good: every tool it starts is stopped with SIGINT
# and a bounded wait, then SIGTERM, then SIGKILL (and that is reported); a
# tool that exits or has not attached within BENCH_START_TIMEOUT seconds is
# reported with the end of its log, and its row says `failed`; one run of the
# workload is cut at BENCH_RUN_TIMEOUT seconds. A missing optional tool
# (bpftrace, redis) makes its rows say `skipped`.
set -u
OUT=${OUT:-build}
WPROF=${WPROF:-$OUT/wprof}
BPFTRACE=${BPFTRACE:-bpftrace}
REDIS_SERVER=${REDIS_SERVER:-redis-server}
REDIS_BENCHMARK=${REDIS_BENCHMARK:-redis-benchmark}
REPS=${BENCH_REPS:-5}
# loops of one pipe run: BENCH_LOOPS, or as many as take BENCH_RUN_SECONDS
# without a profiler (measured at the start, pinned and unpinned apart): a
# run of a fraction of a second is scattered by whatever else the machine does
LOOPS=${BENCH_LOOPS:-}
LOOPS_U=${BENCH_LOOPS:-}
RUN_SECONDS=${BENCH_RUN_SECONDS:-1}
# runs of the pipe per configuration and repetition (under one attach of the
# tool), their median its figure: a single run's figure here was now and
# then a tenth off its neighbours', enough to move the floor's few percent
# (and wprof's multiple of it) by half
PIPE_RUNS=${BENCH_PIPE_RUNS:-3}
# seconds between a tool's attach and the run: the run measures a recording in
# progress, not the tool's start (which is reported on its own)
SETTLE_S=${BENCH_SETTLE:-1}
START_S=${BENCH_START_TIMEOUT:-30}
STOP_S=${BENCH_STOP_TIMEOUT:-10}
RUN_S=${BENCH_RUN_TIMEOUT:-20}
REDIS_PORT=${BENCH_REDIS_PORT:-6390}
REDIS_REQS=${BENCH_REDIS_REQS:-50000}
# pinned, a request takes a third of the time: more of them for as long a run
REDIS_REQS_PINNED=${BENCH_REDIS_REQS_PINNED:-150000}
tmp=$(mktemp -d)
notes=$tmp/notes
live="" # pids of the tools running now, for the exit trap
idle=""
shim=""
port=""
redis_pid=""

[ "$(id -u)" -eq 0 ] || { echo "bench: needs root (BPF)" >&2; exit 1; }
command -v perf >/dev/null || { echo "bench: perf is not installed (apt-get install linux-perf)" >&2; exit 1; }
[ -x "$WPROF" ] || { echo "bench: $WPROF is not built (make)" >&2; exit 1; }

# say it now, and again under the table
note() {
	echo "bench: $*" >&2
	echo "$*" >>"$notes"
}

# alive PID: our child, running: not a zombie waiting to be reaped (kill -0
# succeeds on those), nor, once bash has reaped it, another process that got
# its pid (the bench signals only what it started)
alive() {
	local st ppid
	read -r st ppid < <(sed -n 's/.*) \(.\) \([0-9]*\).*/\1 \2/p' "/proc/$1/stat" 2>/dev/null)
	[ -n "${st:-}" ] && [ "$st" != Z ] && [ "$ppid" = "$BASHPID" ]
}

# signal SIG PID: to our child PID only
signal() { alive "$2" && kill -s "$1" "$2" 2>/dev/null; }

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
	signal INT "$pid"
	if ! wait_gone "$pid" 3; then
		# bpftrace 0.17 loses a SIGINT that lands before its poll loop
		# sleeps in epoll_wait, and then sleeps there for good (seen here
		# once in a few starts); a second SIGINT gets through. wprof
		# takes signals from a signalfd, redis shuts down at once on a
		# second one: for them it changes nothing.
		signal INT "$pid"
		how="a second SIGINT"
		if ! wait_gone "$pid" $((STOP_S > 3 ? STOP_S - 3 : 1)); then
			signal TERM "$pid"
			how="SIGTERM, after ${STOP_S} s"
			if ! wait_gone "$pid" 5; then
				signal KILL "$pid"
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
	[ -n "$idle" ] && signal TERM "$idle"
	# shellcheck disable=SC2086 # a list of pids
	[ -n "${sleepers:-}" ] && kill $sleepers 2>/dev/null
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

# pipe_once PIN LOOPS: one run of the pipe, on CPU BENCH_CPU if PIN is 1, cut
# at RUN_S: its output, and timeout's status
pipe_once() {
	if [ "$1" = 1 ]; then
		timeout -k 5 "$RUN_S" taskset -c "$BENCH_CPU" perf bench sched pipe -l "$2" 2>&1
	else
		timeout -k 5 "$RUN_S" perf bench sched pipe -l "$2" 2>&1
	fi
}

# pipe_run CONFIG REP: PIPE_RUNS runs of the pipe, the median of their ops/s
# appended to CONFIG.ops as "VALUE BOUND REP"; BOUND is 1 when that run was
# cut at RUN_S (VALUE is then only the most it can have been)
pipe_run() {
	local out rc v bound=0 loops=$LOOPS r all="" m
	[ "$PIN" = 1 ] || loops=$LOOPS_U
	for r in $(seq 1 "$PIPE_RUNS"); do
		bound=0
		out=$(pipe_once "$PIN" "$loops")
		rc=$?
		v=$(echo "$out" | awk '/ops\/sec/ {print $1}')
		if [ -z "$v" ] && { [ $rc = 124 ] || [ $rc = 137 ]; }; then
			v=$((loops / RUN_S))
			bound=1
			note "$1, rep $2: $loops loops took over $RUN_S s, counted as $v ops/s (an upper bound)"
		fi
		if [ -z "$v" ]; then
			fail "$1" "perf bench sched pipe gave no figure (status $rc): $(echo "$out" | tail -n 1)"
			return 1
		fi
		all="$all$v $bound
"
	done
	read -r m bound < <(printf %s "$all" | median_of /dev/stdin)
	echo "$m $bound $2" >>"$tmp/$1.ops"
	printf 'rep %d %-18s %s%s ops/s (%s)\n' "$2" "$1" "$([ "$bound" = 1 ] && echo "< ")" "$m" \
		"$(printf %s "$all" | awk '{ printf "%s%s", (NR > 1 ? " " : ""), $1 }')"
}

# run_under CONFIG REP TOOL PATTERN CMD...: one run of the workload (the pipe,
# or redis-benchmark for redis-*) with CMD running beside it
run_under() {
	local c=$1 i=$2 tool=$3 pat=$4 log=$tmp/$1.$2.log f files
	shift 4
	case $c in
	redis*) files="$c-SET $c-GET" ;;
	*) files=$c ;;
	esac
	for f in $files; do
		touch "$tmp/$f.ops"
		cp "$tmp/$f.ops" "$tmp/$f.ops.before"
	done
	start_tool "$c" "$tool" "$log" "$pat" "$@" || return 1
	sleep "$SETTLE_S"
	# what the tool's start took: its CPU time (user + system) until now
	[ "$tool" = wprof ] && awk -v hz="$(getconf CLK_TCK)" \
		'{ sub(/.*\) /, ""); print ($12 + $13) * 1000 / hz, 0 }' \
		"/proc/$tool_pid/stat" >>"$tmp/$c.startcpu"
	case $c in
	redis*) redis_run "$c" "$i" ;;
	*) pipe_run "$c" "$i" ;;
	esac
	if ! alive "$tool_pid"; then
		# this run was not (all) under the tool: its figures do not count
		for f in $files; do
			mv "$tmp/$f.ops.before" "$tmp/$f.ops"
		done
		stop_tool "$c" "$tool_pid"
		fail "$c" "$tool exited (status $stop_rc) during rep $i" "$log"
		return 1
	fi
	# the floor's BPF run time, read while it is attached
	[ "$c" = floor-stats ] && bpftool -j prog show >"$tmp/$c.$i.progs" 2>/dev/null
	# the recording's peak: --stats' peak RSS also counts the symbolization after it
	[ "$tool" = wprof ] && awk '/^VmHWM:/ {print $2, 0}' "/proc/$tool_pid/status" >>"$tmp/$c.hwm"
	stop_tool "$c, rep $i" "$tool_pid" &&
		{ [ "$stop_rc" = 0 ] || note "$c, rep $i: $tool exited with status $stop_rc"; }
}

# redis_run CONFIG REP: one redis-benchmark run against our redis-server, its
# SET and GET requests/s appended to CONFIG-SET.ops and CONFIG-GET.ops as
# "VALUE 0 REP.K", the K-th run of CONFIG in repetition REP (the redis
# configurations that rows compare run twice a repetition, the K-th run
# beside the baseline's K-th: paired()). One client: every request is a
# block and a wakeup of the server. CONFIG *-pinned: the server's threads
# and the client on CPU BENCH_CPU (the server's put back on its CPUs after:
# the pipe's runs share that CPU with it), else wherever the scheduler puts
# them.
redis_run() {
	local out rc t v k line="" pin="" n=$REDIS_REQS
	if ! alive "$redis_pid"; then
		fail "$1" "redis-server exited"
		return 1
	fi
	case $1 in
	*-pinned)
		pin="taskset -c $BENCH_CPU" n=$REDIS_REQS_PINNED
		if ! taskset -a -p -c "$BENCH_CPU" "$redis_pid" >/dev/null; then
			fail "$1" "taskset could not move redis-server to CPU $BENCH_CPU"
			return 1
		fi
		;;
	esac
	out=$(timeout -k 5 $((3 * RUN_S)) $pin "$REDIS_BENCHMARK" -p "$port" -c 1 -n "$n" \
		-t get,set -q 2>&1)
	rc=$?
	if [ -n "$pin" ] && ! taskset -a -p -c "$redis_cpus" "$redis_pid" >/dev/null; then
		fail "$1" "taskset could not move redis-server back to CPUs $redis_cpus"
		return 1
	fi
	# -q rewrites its progress line with \r; the last one of a test is the figure
	out=$(echo "$out" | tr '\r' '\n')
	# this run's K (SET's and GET's files have their figures in step)
	k=$(cat "$tmp/$1-SET.ops" 2>/dev/null |
		awk -v r="$2" 'index($3, r ".") == 1 { n++ } END { print n + 1 }')
	for t in SET GET; do
		v=$(echo "$out" | awk -v t="$t:" '$1 == t && $3 == "requests" {print $2}')
		if [ -z "$v" ]; then
			fail "$1" "redis-benchmark gave no $t figure (status $rc): $(echo "$out" | grep . | tail -n 1)"
			return 1
		fi
		echo "$v 0 $2.$k" >>"$tmp/$1-$t.ops"
		line="$line $t $v"
	done
	printf 'rep %d %-18s%s req/s\n' "$2" "$1" "$line"
}

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

# The floor: the least any BPF profiler hooked on sched_switch can cost (a
# per-CPU counter); wprof's cost is judged as a multiple of it
cat >"$tmp/floor.bt" <<'BT'
BEGIN { printf("bench: attached\n"); }
tracepoint:sched:sched_switch { @ = count(); }
BT

# bpftrace prints BEGIN's line once its probes are attached ("Attaching N
# probes" comes before); -B line gets it to the log at once
bt_configs="bpftrace floor bpftrace-unpinned floor-unpinned floor-stats redis-floor"
if ! command -v "$BPFTRACE" >/dev/null; then
	for c in $bt_configs; do
		echo "skipped: bpftrace not installed" >"$tmp/$c.off"
	done
elif ! [ -e /sys/kernel/tracing/events ]; then
	for c in $bt_configs; do
		echo "skipped: tracefs cannot be mounted" >"$tmp/$c.off"
	done
else
	# bpftrace 0.17 gives up where RLIMIT_MEMLOCK cannot be raised (see the shim)
	shim=$tmp/memlock-shim.so
	if ! gcc -shared -fPIC -O2 -Wall -Wextra -Werror "$(dirname "$0")/memlock-shim.c" \
		-o "$shim" -ldl 2>"$tmp/shim.log"; then
		for c in $bt_configs; do
			fail "$c" "the memlock shim for bpftrace does not build" "$tmp/shim.log"
		done
	fi
fi

# port_busy PORT: something listens on it (an instance of another test)
port_busy() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# Our own redis-server, nothing saved to disk, for the whole bench; wprof is
# attached to it and detached at every repetition. It runs unpinned (the
# ordinary case of a service) and pinned, with the client, to one CPU: there
# a request is two switches on that CPU and no wait for another CPU to wake,
# whose length on a VM swings by tens of percent from run to run; the
# pinned rows resolve a few percent, and a switch's cost weighs most there.
redis_configs="redis redis-wprof redis-wprof-stats redis-pinned redis-wprof-pinned redis-floor"
redis_cpus=""
redis_off() {
	local c
	for c in $redis_configs; do echo "$1" >"$tmp/$c.off"; done
}
if ! command -v "$REDIS_SERVER" >/dev/null; then
	redis_off "skipped: redis-server not installed"
elif ! command -v "$REDIS_BENCHMARK" >/dev/null; then
	redis_off "skipped: redis-benchmark not installed (redis-tools)"
elif ! command -v taskset >/dev/null; then
	redis_off "skipped: taskset not installed (util-linux)"
else
	port=$REDIS_PORT
	while port_busy "$port" && [ "$port" -lt $((REDIS_PORT + 20)) ]; do
		port=$((port + 1))
	done
	mkdir "$tmp/redis"
	if start_tool redis redis-server "$tmp/redis.log" "Ready to accept connections" \
		"$REDIS_SERVER" --port "$port" --bind 127.0.0.1 --save '' --appendonly no \
		--dir "$tmp/redis"; then
		redis_pid=$tool_pid
		redis_cpus=$(taskset -p -c "$redis_pid" | awk '{ print $NF }')
		[ -n "$redis_cpus" ] ||
			redis_off "failed: taskset could not read redis-server's CPUs"
	else
		redis_off "$(cat "$tmp/redis.off")"
	fi
fi

sleep 100000 &
idle=$!

# calibrate PIN: the loops that take RUN_SECONDS without a profiler
calibrate() {
	pipe_once "$1" 20000 | awk -v s="$RUN_SECONDS" '/ops\/sec/ {
		n = int($1 * s / 1000) * 1000; print n < 10000 ? 10000 : n }'
}
[ -n "$LOOPS" ] || LOOPS=$(calibrate 1)
[ -n "$LOOPS_U" ] || LOOPS_U=$(calibrate 0)
: "${LOOPS:=40000}" "${LOOPS_U:=40000}"

start_s=$SECONDS
# Throughput is measured as a user runs the tools; the per-event figures come
# from runs of their own (*-stats) with the kernel's BPF run-time accounting
# on, which costs two clock reads per program run.
configs="base wprof-a floor wprof-p-idle bpftrace"
configs="$configs base-unpinned wprof-a-unpinned floor-unpinned bpftrace-unpinned"
configs="$configs redis-floor redis redis-wprof wprof-a-stats floor-stats redis-wprof-stats"
configs="$configs redis-pinned redis-wprof-pinned"
# the resume walks by a program at every switch instead of BPF task work (the
# default with -a and -p where the kernel has it), side by side
configs="$configs wprof-a-exit wprof-a-exit-stats wprof-p-idle-exit"
# the wait for a CPU timed from wakeup events (a program at every wakeup), as
# on kernels where the programs cannot read the scheduler's count of it
configs="$configs wprof-a-rqw"
# every switch timed by a clock read of wprof's, not by the run queue's clock
configs="$configs wprof-a-sw"
# no steal read at switches (WPROF_STEAL=off): what keeping steal apart costs
configs="$configs wprof-a-nosteal wprof-a-nosteal-stats"
# who ran instead on and off (WPROF_RAN_INSTEAD=off): a ring of runs per CPU
# written at every switch, walked at each wait for a CPU; next to each other
# in every repetition, so that the rows are paired by it
configs="$configs wprof-a-ran wprof-a-noran wprof-a-ran-stats wprof-a-noran-stats"
# the timeline on and off (slices, threads' times by slice, long blocks): with
# -f json, an output that keeps each thread's time by slice
configs="$configs wprof-a-json wprof-a-json-stats wprof-a-notime wprof-a-notime-stats"
# redis again, in the other order, at another time of the repetition: a run
# of redis-benchmark is scattered more than the pipe's (a few percent pinned,
# tens of percent unpinned), and a median of twice the runs is steadier. The
# runs without a profiler sit next to the others in both halves: a pair of
# runs next to each other sees the least of the machine's drift (paired()).
configs="$configs redis-wprof-pinned redis-pinned redis-wprof redis redis-floor"
for i in $(seq 1 "$REPS"); do
	# every other repetition in the reverse order: no configuration is always
	# the one that runs after a given other (the machine's state it leaves)
	order=$configs
	[ $((i % 2)) = 0 ] && order=$(echo "$configs" | tr ' ' '\n' | tac | tr '\n' ' ')
	for c in $order; do
		[ -e "$tmp/$c.off" ] && continue
		case $c in
		*-unpinned) PIN=0 ;;
		*) PIN=1 ;;
		esac
		[ "$c" = floor-stats ] && sysctl -q kernel.bpf_stats_enabled=1
		case $c in
		base*) pipe_run "$c" "$i" ;;
		wprof-a-stats)
			run_under "$c" "$i" wprof "recording with" \
				"$WPROF" record -a --stats -o /dev/null ;;
		wprof-a-exit-stats)
			run_under "$c" "$i" wprof "recording with" \
				env WPROF_RESUME_WALK=exit "$WPROF" record -a --stats -o /dev/null ;;
		wprof-a-exit)
			run_under "$c" "$i" wprof "recording with" \
				env WPROF_RESUME_WALK=exit "$WPROF" record -a -o /dev/null ;;
		wprof-a-rqw)
			run_under "$c" "$i" wprof "recording with" \
				env WPROF_RUNQ=wakeup "$WPROF" record -a -o /dev/null ;;
		wprof-a-sw)
			run_under "$c" "$i" wprof "recording with" \
				env WPROF_SWITCH_TIME=switch "$WPROF" record -a -o /dev/null ;;
		wprof-a-nosteal)
			run_under "$c" "$i" wprof "recording with" \
				env WPROF_STEAL=off "$WPROF" record -a -o /dev/null ;;
		wprof-a-nosteal-stats)
			run_under "$c" "$i" wprof "recording with" \
				env WPROF_STEAL=off "$WPROF" record -a --stats -o /dev/null ;;
		wprof-a-ran-stats)
			run_under "$c" "$i" wprof "recording with" \
				"$WPROF" record -a --stats -o /dev/null ;;
		wprof-a-noran)
			run_under "$c" "$i" wprof "recording with" \
				env WPROF_RAN_INSTEAD=off "$WPROF" record -a -o /dev/null ;;
		wprof-a-noran-stats)
			run_under "$c" "$i" wprof "recording with" \
				env WPROF_RAN_INSTEAD=off "$WPROF" record -a --stats -o /dev/null ;;
		wprof-a-json)
			run_under "$c" "$i" wprof "recording with" \
				"$WPROF" record -a -f json -o /dev/null ;;
		wprof-a-json-stats)
			run_under "$c" "$i" wprof "recording with" \
				"$WPROF" record -a -f json --stats -o /dev/null ;;
		wprof-a-notime)
			run_under "$c" "$i" wprof "recording with" \
				"$WPROF" record -a -f json --slice 0 --long-block 0 -o /dev/null ;;
		wprof-a-notime-stats)
			run_under "$c" "$i" wprof "recording with" \
				"$WPROF" record -a -f json --slice 0 --long-block 0 --stats -o /dev/null ;;
		wprof-a*)
			run_under "$c" "$i" wprof "recording with" \
				"$WPROF" record -a -o /dev/null ;;
		wprof-p-idle)
			run_under "$c" "$i" wprof "recording with" \
				"$WPROF" record -p "$idle" -o /dev/null ;;
		wprof-p-idle-exit)
			run_under "$c" "$i" wprof "recording with" \
				env WPROF_RESUME_WALK=exit "$WPROF" record -p "$idle" -o /dev/null ;;
		bpftrace*)
			run_under "$c" "$i" bpftrace "bench: attached" \
				env LD_PRELOAD="$shim" "$BPFTRACE" -B line "$tmp/offcpu.bt" ;;
		floor* | redis-floor)
			run_under "$c" "$i" bpftrace "bench: attached" \
				env LD_PRELOAD="$shim" "$BPFTRACE" -B line "$tmp/floor.bt" ;;
		redis | redis-pinned) redis_run "$c" "$i" ;;
		redis-wprof | redis-wprof-pinned)
			run_under "$c" "$i" wprof "recording with" \
				"$WPROF" record -p "$redis_pid" -o /dev/null ;;
		redis-wprof-stats)
			run_under "$c" "$i" wprof "recording with" \
				"$WPROF" record -p "$redis_pid" --stats -o /dev/null ;;
		esac
		[ "$c" = floor-stats ] && sysctl -q kernel.bpf_stats_enabled=0
	done
done
if [ -n "$redis_pid" ] && stop_tool redis-server "$redis_pid"; then
	[ "$stop_rc" = 0 ] || note "redis-server exited with status $stop_rc"
fi

# ---- wprof's own CPU beside many processes ----

# `wprof record -a` beside IDLE_PROCS idle processes (sleep): wprof keeps maps
# and symbols for each, and must learn when one ends. Its CPU time over
# IDLE_S s from SETTLE_S s after it attached (its /proc/PID/schedstat), with
# process ends from pidfds (the default) and from /proc/PID/stat of each
# process at every drain (WPROF_PROC_ENDS=proc), interleaved, IDLE_REPS each.
IDLE_PROCS=${BENCH_IDLE_PROCS:-2000}
IDLE_S=${BENCH_IDLE_SECONDS:-10}
IDLE_REPS=${BENCH_IDLE_REPS:-3}
sleepers=""
# own_cpu CONFIG REP ENV...: one run, its ms of CPU appended to CONFIG.ops
own_cpu() {
	local c=$1 log=$tmp/$1.$2.log c0 c1
	shift 2
	[ -e "$tmp/$c.off" ] && return
	start_tool "$c" wprof "$log" "recording with" env "$@" "$WPROF" record -a -o /dev/null ||
		return
	sleep "$SETTLE_S"
	c0=$(awk '{ print $1 }' "/proc/$tool_pid/schedstat")
	sleep "$IDLE_S"
	c1=$(awk '{ print $1 }' "/proc/$tool_pid/schedstat")
	stop_tool "$c" "$tool_pid"
	[ "$stop_rc" = 0 ] || { fail "$c" "wprof exited with status $stop_rc" "$log"; return; }
	echo "$(((c1 - c0) / 1000000)) 0" >>"$tmp/$c.ops"
}
for ((i = 0; i < IDLE_PROCS; i++)); do
	sleep 100000 &
	sleepers="$sleepers $!"
done
for i in $(seq "$IDLE_REPS"); do
	own_cpu own-pidfd "$i" WPROF_PROC_ENDS=auto
	own_cpu own-proc "$i" WPROF_PROC_ENDS=proc
done
# shellcheck disable=SC2086 # a list of pids
{ kill $sleepers; wait $sleepers; } 2>/dev/null
sleepers=""

# ---- memory under process churn ----

# `wprof record -a` while churn runs CHURN_PROCS processes (fork, exec, 4
# naps, exit) in phases of 1000, with a pause after each; wprof's VmRSS is
# read in each pause, a drain (1 s) after the phase's end, with the tasks the
# machine created so far (/proc/stat's processes: -a sees them all, churn's
# and any other's). Sets churn_rss to "PROCS KIB TASKS" lines, or churn_off
# to why there is none.
CHURN_PROCS=${BENCH_CHURN_PROCS:-10000}
churn_rss=""
churn_off=""
churn_run() {
	local churn=$OUT/tests/workloads/churn log=$tmp/churn.wprof.log clog=$tmp/churn.log
	local seen=0 n procs phases=$((CHURN_PROCS / 1000)) cpid stop_s=$STOP_S
	if ! [ -x "$churn" ]; then
		churn_off="skipped: $churn is not built (make test-bins)"
		return
	fi
	start_tool churn-rss wprof "$log" "recording with" "$WPROF" record -a -o /dev/null ||
		{ churn_off=$(cat "$tmp/churn-rss.off"); return; }
	timeout -k 5 $((phases * 20)) "$churn" -l "$clog" -n "$phases" -p 1000 -t 0 -d 4 \
		-w 1500 >/dev/null 2>&1 &
	cpid=$!
	while kill -0 "$cpid" 2>/dev/null || [ "$seen" -lt "$(cat "$clog" 2>/dev/null | wc -l)" ]; do
		n=$(cat "$clog" 2>/dev/null | wc -l)
		if [ "$n" -gt "$seen" ]; then
			seen=$n
			procs=$(awk 'END { print $4 }' "$clog")
			sleep 1.1
			churn_rss="$churn_rss$procs $(awk '/^VmRSS:/ { print $2 }' "/proc/$tool_pid/status") $(awk '/^processes / { print $2 }' /proc/stat)
"
			printf 'churn: %s processes, wprof RSS %s KiB\n' "$procs" \
				"$(echo "$churn_rss" | awk 'NF { r = $2 } END { print r }')"
		fi
		sleep 0.1
	done
	wait "$cpid" || note "churn exited with status $? (its figures stop there)"
	# symbolizing what 10,000 processes ran takes longer than a bench run's stop
	STOP_S=120
	stop_tool churn-rss "$tool_pid"
	STOP_S=$stop_s
}
churn_run

# onoff PID VAR NAME: REPS recordings of PID (5 s, --stats), with VAR=off and
# without, in turns; prints a "MODE TP_SWITCH SAMPLE PER_SWITCH TARGET_SWITCH"
# line for each (ns: the kernel's BPF time per run of tp_switch and of
# on_cpu_sample, every run timed; wprof's per context switch, and per switch
# of the targets, one in 64 timed). The logs: $tmp/NAME-MODE.REP.log.
onoff() {
	local pid=$1 var=$2 name=$3 mode log i
	for i in $(seq 1 "$REPS"); do
		for mode in on off; do
			log=$tmp/$name-$mode.$i.log
			# shellcheck disable=SC2046 # an optional VAR=VALUE word
			timeout -k 5 30 env $([ "$mode" = off ] && echo "$var=off") \
				"$WPROF" record -p "$pid" -d 5 --stats -o /dev/null 2>"$log" || continue
			echo "$mode $(awk '
				$2 == "bpf" && ($3 == "tp_switch" || $3 == "on_cpu_sample") && $4 > 0 {
					n[$3] = $6 / $4 }
				$2 == "bpf" && $3 == "per" && $4 == "context" { c = $6 }
				$2 == "switches" && $3 == "in" && $4 == "all" { t = $6 }
				END { printf "%.0f %.0f %.0f %.0f", n["tp_switch"], n["on_cpu_sample"], c, t }' "$log")"
		done
	done
}

# onoff_row LABEL ROWS COL_A UNIT_A COL_B UNIT_B: onoff()'s ROWS as a row of
# the table: the medians of columns A and B (2 to 5), on vs off, and A's difference.
onoff_row() {
	echo "$2" | awk -v label="$1" -v a="$3" -v ua="$4" -v b="$5" -v ub="$6" '
		function med(x, n,   i, j, t) {
			for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++)
				if (x[j] < x[i]) { t = x[i]; x[i] = x[j]; x[j] = t }
			return n % 2 ? x[(n + 1) / 2] : (x[n / 2] + x[n / 2 + 1]) / 2 }
		NF == 5 { n[$1]++; va[$1, n[$1]] = $a; vb[$1, n[$1]] = $b }
		END {
			for (m in n) { for (i = 1; i <= n[m]; i++) { x[i] = va[m, i]; y[i] = vb[m, i] }
				ma[m] = med(x, n[m]); mb[m] = med(y, n[m]) }
			printf "| %s | %.0f vs %.0f %s; %.0f vs %.0f %s (medians of %d recordings each) | %+.0f %s | | |\n",
				label, ma["on"], ma["off"], ua, mb["on"], mb["off"], ub, n["on"],
				ma["on"] - ma["off"], ua
		}'
}

# ---- waits for a CPU inside a cgroup: the split of throttled time ----

# Four spinners sharing CPU 0 in a cgroup of their own with no cap, each
# yielding it every few us (runq -y -t 4): every switch of theirs leaves a
# thread runnable inside a group, the only switches at which the throttled
# split reads anything. Recorded with WPROF_THROTTLE=off and without
# (onoff()). Sets group_rows, or group_off.
group_rows=""
group_off=""
group_run() {
	local runq=$OUT/tests/workloads/runq cg="" rpid
	if ! [ -x "$runq" ]; then
		group_off="skipped: $runq is not built (make test-bins)"
		return
	fi
	for cg in /sys/fs/cgroup/cpu/wprof-bench-$$ /sys/fs/cgroup/wprof-bench-$$; do
		mkdir "$cg" 2>/dev/null && break
		cg=""
	done
	if [ -z "$cg" ]; then
		group_off="skipped: no cgroup of the cpu controller could be made"
		return
	fi
	sh -c "echo \$\$ >'$cg/cgroup.procs' && exec '$runq' -q -y -t 4 -n $((REPS * 2 * 12 + 20))" \
		>/dev/null 2>&1 &
	rpid=$!
	sleep 1
	group_rows=$(onoff "$rpid" WPROF_THROTTLE group)
	kill "$rpid" 2>/dev/null
	wait "$rpid" 2>/dev/null
	rmdir "$cg" 2>/dev/null
	[ -n "$group_rows" ] || group_off="failed: no recording of the spinners finished"
}
group_run

# ---- a threaded Python program: its frames read, or not ----

# tests/workloads/pythreads.py under Debian's python3 (a napper, a lock
# waiter, a burner), recorded with WPROF_PYTHON=off and without (onoff()):
# the time per sample and per context switch (the walks of the off-CPU
# stacks read the frames too). Sets py_rows, or py_off.
py_rows=""
py_off=""
python_run() {
	local work=tests/workloads/pythreads.py ppid
	if ! [ -x /usr/bin/python3 ]; then
		py_off="skipped: no /usr/bin/python3"
		return
	fi
	/usr/bin/python3 "$work" -n $((REPS * 2 * 12 + 20)) -d 1 >/dev/null 2>&1 &
	ppid=$!
	sleep 1
	py_rows=$(onoff "$ppid" WPROF_PYTHON py)
	kill "$ppid" 2>/dev/null
	wait "$ppid" 2>/dev/null
	[ -n "$py_rows" ] || py_off="failed: no recording of the Python program finished"
}
python_run

# ---- a build under `wprof record -- make -j2` ----

# This project's `make -j2 all` in a clone of it, BUILD_REPS times without
# and with `wprof record -o /dev/null --` (interleaved): the build's wall
# time and CPU time (bash's time: the build's processes, and wprof's with
# them), and wprof's own CPU (perf stat --no-inherit: wprof's process
# alone, its children not). Sets build_off to why there is no figure.
BUILD_REPS=${BENCH_BUILD_REPS:-1}
build_off=""
# build_once CONFIG REP: one build from clean; "WALL CPU [OWN]" appended to CONFIG.build
build_once() {
	local c=$1 dir=$tmp/build-clone log=$tmp/$1.$2.log t wprof=()
	[ -n "$build_off" ] && return
	rm -rf "$dir/build"
	case $c in
	build-wprof) wprof=(perf stat -e task-clock --no-inherit -x, -o "$tmp/$c.$2.own"
		-- "$(readlink -f "$WPROF")" record -o /dev/null --) ;;
	# no stacks held for new programs (the cost of holding them: on vs off)
	build-noheld) wprof=(perf stat -e task-clock --no-inherit -x, -o "$tmp/$c.$2.own"
		-- env WPROF_HELD=off "$(readlink -f "$WPROF")" record -o /dev/null --) ;;
	esac
	# the clone builds in its own build/, whatever OUT and WPROF say here
	t=$( { TIMEFORMAT='%R %U %S'; time (cd "$dir" &&
		"${wprof[@]}" env -u OUT -u WPROF make -j2 all >"$log" 2>&1); } 2>&1) ||
		{ build_off="failed: $c: the build or wprof failed (bench: $log)"; tail -n 15 "$log" >&2; return; }
	echo "$t" | awk -v own="$(awk -F, '/task-clock/ { print $1 / 1000 }' "$tmp/$c.$2.own" 2>/dev/null)" \
		'{ print $1, $2 + $3, own }' >>"$tmp/$c.build"
	printf 'rep %d %-12s %s\n' "$2" "$c" "$(tail -n 1 "$tmp/$c.build")"
}
if ! git clone -q "$(dirname "$0")/.." "$tmp/build-clone" 2>"$tmp/clone.log"; then
	build_off="failed: cannot clone the project (bench: $(head -n 1 "$tmp/clone.log"))"
fi
for i in $(seq "$BUILD_REPS"); do
	build_once build-base "$i"
	build_once build-wprof "$i"
	build_once build-noheld "$i"
done
rm -rf "$tmp/build-clone"

# ---- the table ----

# med NAME: m and mb, the median of NAME.ops and whether it is an upper bound
med() {
	m="" mb=0
	[ -s "$tmp/$1.ops" ] || return 1
	read -r m mb < <(median_of "$tmp/$1.ops")
}

# paired NAME BASE_NAME [ALSO]: "LOSS BOUND PAIRS": the median over the
# repetitions that have a figure in both (a third field of their .ops: the
# pipe's repetition, redis's REP.K), and in ALSO if given, of the throughput
# NAME lost against BASE_NAME's run of the same repetition (and the same half
# of it, for redis), in percent; BOUND 1 if that median is a lower bound (a
# run of NAME cut short: its loss is at least its figure), and how many pairs;
# nothing if none. A baseline run cut short pairs with nothing. The
# machine's pace drifts over minutes (this VM's pinned pipe, with no
# profiler, from 47,000 to 71,000 ops/s across the repetitions of one bench):
# a run against the baseline of its own repetition sees less of that drift
# than two medians over the whole bench (an unpinned redis run, more: this
# VM's spread from 15,900 to 24,600 req/s in one bench, with a profiler's
# cost a few percent). Only the rows run next to their baseline in each
# repetition are paired (the pipe's others come minutes later, after the
# redis runs).
paired() {
	local pairs
	pairs=$(awk -v also="${3:+1}" 'FILENAME == ARGV[1] { if (NF >= 3 && !$2) b[$3] = $1; next }
		also && FILENAME == ARGV[2] { if (NF >= 3) a[$3] = 1; next }
		NF >= 3 && ($3 in b) && b[$3] > 0 && (!also || ($3 in a)) {
			printf "%.6f %d\n", 100 * (1 - $1 / b[$3]), $2 }' \
		"$tmp/$2.ops" ${3:+"$tmp/$3.ops"} "$tmp/$1.ops" 2>/dev/null)
	[ -n "$pairs" ] || return 0
	# a loss that is a lower bound, sorted at or below the median, may be
	# above it: the median is then a lower bound too
	echo "$pairs" | sort -n | awk '{ v[NR] = $1; b[NR] = $2 }
		END {
			hi = int(NR / 2) + 1
			m = NR % 2 ? v[hi] : (v[hi - 1] + v[hi]) / 2
			for (i = 1; i <= hi; i++)
				mb = mb || b[i]
			printf "%.6f %d %d\n", m, mb, NR
		}'
}

# row LABEL NAME CONFIG BASE UNIT [GOAL_LOSS_PCT [BASE_NAME]]: one
# configuration: its median, throughput lost and time added per op against the
# median BASE ("=": this is the baseline). NAME.ops holds the figures,
# CONFIG.off says why the configuration was skipped or stopped. BASE_NAME: the
# baseline's figures; where the runs have their repetitions, the loss paired
# by repetition is given beside the loss of the medians, and the goal is
# judged on it, each run against the baseline run beside it (the medians'
# verdict is given too where it differs); else on the medians, and a goal
# they miss with a median within the baseline's range is said to be within
# the noise. A loss that is a bound (a run cut short) meets no goal: it can
# only miss one.
row() {
	local label=$1 name=$2 c=$3 base=$4 unit=$5 goal=${6:-} bname=${7:-} cell="" gt="" g=""
	local pl="" plb=0 pn=0 spread=0
	if ! med "$name"; then
		cell=$(cat "$tmp/$c.off" 2>/dev/null || echo "failed: no figure")
		echo "| $label | $cell | | | |"
		return
	fi
	[ "$mb" = 1 ] && { cell="< " gt="> "; }
	# the spread says how far apart the repetitions were on this shared machine
	cell="$cell$(printf %.0f "$m") $unit $(sort -n "$tmp/$name.ops" |
		awk 'NR == 1 { lo = $1 } { hi = $1 } END { if (NR > 1) printf "(%.0f-%.0f)", lo, hi }')"
	[ -e "$tmp/$c.off" ] &&
		cell="$cell ($(wc -l <"$tmp/$name.ops") runs; then $(cat "$tmp/$c.off"))"
	if [ "$base" = "=" ]; then
		echo "| $label | $cell | baseline | | |"
		return
	fi
	if [ -z "$base" ]; then
		echo "| $label | $cell | n/a: no baseline | | |"
		return
	fi
	[ -n "$bname" ] && read -r pl plb pn < <(paired "$name" "$bname"; echo)
	if [ -n "$goal" ]; then
		# the medians' noise note, for rows without paired figures
		[ -z "$pl" ] && [ -n "$bname" ] && [ "$mb" = 0 ] && sort -n "$tmp/$bname.ops" |
			awk -v v="$m" 'NR == 1 { lo = $1 } { hi = $1 } END { exit !(NR > 1 && v >= lo) }' &&
			spread=1
		g=$(awk -v b="$base" -v v="$m" -v mb="$mb" -v pl="$pl" -v plb="$plb" -v goal="$goal" \
			-v spread="$spread" '
		# a loss that is a lower bound (a run cut short) can only miss the goal
		function verdict(loss, bound) {
			if (loss > goal + 1e-6) # paired() gives 6 decimals
				return "**not met**"
			return bound ? "cannot tell (a run cut short)" : "met"
		}
		BEGIN {
			vm = verdict(100 * (1 - v / b), mb)
			if (pl == "") {
				noise = vm != "met" && spread ? " (within the spread of the runs without a profiler)" : ""
				printf "loss ≤ %s%%: %s%s", goal, vm, noise
				exit
			}
			vp = verdict(pl, plb)
			printf "loss ≤ %s%%, paired by repetition: %s%s", goal, vp,
				(vm != vp ? " (by the medians: " vm ")" : "")
		}')
	fi
	awk -v label="$label" -v cell="$cell" -v b="$base" -v v="$m" -v gt="$gt" -v g="$g" \
		-v pl="$pl" -v plb="$plb" -v pn="$pn" 'BEGIN {
		ps = ""
		if (pl != "")
			ps = sprintf(" (%s%.1f%% paired by repetition, %d pair%s)", (plb ? "> " : ""), pl, pn,
				(pn == 1 ? "" : "s"))
		printf "| %s | %s | %s%.1f%%%s | %s%+.1f%% | %s |\n", label, cell, gt, 100 * (1 - v / b),
			ps, gt, 100 * (b / v - 1), g
	}'
}

# ratio LABEL WPROF FLOOR BASE [BASE_NAME [GOAL]]: wprof's added time per op
# as a multiple of the floor's; with BASE_NAME, the same of their losses
# paired by repetition beside it, over the repetitions that have all three.
# GOAL: the most it may be (3, the issue's goal for the pipe, by default; ""
# for none), judged on the paired figures where the runs have them, as
# row() does (the medians' verdict beside it where it differs), else on the
# medians: a few percent of cost each, the two medians are moved by the
# machine's drift between repetitions as much as by the tools (unpinned pipe
# runs of one bench: 38,600 ops/s without a profiler in two repetitions,
# 42,100-44,800 in the three others), where a run beside its baseline sees
# little of it. A figure from a run cut short is a bound: wprof's cost a
# lower one (a multiple that can then only miss the goal), the floor's cost
# a lower one too (a multiple that can then only meet it).
ratio() {
	local label=$1 w f wb fb pw="" pf="" pwb=0 pfb=0 pn=0 goal=${6-3}
	# a redis figure's configuration is its name less -SET or -GET
	med "$2" || { echo "| $label | n/a: wprof $(cat "$tmp/${2%-[SG]ET}.off" 2>/dev/null) | | | |"; return; }
	w=$m wb=$mb
	med "$3" || { echo "| $label | n/a: floor $(cat "$tmp/${3%-[SG]ET}.off" 2>/dev/null) | | | |"; return; }
	f=$m fb=$mb
	[ -n "$4" ] || { echo "| $label | n/a: no baseline | | | |"; return; }
	if [ -n "${5:-}" ]; then
		# both over the same repetitions: the same count of pairs
		read -r pw pwb pn < <(paired "$2" "$5" "$3"; echo)
		read -r pf pfb _ < <(paired "$3" "$5" "$2"; echo)
	fi
	awk -v label="$label" -v b="$4" -v w="$w" -v f="$f" -v wb="$wb" -v fb="$fb" \
		-v pw="$pw" -v pf="$pf" -v pwb="$pwb" -v pfb="$pfb" -v pn="$pn" -v goal="$goal" '
	# the verdict on a multiple r: "met", "not met", or "open" where a bound
	# (lo: wprof cost at least; hi: the floor cost at least) leaves it open
	function verdict(r, lo, hi) {
		if (lo && hi)
			return "open"
		if (lo)
			return r > goal + 1e-6 ? "not met" : "open"
		if (hi)
			return r <= goal + 1e-6 ? "met" : "open"
		return r <= goal + 1e-6 ? "met" : "not met"
	}
	# the verdict on wprof costing cw and the floor cf (time added per op),
	# and why (jwhy): under 1% (or a gain), a cost is within what runs of
	# this VM scatter by: no multiple to tell, but 3 times that much is too
	# much; a gain of wprof against a floor that costs is a multiple under
	# any goal
	function judge(cw, cf, lo, hi) {
		jwhy = ""
		if (cf < 0.01 && !hi) {
			if (cw >= 0.01 * goal) {
				jwhy = sprintf("wprof costs %s%% or more", goal)
				return "not met"
			}
			jwhy = "the floor costs nothing measurable"
			return "n/a"
		}
		return verdict(cw / cf, lo, hi)
	}
	function shown(v) {
		if (v == "not met")
			return "**not met**"
		return v == "open" ? "cannot tell (a run cut short)" : v
	}
	BEGIN {
		cw = b / w - 1; cf = b / f - 1
		costs = sprintf("floor %s%+.1f%%, wprof %s%+.1f%%", (fb ? "> " : ""), 100 * cf,
			(wb ? "> " : ""), 100 * cw)
		paired = pw != "" && pf != "" && pw < 100 && pf < 100
		if (paired) {
			# the paired losses as time added per op
			pcw = 100 / (100 - pw) - 1; pcf = 100 / (100 - pf) - 1
			costs = costs sprintf("; paired by repetition (%d): floor %s%+.1f%%, wprof %s%+.1f%%", pn,
				(pfb ? "> " : ""), 100 * pcf, (pwb ? "> " : ""), 100 * pcw)
			if (pcf >= 0.01)
				costs = costs sprintf(", %s%.1fx", (pwb && !pfb ? "> " : (pfb && !pwb ? "< " : "")),
					pcw / pcf)
		}
		if (cf < 0.01 && !fb)
			head = "n/a: the floor costs nothing measurable"
		else if (cw < 0)
			head = "n/a: wprof made the runs faster"
		else {
			head = sprintf("wprof costs %s%.1fx the floor", (wb && !fb ? "> " : (fb && !wb ? "< " : "")), cw / cf)
			if (wb && fb)
				head = head " (runs cut short: rough)"
		}
		g = ""
		if (goal != "") {
			v = judge(cw, cf, wb, fb)
			vwhy = jwhy
			if (paired) {
				vp = judge(pcw, pcf, pwb, pfb)
				g = sprintf("≤ %sx, paired by repetition: %s", goal, shown(vp))
				if (jwhy != "")
					g = g " (" jwhy ")"
				if (v != vp)
					g = g " (by the medians: " shown(v) (vwhy != "" ? ", " vwhy : "") ")"
			} else {
				g = sprintf("≤ %sx: %s", goal, shown(v))
				if (vwhy != "")
					g = g " (" vwhy ")"
			}
		}
		printf "| %s | %s | | %s | %s |\n", label, head, costs, g
	}'
}

# switch_ns CONFIG LABEL: wprof's BPF time per context switch, the median of
# CONFIG's recordings (--stats: the total ns of the programs that run at every
# switch, sched_entry_tp, sched_switch and sched_exit_tp, and of the resume
# task work's walks, over the switches, each recording's), and the
# sched_switch program's own; sets `wprof_ns`. Medians, as every row: on a
# shared VM nine runs of the same recording gave 318 to 465 ns a switch.
wprof_ns=""
switch_ns() {
	local line logs=()
	mapfile -t logs < <(compgen -G "$tmp/$1.*.log" || echo /dev/null)
	line=$(awk -v label="$2" -v off="$(cat "$tmp/$1.off" 2>/dev/null)" '
		function median(a, n,    i, j, t) {
			for (i = 2; i <= n; i++)
				for (j = i; j > 1 && a[j - 1] > a[j]; j--) {
					t = a[j]; a[j] = a[j - 1]; a[j - 1] = t
				}
			return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
		}
		FNR == 1 { f++ }
		$1 == "wprof:" && $2 == "bpf" && ($3 == "tp_switch" || $3 == "raw_switch") && $4 > 0 {
			name = $3; run[f] = $6 / $4
		}
		$1 == "wprof:" && $2 == "bpf" && $3 == "per" && $4 == "context" {
			for (k = 1; k <= NF; k++) if ($k == "switches)") sw = $(k - 1)
			per[f] = $6; all_sw += sw
			parts = $0; sub(/.*ns \(/, "", parts); sub(/, over .*/, "", parts)
		}
		END {
			printf "| wprof BPF time per context switch, %s | ", label
			for (i = 1; i <= f; i++)
				if ((i in per) && (i in run)) { n++; p[n] = per[i]; r[n] = run[i] }
			if (!n) { printf "n/a: %s | | | |\n", off != "" ? off : "no --stats figures"; exit }
			m = median(p, n)
			printf "%.0f ns (%.0f-%.0f; %s; %s alone %.0f ns/run; median of %d recordings, %d switches) | | | ≤ 600 ns: %s |\n",
				m, p[1], p[n], parts, name, median(r, n), n, all_sw, m <= 600 ? "met" : "**not met**"
			printf "NS %.0f\n", m
		}' "${logs[@]}")
	echo "$line" | grep -v '^NS '
	wprof_ns=$(echo "$line" | awk '$1 == "NS" {print $2}')
}

# floor_ns: the floor's BPF time per run (its program runs once per switch),
# the median of the floor-stats runs', from the kernel's run-time accounting
# (nothing else attaches a tracepoint program named sched_switch while the
# bench runs; the accounting is on for those runs alone, and its counts
# start at each run's attach)
floor_ns() {
	python3 - "$tmp"/floor-stats.*.progs <<'PY' 2>/dev/null
import json, statistics, sys
per = []
runs = 0
for path in sys.argv[1:]:
    ns = cnt = 0
    try:
        with open(path) as f:
            progs = json.load(f)
    except (OSError, ValueError):
        continue  # bpftool failed that run: the others still count
    for p in progs:
        # bpftrace names a tracepoint program after its event (Debian bpftool has no pids)
        if p.get("type") == "tracepoint" and p.get("name") == "sched_switch" and p.get("run_cnt"):
            ns += p.get("run_time_ns", 0)
            cnt += p["run_cnt"]
    if cnt:
        per.append(ns / cnt)
        runs += cnt
if per:
    print("%.0f %d %d" % (statistics.median(per), runs, len(per)))
PY
}

pipe_base=""
med base && pipe_base=$m
pipe_base_u=""
med base-unpinned && pipe_base_u=$m
redis_base_set=""
med redis-SET && redis_base_set=$m
redis_base_get=""
med redis-GET && redis_base_get=$m
redis_base_set_p=""
med redis-pinned-SET && redis_base_set_p=$m
redis_base_get_p=""
med redis-pinned-GET && redis_base_get_p=$m

echo
echo "perf bench sched pipe -l $LOOPS pinned (both tasks on CPU $BENCH_CPU, the worst case),"
echo "-l $LOOPS_U unpinned (the ordinary case): about $RUN_SECONDS s each without a profiler, $PIPE_RUNS runs"
echo "per configuration and repetition under one attach of the tool (their median its figure),"
echo "started ${SETTLE_S} s after the tool attached; redis-benchmark -c 1 -t get,set against a"
echo "redis-server of its own: -n $REDIS_REQS unpinned, -n $REDIS_REQS_PINNED with the server and"
echo "the client on CPU $BENCH_CPU; $REPS interleaved repetitions (twice as many redis runs), medians;"
echo "\`make -j2 all\` of this project in a clone of it, $BUILD_REPS time(s) each without and with"
echo "\`wprof record -o /dev/null --\` (wprof's own CPU from perf stat --no-inherit);"
echo "$(nproc) CPUs, Linux $(uname -r); $((SECONDS - start_s)) s."
echo
echo "| configuration | median (min-max) | throughput lost | time added per op | goal |"
echo "|---|---|---|---|---|"
row "pipe pinned: no profiler" base base = ops/s
row "pipe pinned: wprof record -a" wprof-a wprof-a "$pipe_base" ops/s 15 base
row "pipe pinned: wprof record -p (an idle process)" wprof-p-idle wprof-p-idle "$pipe_base" ops/s "" base
row "pipe pinned: bpftrace off-CPU stacks" bpftrace bpftrace "$pipe_base" ops/s "" base
row "pipe pinned: floor (bpftrace counts sched_switch)" floor floor "$pipe_base" ops/s "" base
row "pipe unpinned: no profiler" base-unpinned base-unpinned = ops/s
row "pipe unpinned: wprof record -a" wprof-a-unpinned wprof-a-unpinned "$pipe_base_u" ops/s 8 \
	base-unpinned
row "pipe unpinned: bpftrace off-CPU stacks" bpftrace-unpinned bpftrace-unpinned "$pipe_base_u" ops/s "" base-unpinned
row "pipe unpinned: floor" floor-unpinned floor-unpinned "$pipe_base_u" ops/s "" base-unpinned
ratio "wprof -a vs the floor, pinned" wprof-a floor "$pipe_base" base
ratio "wprof -a vs the floor, unpinned" wprof-a-unpinned floor-unpinned "$pipe_base_u" base-unpinned
row "pipe pinned: wprof record -a, WPROF_RESUME_WALK=exit" wprof-a-exit wprof-a-exit "$pipe_base" ops/s
row "pipe pinned: wprof record -p (an idle process), WPROF_RESUME_WALK=exit" wprof-p-idle-exit wprof-p-idle-exit "$pipe_base" ops/s
row "pipe pinned: wprof record -a, WPROF_RUNQ=wakeup" wprof-a-rqw wprof-a-rqw "$pipe_base" ops/s
row "pipe pinned: wprof record -a, WPROF_SWITCH_TIME=switch" wprof-a-sw wprof-a-sw "$pipe_base" ops/s
row "pipe pinned: wprof record -a, WPROF_STEAL=off" wprof-a-nosteal wprof-a-nosteal "$pipe_base" ops/s
switch_ns wprof-a-stats "pipe pinned"
default_ns=$wprof_ns
switch_ns wprof-a-exit-stats "pipe pinned, WPROF_RESUME_WALK=exit"
exit_ns=$wprof_ns
switch_ns wprof-a-nosteal-stats "pipe pinned, WPROF_STEAL=off"
row "pipe pinned: wprof record -a (who ran instead on, beside the next)" wprof-a-ran wprof-a-ran \
	"$pipe_base" ops/s
row "pipe pinned: wprof record -a, WPROF_RAN_INSTEAD=off" wprof-a-noran wprof-a-noran "$pipe_base" ops/s
read -r rl rlb rn < <(paired wprof-a-ran wprof-a-noran; echo)
if [ -n "${rl:-}" ]; then
	rl=$(printf '%s%.1f%% paired by repetition (%d pair%s)' "$([ "$rlb" = 1 ] && echo '> ')" \
		"$rl" "$rn" "$([ "$rn" = 1 ] || echo s)")
fi
echo "| who ran instead, on vs off: pipe pinned, throughput lost to it | ${rl:-n/a: no pairs} | | | |"
switch_ns wprof-a-ran-stats "pipe pinned, who ran instead on"
ran_on_ns=$wprof_ns
switch_ns wprof-a-noran-stats "pipe pinned, WPROF_RAN_INSTEAD=off"
[ -n "$ran_on_ns" ] && [ -n "$wprof_ns" ] &&
	echo "| who ran instead, on vs off: BPF time per context switch, pipe pinned | $(printf '%+d' $((ran_on_ns - wprof_ns))) ns ($ran_on_ns vs $wprof_ns, medians) | | | |"
row "pipe pinned: wprof record -a -f json (the timeline on)" wprof-a-json wprof-a-json "$pipe_base" ops/s
row "pipe pinned: wprof record -a -f json --slice 0 --long-block 0 (off)" wprof-a-notime wprof-a-notime "$pipe_base" ops/s
switch_ns wprof-a-json-stats "pipe pinned, -f json (the timeline on)"
switch_ns wprof-a-notime-stats "pipe pinned, -f json, the timeline off"
read -r fns fruns freps < <(floor_ns; echo)
if [ -n "${fns:-}" ] && [ -n "$default_ns$exit_ns" ]; then
	echo "| floor BPF time per context switch, pipe pinned | $fns ns/run (median of $freps runs, $fruns program runs) | | | |"
	for w in "default:$default_ns" "WPROF_RESUME_WALK=exit:$exit_ns"; do
		[ -n "${w#*:}" ] || continue
		awk -v label="${w%%:*}" -v w="${w#*:}" -v f="$fns" 'BEGIN {
			printf "| wprof vs the floor, BPF time per context switch (%s) | %.1fx | | | ≤ 3x: %s |\n",
				label, w / f, w / f <= 3 ? "met" : "**not met**" }'
	done
else
	echo "| floor BPF time per context switch, pipe pinned | n/a: $(cat "$tmp/floor-stats.off" 2>/dev/null || echo "no figure") | | | |"
fi
if compgen -G "$tmp/wprof-a*.hwm" >/dev/null; then
	cat "$tmp"/wprof-a*.hwm | awk '{print $1 / 1024, 0}' >"$tmp/hwm.ops"
	grep -h '^wprof: peak RSS' "$tmp"/wprof-a*.log | awk '{print $4 / 1024, 0}' >"$tmp/rss.ops"
	hwm="n/a" rss="n/a"
	med hwm && hwm=$(printf '%.1f MiB' "$m")
	med rss && rss=$(printf '%.1f MiB' "$m")
	echo "| wprof record -a, peak RSS | $hwm recording (VmHWM at the stop), $rss in all (--stats) | | | |"
fi
if [ -s "$tmp/wprof-a.startcpu" ]; then
	# the load's part: --stats' `bpf load` line, of the wprof record -a --stats
	# recordings (the same programs as -a's, and the --stats figures)
	load="the programs' load (the kernel's verifier)"
	grep -h '^wprof: bpf load' "$tmp"/wprof-a-stats.*.log 2>/dev/null |
		awk '{print $4, 0}' >"$tmp/load.ops"
	most=$(grep -h '^wprof: bpf load' "$tmp"/wprof-a-stats.*.log 2>/dev/null |
		awk '$10 > m { m = $10 } END { if (NR) print m }')
	med load && load="$load: $(printf '%.0f' "$m") ms of it (-a --stats)" &&
		[ -n "$most" ] && load="$load, at most $most instructions verified in one program (the kernel's limit: 1000000)"
	cp "$tmp/wprof-a.startcpu" "$tmp/startcpu.ops"
	med startcpu && echo "| wprof record -a, start | $(printf '%.0f' "$m") ms of CPU (user + system) from its start to ${SETTLE_S} s after it attached: $load; snapshot, unwind tables, symbol tables | | | |"
fi
if [ -n "$churn_rss" ]; then
	echo "$churn_rss" | awk -v goal="flat" 'NF {
		if (!first) { first = $1; r1 = $2; t1 = $3 } last = $1; r2 = $2; t2 = $3 }
		END {
			d = last > first ? (r2 - r1) * 1024 / (last - first) : 0
			dt = t2 > t1 ? (r2 - r1) * 1024 / (t2 - t1) : 0
			printf "| wprof record -a under churn, RSS | %.1f MiB after %d processes, %.1f MiB after %d (%+.0f bytes per churn process; %+.0f per task the machine made, %d of them) | | | %s: %s |\n",
				r1 / 1024, first, r2 / 1024, last, d, dt, t2 - t1, goal,
				dt < 512 ? "met" : "**not met**"
		}'
else
	echo "| wprof record -a under churn, RSS | ${churn_off:-failed: no figure} | | | |"
fi
# own_row LABEL CONFIG: wprof's own CPU, median ms in IDLE_S s and share of a CPU
own_row() {
	if med "$2"; then
		echo "| $1 | $(printf '%.0f' "$m") ms of CPU in $IDLE_S s, $(awk -v m="$m" -v s="$IDLE_S" 'BEGIN { printf "%.2f", m / s / 10 }')% of a CPU $(sort -n "$tmp/$2.ops" |
			awk 'NR == 1 { lo = $1 } { hi = $1 } END { if (NR > 1) printf "(%d-%d ms)", lo, hi }') | | | |"
	else
		echo "| $1 | $(cat "$tmp/$2.off" 2>/dev/null || echo "failed: no figure") | | | |"
	fi
}
own_row "wprof record -a beside $IDLE_PROCS idle processes, own CPU: process ends from pidfds" own-pidfd
own_row "wprof record -a beside $IDLE_PROCS idle processes, own CPU: from /proc (WPROF_PROC_ENDS=proc)" own-proc
# build_row [CONFIG [NOTE]]: the build's figures (medians of the reps) without
# and with wprof (CONFIG's, default build-wprof; NOTE after "wprof record")
build_row() {
	local label="\`make -j2 all\` of wprof" c=${1:-build-wprof} note=${2:-}
	if [ -n "$build_off" ] || ! [ -s "$tmp/build-base.build" ] || ! [ -s "$tmp/$c.build" ]; then
		echo "| $label: under wprof record$note | ${build_off:-failed: no figure} | | | |"
		return
	fi
	awk -v label="$label" 'function med(a, n,   i, j, t) {
			for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++)
				if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
			return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2 }
		FNR == NR { bw[++nb] = $1; bc[nb] = $2; next }
		{ ww[++nw] = $1; wc[nw] = $2; wo[nw] = $3 }
		END {
			w0 = med(bw, nb); c0 = med(bc, nb); w1 = med(ww, nw); c1 = med(wc, nw); o = med(wo, nw)
			if (!note)
				printf "| %s: no profiler | %.1f s wall, %.1f s CPU | | | |\n", label, w0, c0
			printf "| %s: under wprof record%s | %.1f s wall, %.1f s CPU (wprof with it); wprof itself %.2f s of CPU, %.1f%% of the build'"'"'s | %+.1f%% wall | %+.1f s CPU in the build'"'"'s processes | wprof'"'"'s CPU < 5%% of the build'"'"'s: %s |\n",
				label, note, w1, c1, o, 100 * o / c0, 100 * (w1 / w0 - 1), c1 - o - c0,
				o < 0.05 * c0 ? "met" : "**not met**"
		}' note="$note" "$tmp/build-base.build" "$tmp/$c.build"
}
build_row
build_row build-noheld ", WPROF_HELD=off"
if [ -n "$group_rows" ]; then
	onoff_row "4 spinners yielding a CPU in a cgroup, wprof record -p --stats: throttled split on vs off (WPROF_THROTTLE=off)" \
		"$group_rows" 2 "ns per tp_switch run" 5 "ns per switch of a spinner"
else
	echo "| 4 spinners yielding a CPU in a cgroup: throttled split on vs off | ${group_off:-failed: no figure} | | | |"
fi
if [ -n "$py_rows" ]; then
	onoff_row "a threaded Python program (pythreads.py), wprof record -p --stats: Python frames on vs off (WPROF_PYTHON=off)" \
		"$py_rows" 3 "ns per sample" 4 "ns per context switch"
else
	echo "| a threaded Python program: Python frames on vs off | ${py_off:-failed: no figure} | | | |"
fi
row "redis SET, 1 client, pinned: no profiler" redis-pinned-SET redis-pinned = req/s
row "redis SET, 1 client, pinned: wprof record -p redis" redis-wprof-pinned-SET redis-wprof-pinned \
	"$redis_base_set_p" req/s 5 redis-pinned-SET
row "redis GET, 1 client, pinned: no profiler" redis-pinned-GET redis-pinned = req/s
row "redis GET, 1 client, pinned: wprof record -p redis" redis-wprof-pinned-GET redis-wprof-pinned \
	"$redis_base_get_p" req/s 5 redis-pinned-GET
row "redis SET, 1 client, unpinned: no profiler" redis-SET redis = req/s
row "redis SET, 1 client, unpinned: wprof record -p redis" redis-wprof-SET redis-wprof \
	"$redis_base_set" req/s 5 redis-SET
row "redis GET, 1 client, unpinned: no profiler" redis-GET redis = req/s
row "redis GET, 1 client, unpinned: wprof record -p redis" redis-wprof-GET redis-wprof \
	"$redis_base_get" req/s 5 redis-GET
row "redis SET, 1 client, unpinned: floor (bpftrace counts sched_switch)" redis-floor-SET redis-floor \
	"$redis_base_set" req/s "" redis-SET
row "redis GET, 1 client, unpinned: floor" redis-floor-GET redis-floor "$redis_base_get" req/s "" redis-GET
ratio "wprof -p redis vs the floor, SET unpinned" redis-wprof-SET redis-floor-SET "$redis_base_set" redis-SET ""
ratio "wprof -p redis vs the floor, GET unpinned" redis-wprof-GET redis-floor-GET "$redis_base_get" redis-GET ""
switch_ns redis-wprof-stats "redis"

last=""
for i in $(seq "$REPS" -1 1); do
	grep -q '^wprof: bpf' "$tmp/wprof-a-stats.$i.log" 2>/dev/null && { last=$i; break; }
done
if [ -n "$last" ]; then
	echo
	echo "wprof record -a --stats, pipe pinned, rep $last:"
	echo '```'
	grep -E '^wprof: (switches|bpf|user stacks)' "$tmp/wprof-a-stats.$last.log"
	echo '```'
fi
if [ -s "$notes" ]; then
	echo
	echo "Notes:"
	sed 's/^/- /' "$notes"
fi
echo
echo "Symbolization (10,000 distinct stacks of 20 frames over 20 modules, target < 1 s):"
if [ -x "$OUT/tests/tools/symbench" ]; then
	"$OUT/tests/tools/symbench" --check | sed 's/^/  /'
else
	echo "  skipped: $OUT/tests/tools/symbench is not built (make test-bins)"
fi
