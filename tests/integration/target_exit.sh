#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# A target that exits during the recording ends it: sleepburn runs 3 s,
# `wprof record -p PID -d 30` must end within 4 s after the target exits
# (not after 30 s), exit 0, and name the workload's functions although the
# process is gone when symbolization runs (no `sleepburn+0x...` frames, no
# lost stacks).
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"
require_bpf
require_workload sleepburn

start_bg "$TMP/sleepburn.log" "$WORKLOADS/sleepburn" -n 3 -r "$TMP/report"
pid=$BG_PID
wait_line "$TMP/sleepburn.log" '^ready [0-9]+$' 10 || fatal "sleepburn did not start"

log "wprof record -p $pid -d 30 -o out.folded"
"$WPROF" record -p "$pid" -d 30 -o "$TMP/out.folded" 2>"$TMP/rec.err" &
wp=$!
LIB_PIDS+=("$wp")
wait_exit "$pid" 10 || fatal "sleepburn -n 3 still runs after 10 s"
exited=$(now_ms)
if wait_exit "$wp" 4; then
	ok "wprof ended $(($(now_ms) - exited)) ms after its target exited"
	check "exit status 0 (got $WAIT_RC)" test "$WAIT_RC" -eq 0
else
	kill -INT "$wp"
	wait_exit "$wp" 5 || kill -KILL "$wp"
	not_ok "wprof still running 4 s after its only target exited"
fi
sed 's/^/#   /' "$TMP/rec.err" | head -20
[ -s "$TMP/out.folded" ] || fatal "no output"
check_folded "$TMP/out.folded"
check "burn_cpu is named in on-CPU stacks" test "$(fold_sum "$TMP/out.folded" on-cpu burner burn_cpu)" -gt 0
check "burner_main is named" test "$(fold_sum "$TMP/out.folded" '.*' burner burner_main)" -gt 0
bad=$(grep -c 'sleepburn+0x' "$TMP/out.folded")
check "no unsymbolized sleepburn+0x frames (got $bad lines)" test "$bad" -eq 0
finish
