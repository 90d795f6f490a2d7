// SPDX-License-Identifier: GPL-2.0-only
/* Messages, clocks, small file reads and arrays every module uses: see util.h. */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "safestr.h"
#include "util.h"

/*
 * One line per message, whatever the caller passed: a file or process name
 * in it may hold a newline or a terminal's escape sequence (safestr.h).
 */
static void vpr(const char *fmt, va_list ap)
{
	char line[1024], safe[SAFESTR_SIZE(sizeof(line))];
	int n = vsnprintf(line, sizeof(line), fmt, ap);
	size_t len = n < 0 ? 0 : (size_t)n < sizeof(line) ? (size_t)n : sizeof(line) - 1;

	while (len && line[len - 1] == '\n')
		len--;
	safestr__text(safe, sizeof(safe), line, len);
	fprintf(stderr, "wprof: %s\n", safe);
}

void pr_err(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vpr(fmt, ap);
	va_end(ap);
}

void pr_info(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vpr(fmt, ap);
	va_end(ap);
}

int parse_duration_ns(const char *s, __u64 *ns)
{
	char *end;
	double sec;

	if (!s || !*s)
		return -EINVAL;
	errno = 0;
	sec = strtod(s, &end);
	/* strtod accepts "inf", "nan" and hex floats: only plain decimals here */
	if (errno || *end || end == s || strspn(s, "0123456789.") != strlen(s))
		return -EINVAL;
	if (!(sec > 0) || sec > 365.0 * 24 * 3600)
		return -EINVAL;
	*ns = (__u64)(sec * 1e9 + 0.5);
	return *ns ? 0 : -EINVAL;
}

int parse_time_ns(const char *s, __u64 *ns)
{
	static const struct {
		const char *unit;
		double ns;
	} units[] = { { "ns", 1 }, { "us", 1e3 }, { "ms", 1e6 }, { "s", 1e9 }, { "", 1e3 } };
	size_t digits;
	char *end;
	double v;

	if (!s || !*s)
		return -EINVAL;
	digits = strspn(s, "0123456789.");
	if (!digits)
		return -EINVAL;
	errno = 0;
	v = strtod(s, &end);
	if (errno || end != s + digits)
		return -EINVAL;
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		if (strcmp(end, units[i].unit))
			continue;
		if (v * units[i].ns > 1e18)
			return -EINVAL;
		*ns = (__u64)(v * units[i].ns + 0.5);
		return 0;
	}
	return -EINVAL;
}

int parse_positive(const char *s, __u64 max, __u64 *out)
{
	unsigned long long v;
	char *end;

	if (!s || !*s || strspn(s, "0123456789") != strlen(s))
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno == ERANGE || v > max)
		return -ERANGE;
	if (errno || *end || v == 0)
		return -EINVAL;
	*out = v;
	return 0;
}

/* What separates ids besides a comma: `pidof` prints spaces, `pgrep` newlines. */
#define ID_BLANKS " \t\n"

int parse_id_list(const char *s, __u32 **ids, size_t *nr, char *why, size_t why_len)
{
	const char *first = s + strspn(s, ID_BLANKS), *p = first;
	char elem[24];
	__u64 v;
	__u32 *n;
	int err;

	if (!*p) {
		snprintf(why, why_len, "it is empty");
		return -EINVAL;
	}
	for (;;) {
		size_t len = strcspn(p, "," ID_BLANKS);

		if (!len) {
			snprintf(why, why_len, "%s", p == first ? "it starts with a comma" :
					"it has an empty element between two commas");
			return -EINVAL;
		}
		/* 20 digits hold any 64-bit number: a longer element is no id */
		if (len >= sizeof(elem)) {
			snprintf(why, why_len, "'%.20s...' is not a number", p);
			return -EINVAL;
		}
		memcpy(elem, p, len);
		elem[len] = '\0';
		err = parse_positive(elem, 0x3fffffff, &v); /* FUTEX_TID_MASK: no id is larger */
		if (err) {
			snprintf(why, why_len, err == -ERANGE ? "'%s' is too large for an id" :
					"'%s' is not a positive number", elem);
			return -EINVAL;
		}
		n = realloc(*ids, (*nr + 1) * sizeof(**ids));
		if (!n)
			return -ENOMEM;
		*ids = n;
		(*ids)[(*nr)++] = v;
		p += len;
		p += strspn(p, ID_BLANKS);
		if (!*p)
			return 0;
		if (*p != ',')
			continue; /* blanks alone separate two ids */
		p++;
		p += strspn(p, ID_BLANKS);
		if (!*p) {
			snprintf(why, why_len, "it ends with a comma");
			return -EINVAL;
		}
	}
}

struct remainder {
	unsigned __int128 rem;
	size_t i;
};

static int cmp_remainder(const void *a, const void *b)
{
	const struct remainder *x = a, *y = b;

	if (x->rem != y->rem)
		return x->rem > y->rem ? -1 : 1;
	return x->i < y->i ? -1 : x->i > y->i;
}

/* Give the `left` units (fewer than n) one each to the parts of the largest remainders. */
static void give_left(__u64 *parts, struct remainder *r, size_t n, __u64 left)
{
	qsort(r, n, sizeof(*r), cmp_remainder);
	for (size_t i = 0; i < left && i < n; i++)
		parts[r[i].i]++;
}

int apportion(__u64 total, const __u64 *shares, size_t n, __u64 *parts)
{
	unsigned __int128 sum = 0, given = 0;
	struct remainder *r;

	for (size_t i = 0; i < n; i++)
		sum += shares[i];
	if (!sum) {
		memset(parts, 0, n * sizeof(*parts));
		return 0;
	}
	r = malloc((n + 1) * sizeof(*r));
	if (!r)
		return -ENOMEM;
	/* 128 bits: 2^40 us (12 days) times a share of 2^30 samples overflows 64 */
	for (size_t i = 0; i < n; i++) {
		unsigned __int128 x = (unsigned __int128)total * shares[i];

		parts[i] = x / sum;
		r[i] = (struct remainder){ .rem = x % sum, .i = i };
		given += parts[i];
	}
	give_left(parts, r, n, total - given);
	free(r);
	return 0;
}

int round_ns_to_us(const __u64 *ns, size_t n, __u64 *us)
{
	struct remainder *r = malloc((n + 1) * sizeof(*r));
	__u64 sum = 0, given = 0;

	if (!r)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		us[i] = ns[i] / 1000;
		r[i] = (struct remainder){ .rem = ns[i] % 1000, .i = i };
		sum += ns[i];
		given += us[i];
	}
	give_left(us, r, n, ns_to_us(sum) - given);
	free(r);
	return 0;
}

__u64 now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * NSEC_PER_SEC + ts.tv_nsec;
}

int read_small_file(const char *path, char *buf, size_t size)
{
	ssize_t n;
	int fd, err;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, size - 1);
	err = n < 0 ? -errno : 0;
	close(fd);
	if (err)
		return err;
	buf[n] = '\0';
	return n;
}

int array_reserve(void *arr, size_t *cap, size_t nr, size_t size, size_t first)
{
	size_t ncap = *cap ? 2 * *cap : first;
	void *old, *n;

	if (nr < *cap)
		return 0;
	if (!size || ncap > SIZE_MAX / size)
		return -ENOMEM;
	memcpy(&old, arr, sizeof(old));
	n = realloc(old, ncap * size);
	if (!n)
		return -ENOMEM;
	memcpy(arr, &n, sizeof(n));
	*cap = ncap;
	return 0;
}
