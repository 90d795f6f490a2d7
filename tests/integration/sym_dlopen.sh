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
# after dlclose(). Run twice: as is, and with --no-cfi, where there is no
# unwinder to ask and wprof's checks of the code mappings alone find zlib.
# Checks: exit 0; at least 70% of the burn's time is on-CPU in crc32_z, and
# (with the unwinder's tables) as much under burn_in_lib; no frame of zlib
# left unnamed (libz.so.1+0x...).
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"
require_bpf
require_workload dlburn

# run_case NAME WPROF_OPTION...: one recording of dlburn, and its checks
run_case()
{
	local name=$1 pid wp burned unmapped burned_us unnamed

	shift
	rm -f "$TMP/go"
	start_bg "$TMP/$name.dlburn" "$WORKLOADS/dlburn" -g "$TMP/go" -b 1000 -a 1000
	pid=$BG_PID
	wait_line "$TMP/$name.dlburn" '^ready [0-9]+$' 10 || fatal "dlburn did not start"
	log "wprof record $* -p $pid -o $name.folded"
	"$WPROF" record "$@" -p "$pid" -o "$TMP/$name.folded" 2>"$TMP/$name.err" &
	wp=$!
	LIB_PIDS+=("$wp")
	wait_line "$TMP/$name.err" 'recording with' 60 || fatal "wprof did not start"
	touch "$TMP/go"
	wait_exit "$wp" 60 || fatal "wprof did not end with its target"
	RC=$WAIT_RC
	sed 's/^/#   /' "$TMP/$name.err" | head -20
	check_wprof_ok "$name"
	sed 's/^/#   dlburn: /' "$TMP/$name.dlburn"
	read -r burned unmapped < <(sed -n 's/^burned \([0-9]*\) unmapped \([01]\)$/\1 \2/p' \
		"$TMP/$name.dlburn")
	is_num "$burned" || fatal "dlburn did not report its burn"
	check "$name: zlib was unmapped before the end (dlburn says $unmapped)" test "$unmapped" -eq 1
	check_folded "$TMP/$name.folded"
	burned_us=$((burned / 1000))
	check_ge "$name: on-CPU us in crc32_z, against 70% of the burn's $burned_us us" \
		"$(fold_sum "$TMP/$name.folded" on-cpu dlburn crc32_z)" $((burned_us * 7 / 10))
	if [ "$name" = cfi ]; then
		check_ge "$name: on-CPU us in burn_in_lib -> crc32_z, against 70% of the burn" \
			"$(fold_sum_ordered "$TMP/$name.folded" on-cpu dlburn burn_in_lib crc32_z)" \
			$((burned_us * 7 / 10))
	fi
	unnamed=$(grep -c 'libz\.so[^;]*+0x' "$TMP/$name.folded")
	check "$name: no frame of zlib left unnamed ($unnamed lines have one)" test "$unnamed" -eq 0
}

run_case cfi
run_case nocfi --no-cfi
finish
