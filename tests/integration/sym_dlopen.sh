#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Code that a target maps after wprof read its maps, and unmaps before the
# end: dlburn dlopen()s zlib once `wprof record -p PID` records (a file the
# test creates when wprof says so), burns 1 s of CPU in burn_in_lib ->
# zlib's crc32_z, dlclose()s zlib and naps 1 s. wprof hears of that code
# from its unwinder (code with no table: user space reads the maps then) or
# from its own checks of the target's code mappings, and names it at the
# end from what it read while zlib was mapped. Ground truth is the
# workload's own: the CPU time its burn took, and that zlib was unmapped
# after dlclose(). Checks: exit 0; at least 70% of the burn's time is
# on-CPU in crc32_z, and as much under burn_in_lib (the unwinder had zlib's
# table); no frame of zlib left unnamed (libz.so.1+0x...).
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"
require_bpf
require_workload dlburn

start_bg "$TMP/dlburn.log" "$WORKLOADS/dlburn" -g "$TMP/go" -b 1000 -a 1000
pid=$BG_PID
wait_line "$TMP/dlburn.log" '^ready [0-9]+$' 10 || fatal "dlburn did not start"
log "wprof record -p $pid -o out.folded"
"$WPROF" record -p "$pid" -o "$TMP/out.folded" 2>"$TMP/rec.err" &
wp=$!
LIB_PIDS+=("$wp")
wait_line "$TMP/rec.err" 'recording with' 60 || fatal "wprof did not start"
touch "$TMP/go"
wait_exit "$wp" 60 || fatal "wprof did not end with its target"
RC=$WAIT_RC
sed 's/^/#   /' "$TMP/rec.err" | head -20
check_wprof_ok rec
sed 's/^/#   dlburn: /' "$TMP/dlburn.log"
read -r burned unmapped < <(sed -n 's/^burned \([0-9]*\) unmapped \([01]\)$/\1 \2/p' "$TMP/dlburn.log")
is_num "$burned" || fatal "dlburn did not report its burn"
check "zlib was unmapped before the end (dlburn says $unmapped)" test "$unmapped" -eq 1
check_folded "$TMP/out.folded"
burned_us=$((burned / 1000))
check_ge "on-CPU us in crc32_z, against 70% of the burn's $burned_us us" \
	"$(fold_sum "$TMP/out.folded" on-cpu dlburn crc32_z)" $((burned_us * 7 / 10))
check_ge "on-CPU us in burn_in_lib -> crc32_z, against 70% of the burn's $burned_us us" \
	"$(fold_sum_ordered "$TMP/out.folded" on-cpu dlburn burn_in_lib crc32_z)" \
	$((burned_us * 7 / 10))
unnamed=$(grep -c 'libz\.so[^;]*+0x' "$TMP/out.folded")
check "no frame of zlib left unnamed ($unnamed lines have one)" test "$unnamed" -eq 0
finish
