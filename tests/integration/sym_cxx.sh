#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# C++ names are demangled, without parameter lists. sym_cxx (g++ -O1 -g
# -fno-omit-frame-pointer -fno-inline) runs a std::thread named "cxxspin"
# that burns CPU for 2 s in
#	symcxx::run_worker -> symcxx::Spinner::spin -> symcxx::detail::mix
# (a namespace function, a class method, a nested namespace's function;
# mangled _ZN6symcxx10run_workerEd, _ZN6symcxx7Spinner4spinEm,
# _ZN6symcxx6detail3mixEm). The thread starts through libstdc++ and the
# std::thread template code instantiated in the program, whose names are
# long templates.
#
# Checks on cxxspin's stacks:
# - >= 90% of its on-CPU weight has the adjacent run
#   symcxx::run_worker;symcxx::Spinner::spin;symcxx::detail::mix, names
#   matched whole (so no "(unsigned long)" parameter list, no return type).
#   Truth: mix() runs 100000 multiply-adds per call and is the whole loop
#   but for a steady_clock read per 10 calls (~1 ms): > 99%. 90% leaves
#   room for sampling noise (~1000 samples at -F 499) and the thread's
#   start. Measured 100%.
# - no frame of any of its stacks is mangled (contains "_Z").
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"
require_bpf
require_workload sym_cxx

run_wprof rec record -F 499 -d 20 -o "$TMP/out.folded" -- "$WORKLOADS/sym_cxx" 2
check_wprof_ok rec
[ -s "$TMP/out.folded" ] || fatal "no output"
check_folded "$TMP/out.folded"
log "heaviest cxxspin stack:"
i4_heaviest "$TMP/out.folded" '^on-cpu;cxxspin;' 1

on=$(fold_sum "$TMP/out.folded" on-cpu cxxspin)
run=$(i4_fold_sum_run "$TMP/out.folded" on-cpu cxxspin symcxx::run_worker symcxx::Spinner::spin \
	symcxx::detail::mix)
log "cxxspin: on-CPU $on us, $run us with symcxx::run_worker;symcxx::Spinner::spin;symcxx::detail::mix"
check_ge "cxxspin on-CPU weight (us)" "$on" 1000000
check_ge "share of cxxspin on-CPU weight with run_worker;Spinner::spin;detail::mix demangled (%)" \
	"$(i4_pct "$run" "$on")" 90
mangled=$(fold_sum "$TMP/out.folded" '.*' 'cxxspin|sym_cxx' '.*_Z.*')
check "no mangled (_Z) frame in sym_cxx's stacks (weight with one: $mangled us)" test "$mangled" -eq 0
grep -o '[^;]*_Z[^;]*' "$TMP/out.folded" | sort -u | head -3 | sed 's/^/#   mangled: /'
finish
