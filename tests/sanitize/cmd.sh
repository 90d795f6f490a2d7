#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Under ASan and UBSan (make check-sanitize): `-- CMD` records, which fork
# and exec the command: folded to stdout, JSON to a file, --inline on
# inlined code (DWARF), C++ names (demangling), and a command's own exit
# status passed on. No sanitizer report, from wprof or its forked child.
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"
# shellcheck source=tests/lib_san.sh
. "$(dirname "$0")/../lib_san.sh"
san_require
require_workload sleepburn sym_inline sym_cxx

san_record stdout 0 record -- "$WORKLOADS/sleepburn" -n 1 -q
check_folded "$TMP/stdout.out"
san_record json 0 record -f json -o "$TMP/cmd.json" -- "$WORKLOADS/sleepburn" -n 1 -q
check_json "$TMP/cmd.json"
san_record inline 0 record --inline -F 499 -o "$TMP/inline.folded" -- "$WORKLOADS/sym_inline" 1
check "--inline named inlined calls" grep -q '_\[i\] [0-9]*$' "$TMP/inline.folded"
san_record cxx 0 record -F 499 -o "$TMP/cxx.folded" -- "$WORKLOADS/sym_cxx" 1
check "C++ names demangled" grep -q '::' "$TMP/cxx.folded"
san_record exit3 3 record -o /dev/null -- sh -c 'exit 3'
finish
