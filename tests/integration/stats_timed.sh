#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# --stats times the kinds of switch on one switch in 64, at random, and each
# kind's mean is over the switches of the kind that were timed: the count it
# prints beside the mean must be that sample. shortnaps' 4 threads nap
# 50-100 us, tens of thousands of switches in 2 s, and every other switch
# of the machine is a non-target one under -p. For each kind line:
# - the switches timed are at most the kind's switches;
# - the resume walks are timed every one;
# - where 20 or more are expected (1,280 switches), the count is within
#   5 standard deviations of a binomial of one in 64 (the binomial is
#   skewed: a sound count fails with a chance of 4 in a million at 1,280
#   switches, less above);
# and the deferred switches and switch-ins reach that, so the check runs.
# The means: each kind's mean times its timed switches (times 64 where one
# in 64 is timed) adds up to the estimated total of the "in all" line, its
# mean times its count, within the rounding of the printed means.
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"
require_bpf
require_workload shortnaps

start_bg "$TMP/naps.log" "$WORKLOADS/shortnaps" -t 4 -s 50 -l 100
pid=$BG_PID
wait_line "$TMP/naps.log" '^ready$' 10 || fatal "shortnaps did not start"
run_wprof rec record -p "$pid" -d 2 --stats -o "$TMP/out.folded"
kill -TERM "$pid"
wait_exit "$pid" 10 || fatal "shortnaps did not exit"
check_wprof_ok rec
grep '^wprof: switches .* ns each (' "$TMP/rec.err" | sed 's/^/  /'

# "wprof: switches NAME... COUNT MEAN ns each (TIMED timed)", TIMED "none"
# for 0 (MEAN "-"): "NAME COUNT TIMED MEAN"
kinds() {
	awk '/^wprof: switches .* ns each \((none|[0-9]+) timed\)$/ {
		name = $3
		for (i = 4; i <= NF - 6; i++)
			name = name "_" $i
		t = substr($(NF - 1), 2)
		print name, $(NF - 5), (t == "none" ? 0 : t), $(NF - 4)
	}' "$TMP/rec.err"
}
check "--stats printed 7 kinds of switch with their timed counts" test "$(kinds | wc -l)" -eq 7
while read -r name cnt timed _; do
	check_le "$name: switches timed" "$timed" "$cnt"
	if [ "$name" = "resumed+walked" ]; then
		check "$name: every one timed ($timed of $cnt)" test "$timed" -eq "$cnt"
	elif [ "$cnt" -ge 1280 ]; then
		check "$name: one in 64 of $cnt timed, within 5 sd ($timed)" awk -v n="$cnt" -v k="$timed" \
			'BEGIN { e = n / 64; d = k - e; exit !(d * d <= 25 * e * 63 / 64 + 1) }'
	fi
done < <(kinds)
for name in deferred switch-in; do
	check_ge "$name: switches" "$(kinds | awk -v n="$name" '$1 == n { print $2 }')" 1280
done
# "wprof: switches in all N MEAN ns each (...)"
read -r all_n all_mean < <(sed -n 's/^wprof: switches in all *\([0-9]*\) *\([0-9]*\) ns each.*/\1 \2/p' "$TMP/rec.err")
check "the kinds' means add up to the total of all switches ($all_n x $all_mean ns)" \
	awk -v n="${all_n:-x}" -v m="${all_mean:-x}" '$3 > 0 {
		w = $3 * ($1 == "resumed+walked" ? 1 : 64)
		sum += $4 * w; slack += w / 2
	}
	END { d = sum - n * m; if (d < 0) d = -d; exit !(n ~ /^[0-9]+$/ && d <= slack + n / 2) }' <(kinds)
finish
