/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Whether the on-CPU sampler can run, and did run, at the -F asked for.
 *
 * The sampler is a cpu-clock perf event: an hrtimer on each CPU. The kernel
 * fires it no more often than every 10 us (100 kHz), throttles it past
 * kernel.perf_event_max_sample_rate samples a second, and when the timer
 * cannot be served within its period (a VM's emulated timer, the sampling
 * program's own run time) it skips the periods it missed. On the 2-vCPU VM
 * this was measured on (a thread burning 2 s of CPU), perf record itself
 * got 10,000 samples a second at 10 kHz, 19,300 at 20 kHz, 15,100 at
 * 30 kHz; wprof got 99.5% of what it asked at -F 10000, 49.5% at -F 30000,
 * 20% at -F 100000 (while the targets' CPUs spent most of their time in the
 * timer's interrupt). The limit is the machine's, so each run checks what
 * it got. The samples that come are right, only fewer: on-CPU weights are
 * the switch-timed time, split by samples.
 */
#ifndef WPROF_SAMPLERATE_H
#define WPROF_SAMPLERATE_H

#include <stdbool.h>
#include <linux/types.h>

#define SAMPLERATE_SYSCTL "/proc/sys/kernel/perf_event_max_sample_rate"
/* Fewer samples expected than this, and a shortfall may be chance (a Poisson sd is 4.5% of 500). */
#define SAMPLERATE_MIN_EXPECTED 500
/* A run that got less than this share of the samples it asked for says so. */
#define SAMPLERATE_MIN_PCT 80

/*
 * The kernel's limit on the samples a second of a perf event, from @path
 * (NULL: SAMPLERATE_SYSCTL). 0 or -errno (-EINVAL: not a positive number).
 */
int samplerate__kernel_max(const char *path, __u64 *max_hz);

/*
 * Did @samples over @on_ns of on-CPU time fall short of @freq_hz? True
 * when at least SAMPLERATE_MIN_EXPECTED samples were due and fewer than
 * SAMPLERATE_MIN_PCT% of them came. *@got_hz: the samples a second of
 * on-CPU time that came (0 without on-CPU time).
 */
bool samplerate__short(__u64 samples, __u64 on_ns, __u64 freq_hz, __u64 *got_hz);

/* A -F to ask for instead: @got_hz rounded down to two significant digits (at least 1). */
__u64 samplerate__suggest(__u64 got_hz);

#endif /* WPROF_SAMPLERATE_H */
