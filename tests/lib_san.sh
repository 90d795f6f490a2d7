# SPDX-License-Identifier: GPL-2.0-only
# shellcheck shell=bash
#
# Helpers for the records of `make check-sanitize` (tests/sanitize/*.sh),
# sourced after tests/lib.sh. The binary under test is built with ASan and
# UBSan (-fno-sanitize-recover: undefined behaviour ends the run), under
# OUT=build/san. Every sanitizer report goes to a file of its own in $TMP
# (log_path): those of wprof's forked child too, and wprof's stderr stays
# its own. A record passes when it exits as expected and no report was
# written; leaks are reported (detect_leaks=1) and fail it too.

SAN_LOG=$TMP/sanitizer
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1}:log_path=$SAN_LOG.asan"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}:log_path=$SAN_LOG.ubsan"

# san_require: root and BPF, and a wprof built with both sanitizers: a
# check-sanitize run over a plain build would pass without checking anything.
san_require()
{
	require_bpf
	nm "$WPROF" 2>/dev/null | grep -q __asan_init ||
		fatal "$WPROF is not built with ASan (make check-sanitize builds OUT=build/san)"
	nm "$WPROF" 2>/dev/null | grep -q __ubsan_handle ||
		fatal "$WPROF is not built with UBSan"
}

# san_clean: no sanitizer report since the last call; the reports go to the
# log (the first 60 lines of each), and are moved aside so the next record
# starts clean.
san_clean()
{
	local what=$1 r found=0

	for r in "$SAN_LOG".*; do
		[ -e "$r" ] || continue
		found=1
		log "sanitizer report $r:"
		head -60 "$r" | sed 's/^/#   /'
		mkdir -p "$TMP/seen"
		mv "$r" "$TMP/seen/$(basename "$r").$what"
	done
	check "$what: no sanitizer report" test "$found" -eq 0
}

# san_record NAME WANT_RC ARGS...: wprof ARGS exits WANT_RC and no
# sanitizer complained; with WANT_RC 0, its stderr is all `wprof: ` lines.
san_record()
{
	local name=$1 want=$2

	shift 2
	run_wprof "$name" "$@"
	check "$name: exit $want (got $RC)" test "$RC" -eq "$want"
	if [ "$want" -eq 0 ]; then
		check "$name: every stderr line starts with 'wprof: '" \
			awk '!/^wprof: /{ bad = 1 } END { exit bad }' "$TMP/$name.err"
	fi
	san_clean "$name"
}
