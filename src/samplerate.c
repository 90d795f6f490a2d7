// SPDX-License-Identifier: GPL-2.0-only
/* Whether the sampler can run, and did run, at the -F asked for: see samplerate.h. */
#include <errno.h>
#include <stdlib.h>

#include "samplerate.h"
#include "util.h"

int samplerate__kernel_max(const char *path, __u64 *max_hz)
{
	char buf[32], *end;
	unsigned long long v;
	int n = read_small_file(path ? path : SAMPLERATE_SYSCTL, buf, sizeof(buf));

	if (n < 0)
		return n;
	errno = 0;
	v = strtoull(buf, &end, 10);
	if (errno || end == buf || (*end && *end != '\n') || !v)
		return -EINVAL;
	*max_hz = v;
	return 0;
}

bool samplerate__short(__u64 samples, __u64 on_ns, __u64 freq_hz, __u64 *got_hz)
{
	/* in long double: on_ns * freq_hz overflows 64 bits past 5 hours of CPU at 1 MHz */
	long double due = (long double)on_ns * freq_hz / NSEC_PER_SEC;

	*got_hz = on_ns ? (__u64)((long double)samples * NSEC_PER_SEC / on_ns) : 0;
	return due >= SAMPLERATE_MIN_EXPECTED && samples * 100.0L < due * SAMPLERATE_MIN_PCT;
}

__u64 samplerate__suggest(__u64 got_hz)
{
	__u64 unit = 1, hz;

	while (got_hz / unit >= 100)
		unit *= 10;
	hz = got_hz / unit * unit;
	return hz ? hz : 1;
}
