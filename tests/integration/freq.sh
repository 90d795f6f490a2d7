#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# -F HZ: the sampler runs at HZ, and the on-CPU weight is the thread's
# switch-timed CPU time whatever the rate (samples only split it by stack):
# the burner's on-CPU weight matches its CPU time (15 bursts of 30 ms =
# ~0.45 s in 3 s) within 3%, plus SWITCH_SLACK_US per context switch, at
# 199 and 49 Hz alike (its life outside its own clock readings, and where
# the kernel's run time differs from the switch timestamps: see cmd.sh). A
# weight of one period per sample would be off by 10% (199 Hz) and 30%
# (49 Hz) now and then.
# Tolerances of the sample count, from the per-burst sampling error:
# - 199 Hz: 5.97 samples per burst, sd 0.17 per burst, ~0.7 samples over 15
#   bursts, phase bias <= ~3 samples -> 10%.
# - 49 Hz: 1.47 samples per burst, sd 0.5 per burst, 1.9 samples (9%) over
#   15 bursts -> 3 sd, 30%. A sampler that ignores -F is off by 2x in
#   either case.
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"
require_bpf
require_workload sleepburn

for hz_tol in 199:0.10 49:0.30; do
	hz=${hz_tol%:*}
	tol=${hz_tol#*:}
	run_wprof "f$hz" record --stats -F "$hz" -d 20 -o "$TMP/f$hz.folded" -- \
		"$WORKLOADS/sleepburn" -n 3 -q -r "$TMP/report$hz"
	check_wprof_ok "f$hz"
	[ -s "$TMP/f$hz.folded" ] || { not_ok "-F $hz: no output"; continue; }
	check_folded "$TMP/f$hz.folded"
	cpu_us=$(($(report_get "$TMP/report$hz" cpu_ns) / 1000))
	on=$(fold_sum "$TMP/f$hz.folded" on-cpu burner)
	switches=$(switches_of "f$hz")
	check_near "-F $hz: burner on-CPU weight vs its CPU time ($switches switches) (us)" \
		"$on" "$cpu_us" "$(calc "0.03 * $cpu_us + $SWITCH_SLACK_US * ${switches:-0}")"
	# and the sampler itself ran at HZ: the samples counted (the burner's
	# and a few of the main thread's) are the time the targets held a CPU
	# (the on-CPU weight of all threads, by the clock the sampler uses too)
	# times HZ; a sampler left at 99 Hz is off by 2x
	samples=$(sed -n 's/^wprof: \([0-9]*\) samples,.*/\1/p' "$TMP/f$hz.err")
	all_on=$(fold_sum "$TMP/f$hz.folded" on-cpu '.*')
	check_near "-F $hz: samples vs on-CPU weight x HZ" "$samples" \
		"$(calc "$all_on * $hz / 1000000")" "$(calc "$tol * $all_on * $hz / 1000000 + 2")"
done
finish
