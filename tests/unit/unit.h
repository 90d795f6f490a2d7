/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * A tiny unit-test framework. Every check prints one line:
 *
 *	PASS <test>: <what>
 *	FAIL <test>: <what> (<details>)
 *
 * where <test> is the enclosing function's name, so tests/run.sh can count
 * them. A test binary ends with `return unit_done();`, which is non-zero when
 * any check failed. Header-only: each test binary is a single .c file.
 *
 *	static void test_parse(void)
 *	{
 *		CHECK(parse("x") == 0, "parses x");
 *		CHECK_EQ_U64(n, 3, "frame count of %s", line);
 *		CHECK_STREQ(buf, "a;b", "joined frames");
 *	}
 */
#ifndef WPROF_UNIT_H
#define WPROF_UNIT_H

#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

static unsigned int unit_nr_pass;
static unsigned int unit_nr_fail;

/* One result per line, whatever the strings under test contain: escape control characters. */
__attribute__((unused)) static void unit_put_escaped(const char *s)
{
	for (; *s; s++) {
		unsigned char c = *s;

		if (c == '\n')
			fputs("\\n", stdout);
		else if (c == '\t')
			fputs("\\t", stdout);
		else if (c < 0x20 || c == 0x7f)
			printf("\\x%02x", c);
		else
			putchar(c);
	}
}

/*
 * Report one check. @details is only printed on failure; @fmt describes what
 * was checked. Returns @ok so a test can stop early after a failed check.
 */
__attribute__((format(printf, 4, 5), unused)) static bool
unit_report(bool ok, const char *test, const char *details, const char *fmt, ...)
{
	char what[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	printf("%s %s: ", ok ? "PASS" : "FAIL", test);
	unit_put_escaped(what);
	if (!ok && details && details[0]) {
		fputs(" (", stdout);
		unit_put_escaped(details);
		putchar(')');
	}
	putchar('\n');
	/* A crash in a later check must not lose the lines printed so far. */
	fflush(stdout);
	if (ok)
		unit_nr_pass++;
	else
		unit_nr_fail++;
	return ok;
}

/* CHECK(cond, "what %d", x): fails with the failed expression as details. */
#define CHECK(cond, ...) unit_report(!!(cond), __func__, "false: " #cond, __VA_ARGS__)

#define CHECK_EQ_U64(actual, expected, ...)                                                    \
	({                                                                                     \
		uint64_t __a = (uint64_t)(actual), __e = (uint64_t)(expected);                 \
		char __d[96];                                                                  \
		snprintf(__d, sizeof(__d), "got %" PRIu64 ", want %" PRIu64, __a, __e);        \
		unit_report(__a == __e, __func__, __d, __VA_ARGS__);                           \
	})

#define CHECK_EQ_S64(actual, expected, ...)                                                    \
	({                                                                                     \
		int64_t __a = (int64_t)(actual), __e = (int64_t)(expected);                    \
		char __d[96];                                                                  \
		snprintf(__d, sizeof(__d), "got %" PRId64 ", want %" PRId64, __a, __e);        \
		unit_report(__a == __e, __func__, __d, __VA_ARGS__);                           \
	})

/* Details show both strings, truncated so a huge string keeps the line readable. */
#define CHECK_STREQ(actual, expected, ...)                                                     \
	({                                                                                     \
		const char *__a = (actual), *__e = (expected);                                 \
		bool __ok = __a && __e && strcmp(__a, __e) == 0;                               \
		char __d[512];                                                                 \
		snprintf(__d, sizeof(__d), "got \"%.200s\", want \"%.200s\"",                  \
			 __a ? __a : "(null)", __e ? __e : "(null)");                          \
		unit_report(__ok, __func__, __d, __VA_ARGS__);                                 \
	})

/* Exit code for main(): 0 only if at least one check ran and none failed. */
__attribute__((unused)) static int unit_done(void)
{
	if (!unit_nr_pass && !unit_nr_fail) {
		printf("FAIL unit: no checks ran\n");
		return 1;
	}
	fprintf(stderr, "%u passed, %u failed\n", unit_nr_pass, unit_nr_fail);
	return unit_nr_fail ? 1 : 0;
}

#endif /* WPROF_UNIT_H */
