#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# The comparer of the real-program tests, on made-up gdb output, maps,
# switch counts and wprof JSON (tests/tools/stackcmp_test.py): each notation
# rule it normalizes holds (symbol versions, "??" against MODULE+0xOFF at
# the same file offset, aliases from the C library's .dynsym, the signal
# frame against the rt_sigreturn trampoline's bytes, C++ names, inlined
# frames, Go's .abi0 and stack roots); near misses (an offset 10 bytes off,
# another function or method) and a thread shown under another thread's
# callers are mismatches, with exit 1; a thread that ran during the window
# is left out, and a --need of it exits 3. Needs no BPF.
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"
# shellcheck source=tests/lib_real.sh
. "$(dirname "$0")/../lib_real.sh"
rs_need_cmd nm binutils
libc=$(ldd /bin/sh | awk '$1 ~ /^libc[.]so/ { print $3 }')
[ -r "$libc" ] || fatal "cannot find the C library (ldd /bin/sh)"
log "C library: $libc"
out=$("$RS_PYTHON" "$(dirname "$STACKCMP")/stackcmp_test.py" "$STACKCMP" "$libc" 2>&1)
rc=$?
echo "$out"
check "stackcmp_test.py exits 0 (got $rc)" test "$rc" -eq 0
finish
