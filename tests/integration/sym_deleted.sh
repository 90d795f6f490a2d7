#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# A program whose files were deleted while it runs keeps its names: a copy
# of sym_call and its libsymcall.so (both with symbols) in a scratch
# directory is started, both files are removed (the maps then say
# "(deleted)" and no path leads to them), and the process is recorded with
# `-p PID -F 499 -d 2`. The files can only be read through the process
# (/proc/PID/map_files, or the mapped memory).
#
# Names, from i4_check_sym_call (tests/lib.sh): >= 90% of the worker's
# on-CPU weight in call_outer;exe_static_step;symlib_burn;symlib_mix,
# >= 95% of its sleep under symlib_nap, no module+0xOFFSET frame. -F 499
# gives ~750 samples in 2 s of 75% CPU.
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"
require_bpf
CALL=$OUT/tests/sym/call
[ -x "$CALL/sym_call" ] || fatal "$CALL/sym_call not built (run make test-bins)"

mkdir "$TMP/del" || fatal "cannot create $TMP/del"
cp "$CALL/sym_call" "$CALL/libsymcall.so" "$TMP/del/" || fatal "cannot copy sym_call to $TMP/del"
start_bg "$TMP/wl.log" "$TMP/del/sym_call" -N symdel
pid=$BG_PID
wait_line "$TMP/wl.log" '^ready [0-9]+ [0-9]+$' 10 || fatal "sym_call did not start"
rm "$TMP/del/sym_call" "$TMP/del/libsymcall.so"
exe=$(readlink "/proc/$pid/exe")
log "pid $pid runs $exe"
check "the program's file is deleted" test "$exe" = "$TMP/del/sym_call (deleted)"
check "the library's file is deleted" grep -q "$TMP/del/libsymcall.so (deleted)" "/proc/$pid/maps"

run_wprof rec record -p "$pid" -F 499 -d 2 -o "$TMP/out.folded"
check_wprof_ok rec
check "target still runs after wprof detached" kill -0 "$pid"
kill -TERM "$pid"
wait_exit "$pid" 5 || fatal "sym_call ignored SIGTERM"
[ -s "$TMP/out.folded" ] || fatal "no output"
check_folded "$TMP/out.folded"
i4_heaviest "$TMP/out.folded" '^[^;]*;symdel;' 3
i4_check_sym_call "$TMP/out.folded" symdel
finish
