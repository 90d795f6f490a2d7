// SPDX-License-Identifier: GPL-2.0-only
/* The CPU limit of a target's cgroup and its cpu.stat: see cgcpu.h. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cgcpu.h"
#include "safestr.h"
#include "util.h"

/* Item @item is in the comma-separated list @list (@len bytes). */
static bool in_list(const char *list, size_t len, const char *item)
{
	size_t n = strlen(item);

	for (const char *p = list, *end = list + len; p < end;) {
		const char *c = memchr(p, ',', end - p);
		size_t l = c ? (size_t)(c - p) : (size_t)(end - p);

		if (l == n && !memcmp(p, item, n))
			return true;
		p += l + 1;
	}
	return false;
}

/*
 * Where the cgroup hierarchy with the cpu controller is mounted in wprof's
 * mount namespace (@v2: the unified one), into @dir. 0 or -ENOENT.
 */
static int find_mount(bool v2, char *dir, size_t size)
{
	FILE *f = fopen("/proc/self/mountinfo", "re");
	char *line = NULL, *sep, *fields[10];
	size_t cap = 0;
	int err = -ENOENT;

	if (!f)
		return -errno;
	while (err && getline(&line, &cap, f) > 0) {
		int n = 0;

		sep = strstr(line, " - ");
		if (!sep)
			continue;
		*sep = '\0';
		for (char *save, *t = strtok_r(line, " ", &save); t && n < 10;
		     t = strtok_r(NULL, " ", &save))
			fields[n++] = t;
		if (n < 5)
			continue;
		n = 0;
		for (char *save, *t = strtok_r(sep + 3, " \n", &save); t && n < 3;
		     t = strtok_r(NULL, " \n", &save))
			fields[5 + n++] = t;
		if (n < 3)
			continue;
		/*
		 * mountinfo escapes spaces in paths as \040: such a mount point is
		 * not ours; nor one of part of a hierarchy (a bind mount, a
		 * container's view), where /proc/PID/cgroup's paths do not start
		 */
		if (strchr(fields[4], '\\') || strcmp(fields[3], "/"))
			continue;
		if (v2 ? !strcmp(fields[5], "cgroup2")
		       : !strcmp(fields[5], "cgroup") && in_list(fields[7], strlen(fields[7]), "cpu")) {
			if ((size_t)snprintf(dir, size, "%s", fields[4]) < size)
				err = 0;
		}
	}
	free(line);
	fclose(f);
	return err;
}

/* A plain absolute cgroup path: no "." or ".." part, no empty one, nothing unprintable. */
static bool plain_path(const char *p, size_t len)
{
	if (!len || p[0] != '/')
		return false;
	for (size_t i = 0; i < len; i++)
		if ((unsigned char)p[i] < 0x20 || p[i] == 0x7f)
			return false;
	for (size_t i = 0; i < len; i++) {
		if (p[i] != '/')
			continue;
		if (i + 1 < len && p[i + 1] == '/')
			return false;
		if (i + 1 < len && p[i + 1] == '.' &&
		    (i + 2 == len || p[i + 2] == '/' ||
		     (p[i + 2] == '.' && (i + 3 == len || p[i + 3] == '/'))))
			return false;
	}
	return true;
}

/*
 * @pid's cgroup path in the hierarchy with the cpu controller (v1), or in
 * the unified one (*@v2 set). 0 or -ENOENT.
 */
