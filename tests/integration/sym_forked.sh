#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# A forked child gone before wprof could read its maps is named by its
# parent's: forkshort forks 200 children one after the other, each naps
# 50 us in short_child -> short_nap and exits, without an exec (it runs its
# parent's code at its parent's addresses). Most are gone by the time wprof
# hears of their fork. `wprof record --exact-above 0 -- forkshort` (every
# interval walked). forkshort waits 300 ms before its first fork: a child
# forked before wprof has read its parent's maps (in the moments after the
# exec that wprof is told of) stays unnamed, by design (maps read after the
# fork may be an exec's or a dlopen()'s since: another program's), and that
# race is not what this tests (that wait, in settle(), is not the children's
# sleep). Ground truth is the workload's own: 200 children ran
# (its "forked N"), and each slept in short_child;short_nap, at least 50 us.
# Checks: exit 0; no frame of an unknown process ([unknown-pid-N]); of the
# sleep outside the parent's wait4, at least 99% is named
# short_child;short_nap, and it adds up to at least 200 x 50 us.
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"
require_bpf
require_workload forkshort

run_wprof rec record --exact-above 0 -o "$TMP/out.folded" -- "$WORKLOADS/forkshort" -n 200 -u 50 -w 300
check_wprof_ok rec
check "forkshort ran its 200 children ($(cat "$TMP/rec.out"))" grep -qx 'forked 200' "$TMP/rec.out"
check_folded "$TMP/out.folded"
unknown=$(grep -c 'unknown-pid' "$TMP/out.folded")
check "no frame of an unknown process ($unknown lines have one)" test "$unknown" -eq 0
read -r all named < <(grep '^off-cpu:sleep;' "$TMP/out.folded" | grep -v -e ';wait4;' -e ';settle;' |
	awk '{ w = $NF; all += w; if ($0 ~ /;short_child;short_nap;/) named += w }
	     END { print all + 0, named + 0 }')
log "children's sleep: $all us, $named us of it in short_child;short_nap"
check "the children slept at least 200 x 50 us ($all us)" test "$all" -ge 10000
check_le "children's sleep not named short_child;short_nap, per mille" \
	"$(((all - named) * 1000 / (all > 0 ? all : 1)))" 10
finish
