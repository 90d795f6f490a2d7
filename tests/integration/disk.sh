#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Waiting for block I/O is off-cpu:disk. diskio's "reader" thread does
# O_DIRECT 4 KiB preads for 2 s (~20k-40k reads); each waits for the device
# in TASK_UNINTERRUPTIBLE, then for a CPU after its wakeup.
#
# Ground truth, from the thread itself over its read loop: wall time, the
# time spent inside pread (read_ns), and schedstat's run time. Neither
# schedstat field is exact at this rate of wakeups: when a wakee preempts
# idle, the kernel skips the back-to-back rq clock update, so the wakee's
# exec_start is the enqueue time and the wakeup-to-run latency (several us
# here, measured independently with bpftrace on the same tracepoints) is
# charged to its run time, not to run_delay. Over tens of thousands of
# wakeups that is 100+ ms which wprof, timing the switches themselves,
# rightly counts as runqueue. Under load the difference also goes the
# other way (switch timestamps give several us more on-CPU per block than
# the kernel's runtime, which bpftrace on the same tracepoints confirms),
# so schedstat bounds wprof in neither direction here. What the thread
# knows for sure:
# - off-CPU <= read_ns + 20 ms: the reader blocks only inside pread (the
#   slack covers its life outside the loop);
# - off-CPU >= 25% of read_ns: each read waits for the device in D state
#   (tens of us on virtio) and runs a few us; a wprof that lost the
#   blocked time would fall far below.
# Also:
# - off-cpu:disk >= 50% of it: the device round trip (tens of us on virtio)
#   dominates the wakeup latency (a few us). Mislabelled D state gives ~0.
# - off-cpu:sleep <= 5%: an O_DIRECT pread never sleeps interruptibly.
# On-CPU weight is not checked against run time here: the reader runs in
# ~20 us bursts between interrupts, and on this VM the sampling timer is
# visibly correlated with them (runs gave 70-88% of schedstat's run time,
# where an unbiased 99 Hz sampler would stay within ~8%); cmd.sh and
# runqueue.sh check on-CPU weight with long bursts.
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"
require_bpf
require_workload diskio

run_wprof rec record -d 30 -o "$TMP/out.folded" -- \
	"$WORKLOADS/diskio" -n 2 -f "$(disk_path diskio.dat)" -r "$TMP/report"
check_wprof_ok rec
[ -s "$TMP/report" ] || fatal "diskio wrote no report"
[ -s "$TMP/out.folded" ] || fatal "no output"
check_folded "$TMP/out.folded"

wall_us=$(($(report_get "$TMP/report" wall_ns) / 1000))
run_us=$(($(report_get "$TMP/report" sched_run_ns) / 1000))
off_us=$((wall_us - run_us))
read_us=$(($(report_get "$TMP/report" read_ns) / 1000))
off=$(fold_sum "$TMP/out.folded" 'off-cpu:.*' reader)
disk=$(fold_sum "$TMP/out.folded" off-cpu:disk reader)
sleep_w=$(fold_sum "$TMP/out.folded" off-cpu:sleep reader)
on=$(fold_sum "$TMP/out.folded" on-cpu reader)
log "reader: $(report_get "$TMP/report" reads) reads, run $run_us us, off $off_us us;" \
	"wprof: on $on, off $off (disk $disk, sleep $sleep_w) us"
check_ge "reader off-CPU weight vs a quarter of its time inside pread (us)" "$off" \
	"$(calc "0.25 * $read_us")"
check_le "reader off-CPU weight vs its time inside pread (us)" "$off" \
	"$(calc "$read_us + 20000")"
check_ge "share of reader off-CPU weight tagged off-cpu:disk (%)" \
	"$(calc "100 * $disk / ($off ? $off : 1)")" 50
check_le "share of reader off-CPU weight tagged off-cpu:sleep (%)" \
	"$(calc "100 * $sleep_w / ($off ? $off : 1)")" 5
check "reader has on-CPU weight" test "$on" -gt 0
# The caller of a libc wrapper (read_block) is invisible to a frame-pointer
# walk that starts in libc code built without frame pointers, so look for
# pread itself, in user or kernel frames.
rd=$(fold_sum "$TMP/out.folded" off-cpu:disk reader '.*pread.*')
check_ge "share of disk weight under a *pread* frame (%)" "$(calc "100 * $rd / ($disk ? $disk : 1)")" 90
finish
