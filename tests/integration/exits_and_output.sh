#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Exit statuses that tell the truth, and -o written safely:
# - `-- CMD`: wprof exits with CMD's status (3 for `exit 3`), 128 + N when
#   CMD dies of signal N (SIGSEGV, SIGKILL), and says how CMD ended;
# - a full disk (/dev/full) and a reader that goes away (`| true`):
#   exit 1, the error named (ENOSPC, EPIPE), the summary still on stderr;
# - a run that fails leaves the old -o file as it was; a successful one
#   replaces it whole;
# - in a sticky world-writable directory, a symlink planted by another user
#   (nobody) is not followed and a file of another user is not clobbered.
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"
require_bpf

# CMD's fate is wprof's exit status
run_wprof ex3 record -o /dev/null -- sh -c 'exit 3'
check "exit 3 of CMD gives exit 3 (got $RC)" test "$RC" -eq 3
check "and is said" grep -q '^wprof: sh exited with status 3$' "$TMP/ex3.err"
run_wprof segv record -o /dev/null -- sh -c 'kill -SEGV $$'
check "CMD killed by SIGSEGV gives 139 (got $RC)" test "$RC" -eq 139
check "and is said" grep -q '^wprof: sh was killed by signal 11' "$TMP/segv.err"
run_wprof kill9 record -o /dev/null -- sh -c 'kill -KILL $$'
check "CMD killed by SIGKILL gives 137 (got $RC)" test "$RC" -eq 137
run_wprof ex0 record -o /dev/null -- true
check_wprof_ok ex0

# output errors are named, and the summary survives them
run_wprof full record -d 1 -o /dev/full -- sleep 5
check "-o /dev/full exits 1 (got $RC)" test "$RC" -eq 1
check "names the full disk" grep -q 'No space left on device' "$TMP/full.err"
check "the summary is still printed" grep -q '^wprof: recorded ' "$TMP/full.err"
# the reader is gone before wprof writes (a reader that stops early, like
# `head`, only breaks the pipe once more than the pipe's buffer is written)
log "wprof record -a -d 1 | true"
timeout -k 5 60 "$WPROF" record -a -d 1 2>"$TMP/pipe.err" | true
RC=${PIPESTATUS[0]}
check "a reader that goes away: exit 1 (got $RC)" test "$RC" -eq 1
check "names the broken pipe" grep -q 'Broken pipe' "$TMP/pipe.err"
check "the summary is still printed" grep -q '^wprof: recorded ' "$TMP/pipe.err"

# atomic -o: a failed run keeps the old file; a good one replaces it whole
echo "old contents" >"$TMP/keep.folded"
run_wprof badbtf record --btf /nonexistent -o "$TMP/keep.folded" -d 1 -- sleep 1
check "a failed run exits non-zero (got $RC)" test "$RC" -ne 0
check "and leaves the old output file as it was" grep -qx 'old contents' "$TMP/keep.folded"
run_wprof good record -o "$TMP/keep.folded" -- sleep 0.2
check_wprof_ok good
check "a good run replaces it" grep -q '^off-cpu' "$TMP/keep.folded"
check "no temporary file is left" test -z "$(ls -A "$TMP" | grep '^\.wprof-')"

# another user's traps in a sticky, world-writable directory
shared=$TMP/shared
mkdir -m 1777 "$shared"
echo "victim" >"$TMP/victim"
setpriv --reuid=65534 --regid=65534 --clear-groups ln -s "$TMP/victim" "$shared/link" ||
	fatal "cannot create a symlink as nobody"
setpriv --reuid=65534 --regid=65534 --clear-groups sh -c "echo theirs > '$shared/theirs'" ||
	fatal "cannot create a file as nobody"
run_wprof link record -o "$shared/link" -- sleep 0.2
check "a symlink of another user is refused (exit $RC)" test "$RC" -ne 0
check "with one line saying so" grep -q 'symbolic link of another user' "$TMP/link.err"
check "the file it points to is untouched" grep -qx victim "$TMP/victim"
run_wprof theirs record -o "$shared/theirs" -- sleep 0.2
check "a file of another user is refused (exit $RC)" test "$RC" -ne 0
check "it is untouched" grep -qx theirs "$shared/theirs"
finish
