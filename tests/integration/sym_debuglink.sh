#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Names from separate debug files: sym_call (a PIE) and its libsymcall.so
# are both stripped of every symbol table but .dynsym (strip --strip-all);
# their .symtab and DWARF live in sym_call.debug, next to the program, and
# .debug/libsymcall.so.debug, found through each file's .gnu_debuglink
# (tests/sym.mk). The worker "symdl" loops { call_outer -> exe_static_step
# (program, static) -> symlib_burn -> symlib_mix (library, static): 30 ms of
# CPU; symlib_nap -> nanosleep: 10 ms }. None of call_outer,
# exe_static_step and symlib_mix is in a .dynsym: only the debug files can
# name them.
#
# The fixture is checked first (no .symtab, a .gnu_debuglink, the names
# absent from .dynsym), then the shares of i4_check_sym_call (tests/lib.sh):
# >= 90% of the on-CPU weight with the whole chain, >= 95% of the sleep
# under symlib_nap, no module+0xOFFSET frame. -F 499: ~750 samples in 2 s
# of 75% CPU, so a share is good to ~1 point.
# The same pair without its debug files is recorded too, and its unnamed
# frames are logged: that is what the debug files fix.
# Last, the program's debug file is another build's (the library's, whose
# build-id differs): it is refused, so call_outer and exe_static_step stay
# unnamed, and the refusal is counted in the summary and in -f json's
# "lost" (the unit test test_symbolize checks CRC mismatches).
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"
require_bpf
DL=$OUT/tests/sym/debuglink
for f in sym_call libsymcall.so sym_call.debug .debug/libsymcall.so.debug; do
	[ -f "$DL/$f" ] || fatal "$DL/$f not built (run make test-bins)"
done

for f in sym_call libsymcall.so; do
	check "$f has no .symtab" sh -c "! readelf -S '$DL/$f' | grep -q '[.]symtab'"
	check "$f has a .gnu_debuglink" sh -c "readelf -S '$DL/$f' | grep -q '[.]gnu_debuglink'"
done
dyn=$( (nm -D "$DL/sym_call"; nm -D "$DL/libsymcall.so") 2>/dev/null |
	grep -Ew 'call_outer|exe_static_step|symlib_mix' | tr '\n' ' ')
check "call_outer, exe_static_step, symlib_mix are not in a .dynsym (found: ${dyn:-none})" \
	test -z "$dyn"

run_wprof rec record -F 499 -d 20 -o "$TMP/out.folded" -- "$DL/sym_call" -n 2 -N symdl
check_wprof_ok rec
[ -s "$TMP/out.folded" ] || fatal "no output"
check_folded "$TMP/out.folded"
i4_check_sym_call "$TMP/out.folded" symdl
for fn in call_outer exe_static_step symlib_burn symlib_mix symlib_nap; do
	check "$fn is named" test "$(fold_sum "$TMP/out.folded" '.*' symdl "$fn")" -gt 0
done

mkdir -p "$TMP/nodebug"
cp "$DL/sym_call" "$DL/libsymcall.so" "$TMP/nodebug/"
run_wprof nodebug record -F 499 -d 20 -o "$TMP/nodebug.folded" -- \
	"$TMP/nodebug/sym_call" -n 1 -N symdl
check_wprof_ok nodebug
check_folded "$TMP/nodebug.folded"
log "without the debug files, unnamed: $(i4_unnamed "$TMP/nodebug.folded" symdl | tr '\n' ' ')"

mkdir -p "$TMP/foreign/.debug"
cp "$DL/sym_call" "$DL/libsymcall.so" "$TMP/foreign/"
cp "$DL/.debug/libsymcall.so.debug" "$TMP/foreign/.debug/"
cp "$DL/.debug/libsymcall.so.debug" "$TMP/foreign/sym_call.debug"
run_wprof foreign record -F 499 -d 20 -o "$TMP/foreign.json" -- "$TMP/foreign/sym_call" -n 1 \
	-N symdl
check_wprof_ok foreign
check "summary: debug_files_refused 1" grep -q '^wprof: lost: 1 .*\[debug_files_refused\]$' "$TMP/foreign.err"
check "summary names the refused file and what to do" \
	grep -q "debug files refused .*1 build-id differs.*foreign/sym_call.debug: install" \
	"$TMP/foreign.err"
check "json: lost.debug_files_refused is 1" python3 -c '
import json, sys
sys.exit(json.load(open(sys.argv[1]))["lost"]["debug_files_refused"] != 1)' "$TMP/foreign.json"
check "no frame named from the other build's debug file" \
	sh -c "! grep -Eq 'call_outer|exe_static_step' '$TMP/foreign.json'"
check "the library's own debug file still names symlib_mix" grep -q symlib_mix "$TMP/foreign.json"
finish
