#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Under ASan and UBSan (make check-sanitize): records of running processes
# (-p, -t) through every option that changes what is read or written:
# each exits 0, no sanitizer report.
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"
# shellcheck source=tests/lib_san.sh
. "$(dirname "$0")/../lib_san.sh"
san_require
require_workload sleepburn mutexwait

start_bg "$TMP/sleepburn.log" "$WORKLOADS/sleepburn"
sb=$BG_PID
wait_line "$TMP/sleepburn.log" '^ready [0-9]+$' 10 || fatal "sleepburn did not start"
burner=$(awk '/^ready/ { print $2 }' "$TMP/sleepburn.log")
start_bg "$TMP/mutexwait.log" "$WORKLOADS/mutexwait" -n 60
mw=$BG_PID

san_record threads 0 record -p "$sb" -d 1 -f threads -o "$TMP/threads.txt"
san_record wakers 0 record -p "$sb,$mw" -d 1 --wakers --tag-leaf -o "$TMP/wakers.folded"
FOLD_TAG_LEAF=1 check_folded "$TMP/wakers.folded"
san_record tid 0 record -t "$burner" -d 1 --no-states --min-block 1ms --max-block 1s \
	-o "$TMP/tid.folded"
san_record nocfi 0 record -p "$sb $mw" -d 1 --no-cfi --user-stacks-only -o "$TMP/nocfi.folded"
san_record kernel 0 record -p "$mw" -d 1 --kernel-stacks-only -F 999 -o "$TMP/kernel.folded"
san_record filters 0 record -p "$sb,$mw" -d 1 --thread-name 'lock*' --comm mutexwait \
	--no-idle-threads -f json -o "$TMP/filters.json"
check_json "$TMP/filters.json"
finish
