#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Ctrl-C (SIGINT) and SIGTERM end a recording early: `wprof record -p PID
# -d 60 -o FILE` gets the signal after 3 s, must exit 0 within 5 s (stop,
# drain the maps, symbolize: it takes well under a second on this workload)
# and still write valid stacks for the target.
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"
require_bpf
require_workload sleepburn

start_bg "$TMP/sleepburn.log" "$WORKLOADS/sleepburn"
pid=$BG_PID
wait_line "$TMP/sleepburn.log" '^ready [0-9]+$' 10 || fatal "sleepburn did not start"

for sig in INT TERM; do
	out=$TMP/$sig.folded
	log "wprof record -p $pid -d 60 -o $out, SIG$sig after 3 s"
	# A background job of a non-interactive shell starts with SIGINT ignored;
	# wprof installs its own handler, which resets that, as it must for a
	# terminal's Ctrl-C anyway.
	"$WPROF" record -p "$pid" -d 60 -o "$out" 2>"$TMP/$sig.err" &
	wp=$!
	LIB_PIDS+=("$wp")
	wait_line "$TMP/$sig.err" '^wprof: recording' 30 ||
		not_ok "SIG$sig: wprof did not start recording in 30 s"
	t_rec=$(now_ms)
	sleep 2
	kill -"$sig" "$wp"
	t0=$(now_ms)
	if wait_exit "$wp" 5; then
		ok "SIG$sig: wprof exited after $(($(now_ms) - t0)) ms"
		check "SIG$sig: exit status 0 (got $WAIT_RC)" test "$WAIT_RC" -eq 0
	else
		not_ok "SIG$sig: wprof still running 5 s after the signal"
		kill -KILL "$wp"
		continue
	fi
	sed 's/^/#   /' "$TMP/$sig.err" | head -20
	[ -s "$out" ] || { not_ok "SIG$sig: no output"; continue; }
	check_folded "$out"
	check "SIG$sig: burner's burn_cpu is in the output" \
		test "$(fold_sum "$out" on-cpu burner burn_cpu)" -gt 0
	check "SIG$sig: burner's off-CPU time is in the output" \
		test "$(fold_sum "$out" 'off-cpu:.*' burner)" -gt 0
	# everything recorded before the signal is there: the burner lived
	# through the window, which is the time from the recording line to the
	# signal (+/- the line's 100 ms polling and the signal's delivery)
	check_near "SIG$sig: burner on+off weight vs the time recorded (us)" \
		"$(fold_sum "$out" '.*' burner)" "$(((t0 - t_rec) * 1000))" 200000
done
check "target survives wprof's signals" kill -0 "$pid"
finish
