// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "util.h"

static void vpr(const char *fmt, va_list ap)
{
	char line[1024];

	vsnprintf(line, sizeof(line), fmt, ap);
	/* one line per message, whatever the caller passed */
	line[strcspn(line, "\n")] = '\0';
	fprintf(stderr, "wprof: %s\n", line);
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

int parse_id_list(const char *s, __u32 **ids, size_t *nr)
{
	char *copy, *tok, *save = NULL;
	int err = 0;

	copy = strdup(s);
	if (!copy)
		return -ENOMEM;
	if (!*copy || copy[strlen(copy) - 1] == ',')
		err = -EINVAL;
	for (tok = strtok_r(copy, ",", &save); tok && !err; tok = strtok_r(NULL, ",", &save)) {
		__u64 v;
		__u32 *n;

		err = parse_positive(tok, 0x3fffffff, &v); /* PID_MAX_LIMIT */
		if (err)
			break;
		n = realloc(*ids, (*nr + 1) * sizeof(**ids));
		if (!n) {
			err = -ENOMEM;
			break;
		}
		*ids = n;
		(*ids)[(*nr)++] = v;
	}
	free(copy);
	return err;
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
