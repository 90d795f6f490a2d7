#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Synchronous writes are off-cpu:disk (disk.sh covers O_DIRECT reads).
# diskwrite's "writer" thread loops for 2 s over writes that each wait for
# the device, in two runs:
#	fsync:	4 KiB pwrite() into the page cache, then fsync(): the thread
#		waits for the page's writeback (folio_wait_writeback,
#		io_schedule) and, on a journalling file system, the commit;
#	direct:	1 MiB pwrite() on an O_DIRECT | O_DSYNC descriptor (fewer,
#		longer device waits).
# Both waits are TASK_UNINTERRUPTIBLE; the writer never sleeps
# interruptibly. The file is preallocated, on a disk-backed file system.
#
# Ground truth, from the thread over its loop: wall time, time inside
# pwrite + fsync (io_ns) and its CPU time in there (io_cpu_ns). schedstat is
# logged, and its run delay used in one bound, loosely (below): at ~10k
# blocks a second its split of a thread's time
# and the one timed at the switch tracepoints differ by several us per
# block in both directions (measured here with a bpftrace sched_switch
# script: 853 ms on CPU between switches vs 681 ms of CPU time, ~6 us a
# block, the newidle balance and the rest of the switch to idle happen
# after the kernel stops the thread's clock and before the tracepoint; and
# the wakeup latency to an idle vCPU is the kernel's run time but wprof's
# runqueue). So the bounds are about what cannot differ. From
# `--format json`:
# - the writer's wall_us >= the loop's wall time - 1 ms (its life holds the
#   loop; only us rounding) and <= it + 20 ms (a posix_memalign and a
#   printf outside the loop);
# - off-CPU (runqueue + sleep + disk) <= io_ns + 20 ms: the writer blocks
#   only in pwrite and fsync;
# - off-cpu:disk > 0 and <= io_ns - io_cpu_ns + 20 ms + BLOCK_SLACK_US a
#   block: it cannot be blocked while it runs, but a switch is timed where
#   __schedule() starts, and the kernel stops the thread's clock (io_cpu_ns)
#   later in the same switch: 1.7 us a block measured (30 ms over 17,759);
# - off-cpu:disk >= 50% of off-CPU less schedstat's run delay: the device
#   round trip (~50-400 us a write on this virtio disk, two waits per
#   fsync) dominates the wakeup latency after it (~10-20 us). Measured:
#   69% (4 KiB) and 88% (1 MiB) of the whole off-CPU time on an idle
#   machine. Less the run delay, as the kernel counts it: on a machine
#   busy with other work the writer waits for a CPU after each wakeup
#   (58% of its time once, and 32% of its off-CPU time disk), which is no
#   disk wait. A wait mislabelled as sleep or runqueue gives ~0;
# - off-cpu:sleep <= 1% of the blocked (sleep + disk) weight: nothing in
#   either write path sleeps interruptibly;
# - the off-cpu:disk stacks add up to disk_us exactly (they are rounded
#   together, see json_totals.sh), and >= 90% of their weight has an *fsync* frame (fsync run) or a
#   *pwrite* frame (direct run): the user or kernel frames of the call
#   that waits.
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"
BLOCK_SLACK_US=5
require_bpf
require_workload diskwrite

for mode in fsync direct; do
	flags=(-s 4)
	call='.*fsync.*'
	if [ "$mode" = direct ]; then
		flags=(-D -s 1024)
		call='.*pwrite.*'
	fi
	run_wprof "$mode" record -d 30 -f json -o "$TMP/$mode.json" -- \
		"$WORKLOADS/diskwrite" "${flags[@]}" -n 2 -f "$(disk_path "$mode.dat")" -r "$TMP/$mode.report"
	check_wprof_ok "$mode"
	[ -s "$TMP/$mode.report" ] || fatal "$mode: diskwrite wrote no report"
	[ -s "$TMP/$mode.json" ] || fatal "$mode: no output"
	check_json "$TMP/$mode.json"

	rep=$TMP/$mode.report
	wall=$(($(report_get "$rep" wall_ns) / 1000))
	run=$(($(report_get "$rep" sched_run_ns) / 1000))
	delay=$(($(report_get "$rep" sched_wait_ns) / 1000))
	io=$((($(report_get "$rep" write_ns) + $(report_get "$rep" sync_ns)) / 1000))
	io_cpu=$(($(report_get "$rep" io_cpu_ns) / 1000))
	read -r twall on rq sl disk <<<"$(json_eval "$TMP/$mode.json" '" ".join(str(thread("writer")[k]) for k in ("wall_us", "on_cpu_us", "runqueue_us", "sleep_us", "disk_us"))')"
	[ -n "${disk:-}" ] || fatal "$mode: no JSON thread entry for writer"
	off=$((rq + sl + disk))
	read -r st_disk in_call nst <<<"$(json_eval "$TMP/$mode.json" \
		"'%d %d %d' % (total(stacks('off-cpu:disk', 'writer')), total(stacks('off-cpu:disk', 'writer', '$call')), len(stacks('off-cpu:disk', 'writer')))")"
	log "$mode: $(report_get "$rep" writes) writes; loop wall $wall us, in the calls $io" \
		"(cpu $io_cpu); schedstat run $run delay $delay;" \
		"wprof wall $twall on $on runqueue $rq sleep $sl disk $disk"
	check "$mode: writer has off-cpu:disk time (got $disk us)" test "$disk" -gt 0
	check_ge "$mode: writer wall_us vs the loop's wall time - 1 ms (us)" "$twall" "$((wall - 1000))"
	check_le "$mode: writer wall_us vs the loop's wall time + 20 ms (us)" "$twall" "$((wall + 20000))"
	check_le "$mode: off-CPU time vs time inside pwrite/fsync + 20 ms (us)" "$off" "$((io + 20000))"
	nblocks=$(json_eval "$TMP/$mode.json" 'thread("writer")["blocks"]')
	check_le "$mode: disk time vs time inside pwrite/fsync off its CPU + 20 ms + $BLOCK_SLACK_US us x $nblocks blocks (us)" \
		"$disk" "$((io - io_cpu + 20000 + BLOCK_SLACK_US * nblocks))"
	check_ge "$mode: share of off-CPU time less schedstat's run delay that is disk (%)" \
		"$(calc "100 * $disk / ($off - $delay > 0 ? $off - $delay : 1)")" 50
	check_le "$mode: share of blocked time that is sleep (%)" \
		"$(calc "100 * $sl / ($disk + $sl ? $disk + $sl : 1)")" 1
	check "$mode: off-cpu:disk stacks ($nst) add up to disk_us ($st_disk vs $disk)" \
		test "$st_disk" -eq "$disk"
	check_ge "$mode: share of disk stack weight under a $call frame (%)" \
		"$(calc "100 * $in_call / ($st_disk ? $st_disk : 1)")" 90
done
finish
