// SPDX-License-Identifier: GPL-2.0-only
/*
 * src/samplerate.c: the kernel's limit read from its sysctl (files made
 * here), the shortfall test against the samples -F asked for, and the -F
 * suggested instead.
 */
#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

#include "samplerate.h"
#include "unit.h"

static const char *write_tmp(const char *text)
{
	static char path[] = "/tmp/wprof-test-samplerate.XXXXXX";
	int fd;

	strcpy(path, "/tmp/wprof-test-samplerate.XXXXXX");
	fd = mkstemp(path);
	if (fd < 0 || write(fd, text, strlen(text)) != (ssize_t)strlen(text))
		return NULL;
	close(fd);
	return path;
}

static void test_kernel_max(void)
{
	static const struct {
		const char *text;
		int err;
		__u64 hz;
	} cases[] = {
		{ "100000\n", 0, 100000 },
		{ "25000", 0, 25000 },
		{ "0\n", -EINVAL, 0 },
		{ "", -EINVAL, 0 },
		{ "12ab\n", -EINVAL, 0 },
		{ "99999999999999999999999\n", -EINVAL, 0 },
	};
	__u64 hz;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char *path = write_tmp(cases[i].text);
		int err;

		hz = 0;
		err = path ? samplerate__kernel_max(path, &hz) : -EIO;
		CHECK_EQ_S64(err, cases[i].err, "sysctl text '%s': result", cases[i].text);
		if (!cases[i].err)
			CHECK_EQ_U64(hz, cases[i].hz, "sysctl text '%s': limit", cases[i].text);
		if (path)
			unlink(path);
	}
	CHECK_EQ_S64(samplerate__kernel_max("/nonexistent/wprof", &hz), -ENOENT,
		     "a missing sysctl file: -ENOENT");
	/* the real one, where there is one */
	if (!access(SAMPLERATE_SYSCTL, R_OK)) {
		int err = samplerate__kernel_max(NULL, &hz);

		CHECK(!err && hz > 0, "%s reads as %llu", SAMPLERATE_SYSCTL,
		      (unsigned long long)hz);
	}
}

static void test_short(void)
{
	static const struct {
		__u64 samples, on_ns, freq_hz;
		bool is_short;
		__u64 got_hz;
		const char *what;
	} cases[] = {
		/* the measurements of samplerate.h: 2 s of CPU */
		{ 20079, 2017789000, 10000, false, 9950, "-F 10000, 99.5% came" },
		{ 30154, 2032268000, 30000, true, 14837, "-F 30000, 49.5% came" },
		{ 732683, 36443105000, 100000, true, 20104, "-F 100000, 20% came" },
		/* the edge: 80% of what was due */
		{ 800, 1000000000, 1000, false, 800, "exactly 80% came" },
		{ 799, 1000000000, 1000, true, 799, "just under 80% came" },
		/* too few samples due for a shortfall to mean anything */
		{ 0, 4990000000ULL, 99, false, 0, "494 samples due, none came: chance, not the timer" },
		{ 300, 5100000000ULL, 99, true, 58, "505 samples due, 300 came" },
		{ 0, 0, 99, false, 0, "no on-CPU time" },
		{ 5, 0, 99, false, 0, "samples of untimed threads, no on-CPU time" },
		/* no overflow: 10 hours of CPU at 100 kHz */
		{ 3600000000ULL, 36000000000000ULL, 100000, false, 100000, "10 h of CPU, all came" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		__u64 got = ~0ULL;
		bool s = samplerate__short(cases[i].samples, cases[i].on_ns, cases[i].freq_hz, &got);

		CHECK(s == cases[i].is_short, "%s: %s", cases[i].what, s ? "short" : "not short");
		CHECK_EQ_U64(got, cases[i].got_hz, "%s: samples a second", cases[i].what);
	}
}

static void test_suggest(void)
{
	static const __u64 cases[][2] = {
		{ 14837, 14000 }, { 20104, 20000 }, { 999, 990 }, { 99, 99 },
		{ 100, 100 }, { 7, 7 }, { 0, 1 }, { 123456789, 120000000 },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		CHECK_EQ_U64(samplerate__suggest(cases[i][0]), cases[i][1],
			     "%llu Hz came: suggest -F", (unsigned long long)cases[i][0]);
}

int main(void)
{
	test_kernel_max();
	test_short();
	test_suggest();
	return unit_done();
}
