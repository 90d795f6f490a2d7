#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# The parsers of what other users' processes hand a root wprof (folded
# lines, perf maps, /proc/PID/maps, kallsyms, ELF symbols and DWARF through
# elfsyms, ELF CFI through the unwind-table builder, symbol names through
# the demanglers) under libFuzzer with ASan and UBSan, FUZZ_CHECK_SECONDS
# (default 5) each, from seeds of this machine: passes when no input
# crashes, hangs, leaks or breaks a promise the harness checks. `make fuzz`
# runs them longer (FUZZ_SECONDS). Needs no root.
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"

ls "$OUT"/fuzz/fuzz_* >/dev/null 2>&1 || fatal "no fuzz harness in $OUT/fuzz (run make test-bins)"
log "tests/fuzz/run.sh, ${FUZZ_CHECK_SECONDS:-5} s a harness"
OUT=$OUT FUZZ_SECONDS=${FUZZ_CHECK_SECONDS:-5} bash "$(dirname "$0")/../fuzz/run.sh" \
	>"$TMP/fuzz.log" 2>&1
rc=$?
while IFS= read -r line; do
	case $line in
	fuzz_*": "*"no crash") ok "$line" ;;
	fuzz_* | FAIL*) not_ok "$line" ;;
	*) log "$line" ;;
	esac
done <"$TMP/fuzz.log"
check "tests/fuzz/run.sh exits 0 (got $rc)" test "$rc" -eq 0
finish
