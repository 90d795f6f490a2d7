// SPDX-License-Identifier: GPL-2.0-only
/* The stacks of threads grouped by name, pool, process or not at all: see group.h. */
#include <errno.h>
#include <string.h>

#include "group.h"
#include "recline.h"
#include "util.h"

static const char *const names[] = {
	[GROUP_THREAD] = "thread",
	[GROUP_POOL] = "pool",
	[GROUP_PROCESS] = "process",
	[GROUP_NONE] = "none",
};

int group__parse(const char *s, enum group_by *g)
{
	for (size_t i = 0; i < ARRAY_SIZE(names); i++)
		if (!strcmp(s, names[i])) {
			*g = i;
			return 0;
		}
	pr_err("invalid --group '%s': expected thread, pool, process or none", s);
	return -EINVAL;
}

const char *group__name(enum group_by g)
{
	return g < ARRAY_SIZE(names) ? names[g] : "?";
}

/* Append @n bytes of @s at *@at of @dst (cut to @size, room kept for the NUL). */
static void put(char *dst, size_t size, size_t *at, const char *s, size_t n)
{
	if (*at < size) {
		size_t room = size - 1 - *at;

		memcpy(dst + *at, s, n < room ? n : room);
	}
	*at += n;
}

static void put_end(char *dst, size_t size, size_t at)
{
	if (size)
		dst[at < size ? at : size - 1] = '\0';
}

size_t group__pool_name(char *dst, size_t size, const char *name, size_t len)
{
	size_t at = 0;

	for (size_t i = 0; i < len; i++) {
		bool digit = name[i] >= '0' && name[i] <= '9';

		if (!digit)
			put(dst, size, &at, &name[i], 1);
		else if (!i || !(name[i - 1] >= '0' && name[i - 1] <= '9'))
			put(dst, size, &at, "*", 1);
	}
	put_end(dst, size, at);
	return at;
}

size_t group__line(char *dst, size_t size, const char *line, size_t len, enum group_by g,
		   const char *pname)
{
	const char *end = line + len, *semi = memchr(line, ';', len);
	const char *name, *name_end;
	size_t at = 0;

	if (g == GROUP_THREAD || !semi || (g == GROUP_PROCESS && !pname)) {
		put(dst, size, &at, line, len);
		put_end(dst, size, at);
		return at;
	}
	/* the name is the frame after a tag at the root, else the first */
	if (rec_kind__of(line, semi - line) != REC_OTHER) {
		name = semi + 1;
		name_end = memchr(name, ';', end - name);
		if (!name_end)
			name_end = end;
	} else {
		name = line;
		name_end = semi;
	}
	put(dst, size, &at, line, name - line);
	if (g == GROUP_POOL) {
		char buf[256];
		size_t n = group__pool_name(buf, sizeof(buf), name, name_end - name);

		put(dst, size, &at, buf, n < sizeof(buf) ? n : sizeof(buf) - 1);
	} else if (g == GROUP_PROCESS) {
		put(dst, size, &at, pname, strlen(pname));
	} else if (name_end < end) {
		name_end++; /* none: the name and its ';' go */
	} else {
		name_end = name; /* a tag and a name alone: the name is all there is */
	}
	put(dst, size, &at, name_end, end - name_end);
	put_end(dst, size, at);
	return at;
}
