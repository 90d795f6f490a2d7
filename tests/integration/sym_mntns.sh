#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# A program in a mount namespace of its own, from a path that does not
# exist outside it (as in a container): `unshare -m` mounts a tmpfs on an
# empty scratch directory, copies sym_call and its libsymcall.so (both with
# symbols) into it and runs the copy from there. On the host the directory
# stays empty, so the paths in /proc/PID/maps lead nowhere; the files can
# only be reached through /proc/PID/root or /proc/PID/map_files. Recorded
# with `-p PID -F 499 -d 2`.
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
command -v unshare >/dev/null || fatal "unshare (util-linux) not installed"

mkdir "$TMP/mnt" || fatal "cannot create $TMP/mnt"
# unshare execs sh, which execs the program: BG_PID is the program's pid.
# shellcheck disable=SC2016 # expanded by the inner sh
start_bg "$TMP/wl.log" unshare -m --propagation private sh -c \
	'mount -t tmpfs wprof-sym "$1" && cp "$2" "$3" "$1"/ && exec "$1"/sym_call -N symmnt' \
	sh "$TMP/mnt" "$CALL/sym_call" "$CALL/libsymcall.so"
pid=$BG_PID
if ! wait_line "$TMP/wl.log" '^ready [0-9]+ [0-9]+$' 10; then
	sed 's/^/#   /' "$TMP/wl.log"
	fatal "sym_call did not start in its mount namespace"
fi
check "the pid that says ready is the one started" \
	test "$(awk '/^ready/ { print $2 }' "$TMP/wl.log")" = "$pid"
check "it has a mount namespace of its own" \
	test "$(readlink "/proc/$pid/ns/mnt")" != "$(readlink /proc/self/ns/mnt)"
exe=$(readlink "/proc/$pid/exe")
log "pid $pid runs $exe"
check "it runs $TMP/mnt/sym_call" test "$exe" = "$TMP/mnt/sym_call"
check "that path does not exist outside its namespace" test ! -e "$TMP/mnt/sym_call"
check "nor does its library's" test ! -e "$TMP/mnt/libsymcall.so"

run_wprof rec record -p "$pid" -F 499 -d 2 -o "$TMP/out.folded"
check_wprof_ok rec
check "target still runs after wprof detached" kill -0 "$pid"
kill -TERM "$pid"
wait_exit "$pid" 5 || fatal "sym_call ignored SIGTERM"
[ -s "$TMP/out.folded" ] || fatal "no output"
check_folded "$TMP/out.folded"
i4_heaviest "$TMP/out.folded" '^[^;]*;symmnt;' 3
i4_check_sym_call "$TMP/out.folded" symmnt
finish
