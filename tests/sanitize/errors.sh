#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Under ASan and UBSan (make check-sanitize): the paths that give up early
# or fail late, where a leak or a double free hides best: usage errors
# (exit 2), a missing target, a bad --btf, a command that cannot run, a
# full disk and a reader that went away (exit 1). No sanitizer report.
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"
# shellcheck source=tests/lib_san.sh
. "$(dirname "$0")/../lib_san.sh"
san_require

gone=$(unused_pid)
san_record usage_freq 2 record -F 0 -p 1 -d 1
san_record usage_list 2 record -p "1,,2" -d 1
san_record usage_opt 2 record --bogus -a
san_record no_pid 1 record -p "$gone" -d 1
san_record bad_btf 1 record --btf /nonexistent -o "$TMP/keep.folded" -d 1 -- sleep 1
check "a failed run leaves no output file" test ! -e "$TMP/keep.folded"
san_record no_cmd 1 record -o /dev/null -- /nonexistent/cmd
san_record full 1 record -d 1 -o /dev/full -- sleep 5
log "wprof record -a -d 1 | true"
timeout -k 5 120 "$WPROF" record -a -d 1 2>"$TMP/pipe.err" | true
RC=${PIPESTATUS[0]}
check "a reader that goes away: exit 1 (got $RC)" test "$RC" -eq 1
san_clean pipe
finish
