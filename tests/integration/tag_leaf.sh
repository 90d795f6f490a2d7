#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# --tag-leaf: `COMM;frames...;TAG WEIGHT`. Every line ends in a tag, none
# starts with one, and stacks keep their root-to-leaf order.
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"
require_bpf
require_workload sleepburn

TAG_ERE='on-cpu|steal|off-cpu(:(sleep|disk|runqueue))?'
run_wprof rec record --tag-leaf -d 20 -o "$TMP/out.folded" -- "$WORKLOADS/sleepburn" -n 2 -q
check_wprof_ok rec
[ -s "$TMP/out.folded" ] || fatal "no output"
check_folded "$TMP/out.folded"

FOLD_TAG_LEAF=1
bad=$(fold_field "$TMP/out.folded" tag | grep -Evx "$TAG_ERE")
check "every line's last frame is a tag (other: ${bad:-none})" test -z "$bad"
bad=$(fold_field "$TMP/out.folded" comm | grep -Ex "$TAG_ERE")
check "no line starts with a tag (got: ${bad:-none})" test -z "$bad"
on=$(fold_sum "$TMP/out.folded" on-cpu burner)
check "burner has on-CPU weight ($on us)" test "$on" -gt 0
check "burner has off-cpu:sleep weight" test "$(fold_sum "$TMP/out.folded" off-cpu:sleep burner)" -gt 0
ordered=$(fold_sum_ordered "$TMP/out.folded" on-cpu burner burner_main burn_cpu)
check_ge "share of burner on-CPU weight with burner_main before burn_cpu (%)" \
	"$(calc "100 * $ordered / ($on ? $on : 1)")" 90
bad=$(fold_bad_kernel_order "$TMP/out.folded")
check "kernel frames stay at the leaf end, just before the tag" test -z "$bad"
finish