static int cgroup_of(__u32 pid, char *path, size_t size, bool *v2)
{
	char file[64], *line = NULL;
	char unified[sizeof(((struct cg_limit *)0)->path)] = "";
	size_t cap = 0;
	ssize_t n;
	FILE *f;
	int err = -ENOENT;

	snprintf(file, sizeof(file), "/proc/%u/cgroup", pid);
	f = fopen(file, "re");
	if (!f)
		return -errno;
	/* whole lines, however long (a delegated cgroup's path may be): none cut */
	while (err && (n = getline(&line, &cap, f)) > 0) {
		char *c1 = strchr(line, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
		size_t len;

		if (line[n - 1] == '\n')
			line[--n] = '\0';
		if (!c2)
			continue;
		len = strlen(c2 + 1);
		if (!plain_path(c2 + 1, len) || len >= size)
			continue;
		if (c2 == c1 + 1 && !strncmp(line, "0:", 2)) {
			memcpy(unified, c2 + 1, len + 1);
		} else if (in_list(c1 + 1, c2 - c1 - 1, "cpu")) {
			memcpy(path, c2 + 1, len + 1);
			*v2 = false;
			err = 0;
		}
	}
	free(line);
	fclose(f);
	if (!err || !unified[0])
		return err;
	memcpy(path, unified, strlen(unified) + 1);
	*v2 = true;
	return 0;
}

/* A decimal number of a whole file or line start, strictly. */
static bool parse_u64(const char *s, __u64 *v)
{
	char *end;
	unsigned long long x;

	if (*s < '0' || *s > '9')
		return false;
	errno = 0;
	x = strtoull(s, &end, 10);
	if (errno || (*end && *end != '\n' && *end != ' '))
		return false;
	*v = x;
	return true;
}

/* The limit of cgroup directory @dir: 1 and @quota_us, @period_us; 0 none. */
static int limit_of(const char *dir, bool v2, __u64 *quota_us, __u64 *period_us)
{
	char file[sizeof(((struct cg_limit *)0)->dir) + 32], buf[128];

	if (v2) {
		char *sp;

		snprintf(file, sizeof(file), "%s/cpu.max", dir);
		if (read_small_file(file, buf, sizeof(buf)) <= 0 || !strncmp(buf, "max", 3))
			return 0;
		sp = strchr(buf, ' ');
		return sp && parse_u64(buf, quota_us) && parse_u64(sp + 1, period_us) &&
		       *quota_us && *period_us;
	}
	snprintf(file, sizeof(file), "%s/cpu.cfs_quota_us", dir);
	if (read_small_file(file, buf, sizeof(buf)) <= 0 || buf[0] == '-' ||
	    !parse_u64(buf, quota_us) || !*quota_us)
		return 0;
	snprintf(file, sizeof(file), "%s/cpu.cfs_period_us", dir);
	return read_small_file(file, buf, sizeof(buf)) > 0 && parse_u64(buf, period_us) &&
	       *period_us;
}

int cgcpu__find(__u32 pid, struct cg_limit *out)
{
	char mount[256], path[sizeof(out->path)], dir[sizeof(out->dir)];
	bool v2 = false;

	memset(out, 0, sizeof(*out));
	if (cgroup_of(pid, path, sizeof(path), &v2) || find_mount(v2, mount, sizeof(mount)))
		return 0;
	/*
	 * The cgroup, then each ancestor: the tightest limit is the one that
	 * holds (a looser one below it, which the process's owner may make,
	 * does not hide it).
	 */
	for (;;) {
		__u64 quota, period;
		char *slash;

		if ((size_t)snprintf(dir, sizeof(dir), "%s%s", mount, path) >= sizeof(dir))
			return 0; /* not one to guess at: an ancestor's limit may be looser */
		if (limit_of(dir, v2, &quota, &period) == 1 &&
		    (!out->quota_us || (unsigned __int128)quota * out->period_us <
					       (unsigned __int128)out->quota_us * period)) {
			out->quota_us = quota;
			out->period_us = period;
			memcpy(out->dir, dir, sizeof(out->dir));
			memcpy(out->path, path, sizeof(out->path));
		}
		slash = strrchr(path, '/');
		if (!slash || !path[1])
			break;
		slash[slash == path] = '\0'; /* "/a" -> "/", "/a/b" -> "/a" */
	}
	if (!out->quota_us)
		return 0;
	out->pid = pid;
	out->v2 = v2;
	return !cgcpu__read(out, &out->start);
}

int cgcpu__read(const struct cg_limit *l, struct cg_stat *st)
{
	char file[sizeof(((struct cg_limit *)0)->dir) + 32], buf[1024], *line, *save;
	int got = 0, n;

	snprintf(file, sizeof(file), "%s/cpu.stat", l->dir);
	n = read_small_file(file, buf, sizeof(buf));
	if (n < 0)
		return n;
	memset(st, 0, sizeof(*st));
	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *sp = strchr(line, ' ');
		__u64 v;

		if (!sp || !parse_u64(sp + 1, &v))
			continue;
		*sp = '\0';
		if (!strcmp(line, "nr_periods"))
			st->periods = v, got |= 1;
		else if (!strcmp(line, "nr_throttled"))
			st->throttled_periods = v, got |= 2;
		else if (!strcmp(line, l->v2 ? "throttled_usec" : "throttled_time"))
			st->throttled_ns = l->v2 ? v * 1000 : v, got |= 4;
	}
	return got == 7 ? 0 : -EINVAL;
}

/* How much a counter grew (0 if it went back: the cgroup made anew). */
static unsigned long long grew(__u64 start, __u64 end)
{
	return end > start ? end - start : 0;
}

void cgcpu__summary(const struct cg_limit *l, size_t n, FILE *f)
{
	for (size_t i = 0; i < n; i++) {
		const struct cg_limit *c = &l[i];
		char path[SAFESTR_SIZE(sizeof(c->path))];

		if (!c->read_end)
			continue;
		safestr__str(path, sizeof(path), c->path);
		fprintf(f, "wprof: pid %u: cgroup \"%s\" caps its CPU at %.3g CPUs (%llu us every "
			"%llu us); throttled in %llu of %llu periods, %.3f s (the cgroup's cpu.stat "
			"over the window)\n",
			c->pid, path, (double)c->quota_us / c->period_us,
			(unsigned long long)c->quota_us, (unsigned long long)c->period_us,
			grew(c->start.throttled_periods, c->end.throttled_periods),
			grew(c->start.periods, c->end.periods),
			grew(c->start.throttled_ns, c->end.throttled_ns) / 1e9);
	}
}

void cgcpu__json(const struct cg_limit *l, size_t n, FILE *f)
{
	bool first = true;

	fprintf(f, "  \"cgroups\": [");
	for (size_t i = 0; i < n; i++) {
		const struct cg_limit *c = &l[i];

		if (!c->read_end)
			continue;
		fprintf(f, "%s\n    {\"pid\": %u, \"path\": ", first ? "" : ",", c->pid);
		safestr__json(f, c->path, strlen(c->path));
		fprintf(f, ", \"version\": %d, \"quota_us\": %llu, \"period_us\": %llu, "
			"\"periods\": %llu, \"throttled_periods\": %llu, \"throttled_us\": %llu}",
			c->v2 ? 2 : 1, (unsigned long long)c->quota_us,
			(unsigned long long)c->period_us,
			grew(c->start.periods, c->end.periods),
			grew(c->start.throttled_periods, c->end.throttled_periods),
			grew(c->start.throttled_ns, c->end.throttled_ns) / 1000);
		first = false;
	}
	fprintf(f, "%s],\n", first ? "" : "\n  ");
}
