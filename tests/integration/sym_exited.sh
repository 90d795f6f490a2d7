#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# A process that exits during the recording keeps its names: sym_call (a
# PIE whose work is in its own libsymcall.so, both with symbols) is
# recorded with `-p PID -F 499 -d 10`; 1.5 s after wprof says it records,
# the workload is told to stop (SIGTERM: its worker leaves its loop and the
# process exits normally). wprof must then end by itself, exit 0, and name
# the functions of the program *and* of the library although both are gone
# from /proc when it symbolizes (target_exit.sh checks the ending; this
# checks the names, in a library too).
#
# Names, from i4_check_sym_call (tests/lib.sh), over the ~1.5 s recorded:
# >= 90% of the worker's on-CPU weight in call_outer;exe_static_step;
# symlib_burn;symlib_mix, >= 95% of its sleep under symlib_nap, no
# module+0xOFFSET frame. -F 499 gives ~560 samples in 1.5 s of 75% CPU.
# wprof has 4 s after the exit to end (the default -d would be 10 s).
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"
require_bpf
SYMCALL=$OUT/tests/sym/call/sym_call
[ -x "$SYMCALL" ] || fatal "$SYMCALL not built (run make test-bins)"

start_bg "$TMP/wl.log" "$SYMCALL" -N symexit
pid=$BG_PID
wait_line "$TMP/wl.log" '^ready [0-9]+ [0-9]+$' 10 || fatal "sym_call did not start"
grep -q libsymcall.so "/proc/$pid/maps" || fatal "libsymcall.so is not mapped in $pid"

log "wprof record -p $pid -F 499 -d 10 -o out.folded"
"$WPROF" record -p "$pid" -F 499 -d 10 -o "$TMP/out.folded" 2>"$TMP/rec.err" &
wp=$!
LIB_PIDS+=("$wp")
wait_line "$TMP/rec.err" '^wprof: recording' 10 || fatal "wprof did not start recording"
sleep 1.5
kill -TERM "$pid"
wait_exit "$pid" 5 || fatal "sym_call ignored SIGTERM"
exited=$(now_ms)
check "sym_call exited with status 0 (got $WAIT_RC)" test "$WAIT_RC" -eq 0
if wait_exit "$wp" 4; then
	ok "wprof ended $(($(now_ms) - exited)) ms after its target exited"
	check "wprof exits 0 (got $WAIT_RC)" test "$WAIT_RC" -eq 0
else
	kill -INT "$wp"
	wait_exit "$wp" 5 || kill -KILL "$wp"
	not_ok "wprof still running 4 s after its only target exited"
fi
sed 's/^/#   /' "$TMP/rec.err" | head -20
check "every stderr line starts with 'wprof: '" awk '!/^wprof: /{ bad = 1 } END { exit bad }' \
	"$TMP/rec.err"
[ -s "$TMP/out.folded" ] || fatal "no output"
check_folded "$TMP/out.folded"
i4_heaviest "$TMP/out.folded" '^[^;]*;symexit;' 3
i4_check_sym_call "$TMP/out.folded" symexit
finish
