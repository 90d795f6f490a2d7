#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# `--inline`: calls inlined by the compiler become frames with the suffix
# _[i], after (leafward of) the function they were inlined into. The
# thread "inliner" of sym_inline (built -O2 -g -fno-omit-frame-pointer)
# alternates, for 2 s of CPU, 10 ms in each of
#	inline_outer() -> mid_helper() -> hot_helper()   (both always_inline)
#	call_outer() -> via_inline() -> leaf_burn()      (via_inline always_inline)
# so the expected stacks are inline_outer;mid_helper_[i];hot_helper_[i]
# (the sampled instruction in two levels of inlined code) and
# call_outer;via_inline_[i];leaf_burn (inlined code at a return address).
#
# Truth, from the code: in the first phase hot_helper()'s 64 dependent
# multiply-adds are ~98% of the instructions executed (mid_helper's loop
# adds an xor and a counter per 64, inline_outer a CPU-clock read per
# ~64000); in the second, leaf_burn() runs 64000 multiply-adds per call of
# the inlined code around it. Checks, over the weight of the frames that
# are always there (inline_outer, leaf_burn):
# - >= 90% of the on-CPU weight with inline_outer has the adjacent run
#   inline_outer;mid_helper_[i];hot_helper_[i] (measured 99%; the 10% is
#   room for the clock reads, which a vDSO stack may not reach the caller
#   of, and sampling noise: ~500 samples per phase at -F 499).
# - >= 95% of the on-CPU weight with leaf_burn has the run
#   call_outer;via_inline_[i];leaf_burn (measured 100%: leaf_burn is only
#   called from there).
# - without --inline: no _[i] frame at all, and hot_helper/mid_helper
#   samples are inline_outer's own (>= 90% of them have inline_outer as the
#   last user frame).
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"
require_bpf
require_workload sym_inline

run_wprof rec record --inline -F 499 -d 20 -o "$TMP/out.folded" -- "$WORKLOADS/sym_inline" 2
check_wprof_ok rec
[ -s "$TMP/out.folded" ] || fatal "no output"
check_folded "$TMP/out.folded"
log "heaviest inliner stacks:"
i4_heaviest "$TMP/out.folded" '^on-cpu;inliner;' 4

outer=$(fold_sum "$TMP/out.folded" on-cpu inliner inline_outer)
inl=$(i4_fold_sum_run "$TMP/out.folded" on-cpu inliner inline_outer 'mid_helper_[[]i[]]' \
	'hot_helper_[[]i[]]')
leaf=$(fold_sum "$TMP/out.folded" on-cpu inliner leaf_burn)
via=$(i4_fold_sum_run "$TMP/out.folded" on-cpu inliner call_outer 'via_inline_[[]i[]]' leaf_burn)
log "inliner: inline_outer $outer us, of which $inl us with mid_helper_[i];hot_helper_[i];" \
	"leaf_burn $leaf us, of which $via us under call_outer;via_inline_[i]"
check_ge "inline_outer on-CPU weight (us)" "$outer" 500000
check_ge "share of inline_outer weight in inline_outer;mid_helper_[i];hot_helper_[i] (%)" \
	"$(i4_pct "$inl" "$outer")" 90
check_ge "leaf_burn on-CPU weight (us)" "$leaf" 500000
check_ge "share of leaf_burn weight in call_outer;via_inline_[i];leaf_burn (%)" \
	"$(i4_pct "$via" "$leaf")" 95
bare=$(fold_sum "$TMP/out.folded" '.*' inliner '(hot_helper|mid_helper|via_inline)')
check "inlined functions only appear with _[i] (weight without it: $bare us)" test "$bare" -eq 0

run_wprof plain record -F 499 -d 20 -o "$TMP/plain.folded" -- "$WORKLOADS/sym_inline" 1
check_wprof_ok plain
check_folded "$TMP/plain.folded"
n=$(grep -c '_\[i\]' "$TMP/plain.folded")
check "no _[i] frames without --inline (got $n lines)" test "$n" -eq 0
outer=$(fold_sum "$TMP/plain.folded" on-cpu inliner inline_outer)
own=$(grep '^on-cpu;inliner;.*;inline_outer ' "$TMP/plain.folded" | awk '{ s += $NF } END { print s + 0 }')
check_ge "without --inline: share of inline_outer weight with it as the leaf (%)" \
	"$(i4_pct "$own" "$outer")" 90
finish
