// SPDX-License-Identifier: GPL-2.0-only
/*
 * The roundings that make a thread's lines add up: apportion() splits a
 * thread's on-CPU time by samples, round_ns_to_us() rounds its off-CPU lines.
 * Both must sum exactly, stay within one unit of the exact share, and give
 * the units left over to the largest remainders. And array_reserve(), the
 * growth of the arrays they and the writers fill.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

#include "unit.h"
#include "util.h"

static __u64 sum(const __u64 *v, size_t n)
{
	__u64 s = 0;

	for (size_t i = 0; i < n; i++)
		s += v[i];
	return s;
}

static const char *join(const __u64 *v, size_t n)
{
	static char buf[256];
	size_t len = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < n && len < sizeof(buf); i++)
		len += snprintf(buf + len, sizeof(buf) - len, "%s%llu", i ? " " : "",
				(unsigned long long)v[i]);
	return buf;
}

static void test_apportion_cases(void)
{
	static const struct {
		__u64 total;
		__u64 shares[8];
		size_t n;
		const char *want, *what;
	} cases[] = {
		{ 100, { 1, 1, 1 }, 3, "34 33 33", "3 equal shares of 100: the first gets 1 more" },
		{ 10, { 5, 3, 2 }, 3, "5 3 2", "exact" },
		{ 7, { 1, 2, 4 }, 3, "1 2 4", "exact, uneven" },
		{ 10, { 1, 1, 1, 3 }, 4, "2 2 1 5", "remainders 1/6 x3 and 3/6: the 3/6 first" },
		{ 2, { 1, 1, 1 }, 3, "1 1 0", "fewer units than parts" },
		{ 0, { 3, 4 }, 2, "0 0", "nothing to split" },
		{ 5, { 0, 0 }, 2, "0 0", "no shares: nothing given" },
		{ 1000000, { 1 }, 1, "1000000", "one part takes all" },
		{ 1270130, { 108, 1, 1, 2, 5, 2, 1, 1 }, 8,
		  "1133670 10497 10497 20994 52484 20994 10497 10497",
		  "a thread's 1.27 s over 121 samples" },
	};
	__u64 parts[8];

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		int err = apportion(cases[i].total, cases[i].shares, cases[i].n, parts);

		CHECK_STREQ(err ? "error" : join(parts, cases[i].n), cases[i].want, "%s",
			    cases[i].what);
	}
}

/* Random cases: exact sums, every part within one unit of its exact share. */
static void test_apportion_random(void)
{
	unsigned int seed = 42, bad_sum = 0, bad_part = 0;
	__u64 shares[64], parts[64];

	for (int round = 0; round < 2000; round++) {
		size_t n = 1 + rand_r(&seed) % 64;
		__u64 total = (__u64)rand_r(&seed) * rand_r(&seed) % (1ULL << 40), s = 0;

		for (size_t i = 0; i < n; i++)
			s += shares[i] = rand_r(&seed) % 1000;
		if (!s)
			continue;
		apportion(total, shares, n, parts);
		bad_sum += sum(parts, n) != total;
		for (size_t i = 0; i < n; i++) {
			long double exact = (long double)total * shares[i] / s;

			bad_part += parts[i] + 1 <= exact || parts[i] >= exact + 1;
		}
	}
	CHECK_EQ_U64(bad_sum, 0, "2000 random splits sum exactly to their total");
	CHECK_EQ_U64(bad_part, 0, "every part is its exact share rounded down or up");
}

static void test_round_us(void)
{
	static const struct {
		__u64 ns[4];
		size_t n;
		const char *want, *what;
	} cases[] = {
		{ { 1400, 1400, 1400 }, 3, "2 1 1", "4.2 us in 3 lines of 1.4: 4 us" },
		{ { 1600, 1600 }, 2, "2 1", "3.2 us: rounding each up would give 4" },
		{ { 499, 499, 499 }, 3, "1 0 0", "1.497 us: 1 us, not 0" },
		{ { 999, 1, 500 }, 3, "1 0 1", "1.5 us rounds half up to 2: to 999 and 500" },
		{ { 2000, 3000 }, 2, "2 3", "exact" },
		{ { 100, 900, 500, 501 }, 4, "0 1 0 1", "2.001 us: 2 us, to 900 and 501" },
	};
	__u64 us[4];

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		int err = round_ns_to_us(cases[i].ns, cases[i].n, us);

		CHECK_STREQ(err ? "error" : join(us, cases[i].n), cases[i].want, "%s",
			    cases[i].what);
	}
}

static void test_array_reserve(void)
{
	__u32 *a = NULL;
	size_t cap = 0, nr = 0;
	bool ok = true;

	for (__u32 i = 0; i < 1000; i++) {
		if (array_reserve(&a, &cap, nr, sizeof(*a), 4)) {
			ok = false;
			break;
		}
		a[nr++] = i;
	}
	CHECK(ok, "1000 appends get room");
	CHECK_EQ_U64(cap, 1024, "capacity doubles from 4");
	for (size_t i = 0; ok && i < nr; i++)
		ok = a[i] == i;
	CHECK(ok, "the elements survive each growth");
	CHECK(!array_reserve(&a, &cap, 5, sizeof(*a), 4) && cap == 1024,
	      "no growth while there is room");
	CHECK(array_reserve(&a, &cap, cap, SIZE_MAX / 2, 4) == -ENOMEM && cap == 1024,
	      "an overflowing size is -ENOMEM, the array as it was");
	free(a);
}

int main(void)
{
	test_apportion_cases();
	test_apportion_random();
	test_round_us();
	test_array_reserve();
	return unit_done();
}
