#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# wprof learns that a process ended, and forgets what it kept for it. Under
# `wprof record -a --stats`, the test starts 20 processes (sleep), waits
# until wprof has them (the BPF side's map of maps for the unwinder has an
# entry for each), ends them itself, and waits two drains. Ground truth is
# the test's own list of the processes it ended. Checks, with pidfds (the
# default) and with WPROF_PROC_ENDS=proc (/proc/PID/stat at every drain):
# - the BPF map has an entry for each of the 20 before, and none after;
# - wprof exits 0;
# - --stats says where it learnt it: with pidfds, at least 20 ends told by
#   them; with /proc, none, no pidfd, and at least 20 processes asked of
#   /proc, with at least 20 answers read. (Not how few answers /proc gives
#   with pidfds: a process gone before wprof read it, as many of the test's
#   own bpftool runs are, is asked there.)
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"
require_bpf
command -v bpftool >/dev/null || fatal "bpftool is not installed"

N=20

# map_has PID: the BPF map of processes' maps has an entry for PID
map_has()
{
	local p=$1

	bpftool map lookup name proc_maps key $((p & 255)) $((p >> 8 & 255)) $((p >> 16 & 255)) \
		$((p >> 24 & 255)) >/dev/null 2>&1
}

# count_in_map PIDS...: how many of PIDS have an entry
count_in_map()
{
	local n=0 p

	for p in "$@"; do
		map_has "$p" && n=$((n + 1))
	done
	echo "$n"
}

for mode in auto proc; do
	log "WPROF_PROC_ENDS=$mode wprof record -a --stats"
	WPROF_PROC_ENDS=$mode "$WPROF" record -a --stats -o /dev/null 2>"$TMP/$mode.err" &
	wp=$!
	LIB_PIDS+=("$wp")
	wait_line "$TMP/$mode.err" "recording with" 60 || fatal "wprof did not start ($mode)"
	pids=()
	for ((i = 0; i < N; i++)); do
		sleep 300 &
		pids+=("$!")
		LIB_PIDS+=("$!")
	done
	# each exec is reported to wprof at once; the scan of /proc catches any it missed
	for ((i = 0; i < 50; i++)); do
		[ "$(count_in_map "${pids[@]}")" -eq "$N" ] && break
		sleep 0.1
	done
	check "$mode: an entry for each of the $N processes while they live" \
		test "$(count_in_map "${pids[@]}")" -eq "$N"
	kill "${pids[@]}"
	wait "${pids[@]}" 2>/dev/null
	sleep 3 # two drains or more
	left=$(count_in_map "${pids[@]}")
	check "$mode: no entry left of the $N processes after they ended ($left left)" \
		test "$left" -eq 0
	kill -INT "$wp"
	wait_exit "$wp" 60 || fatal "wprof did not stop ($mode)"
	check "$mode: wprof exits 0 (got $WAIT_RC)" test "$WAIT_RC" -eq 0
	line=$(grep '^wprof: process ends:' "$TMP/$mode.err")
	log "$line"
	read -r told watched unwatched late asked < <(echo "$line" |
		sed -n 's/.*: \([0-9]*\) told by pidfds; \([0-9]*\) processes still watched, \([0-9]*\) with no pidfd at first (\([0-9]*\) given one later; \([0-9]*\) answers.*/\1 \2 \3 \4 \5/p')
	if ! is_num "$told" || ! is_num "$asked"; then
		not_ok "$mode: no 'process ends' line in --stats"
		continue
	fi
	if [ "$mode" = auto ]; then
		check_ge "pidfds: ends told by them" "$told" "$N"
		check_ge "pidfds: processes still watched" "$watched" 1
	else
		check "proc: no end told by a pidfd ($told)" test "$told" -eq 0
		check "proc: no process watched ($watched)" test "$watched" -eq 0
		check "proc: none given a pidfd later ($late)" test "$late" -eq 0
		check_ge "proc: processes with no pidfd" "$unwatched" "$N"
		check_ge "proc: answers read from /proc" "$asked" "$N"
	fi
done
finish
