// SPDX-License-Identifier: GPL-2.0-only
/* Who ran instead: see raninst.h. */
#include <stdlib.h>
#include <string.h>

#include "profile.h"
#include "raninst.h"
#include "recording.h"
#include "safestr.h"

static int cmp_entry(const void *a, const void *b)
{
	const struct ran_entry *x = a, *y = b;

	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	if (x->start_id != y->start_id)
		return x->start_id < y->start_id ? -1 : 1;
	if (x->ns != y->ns)
		return x->ns > y->ns ? -1 : 1;
	/* a stable order for equal times: the same bytes from the same recording */
	if (x->runner_tid != y->runner_tid)
		return x->runner_tid < y->runner_tid ? -1 : 1;
	return x->runner_pid < y->runner_pid ? -1 : x->runner_pid > y->runner_pid;
}

/* by waiting thread and runner: the same pair side by side */
static int cmp_pair(const void *a, const void *b)
{
	const struct ran_entry *x = a, *y = b;
	const __u32 kx[] = { x->tid, x->start_id, x->pid, x->runner_tid, x->runner_pid };
	const __u32 ky[] = { y->tid, y->start_id, y->pid, y->runner_tid, y->runner_pid };

	for (size_t i = 0; i < sizeof(kx) / sizeof(kx[0]); i++)
		if (kx[i] != ky[i])
			return kx[i] < ky[i] ? -1 : 1;
	return 0;
}

size_t raninst__sort(struct ran_entry *e, size_t nr)
{
	size_t n = 0;

	if (!nr)
		return 0;
	qsort(e, nr, sizeof(*e), cmp_pair);
	for (size_t i = 0; i < nr; i++) {
		if (n && !cmp_pair(&e[n - 1], &e[i])) {
			e[n - 1].ns += e[i].ns;
			if (!e[n - 1].comm[0])
				memcpy(e[n - 1].comm, e[i].comm, sizeof(e[i].comm));
			continue;
		}
		e[n++] = e[i];
	}
	qsort(e, n, sizeof(*e), cmp_entry);
	return n;
}

/* @t's entries in @r (sorted): the first, and how many (0: none). */
static const struct ran_entry *entries_of(const struct recording *r, const struct thread_acct *t,
					  size_t *n)
{
	size_t lo = 0, hi = r->nr_ran;

	*n = 0;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct ran_entry *e = &r->ran[mid];

		if (e->tid < t->tid || (e->tid == t->tid && e->start_id < t->start_id))
			lo = mid + 1;
		else
			hi = mid;
	}
	for (size_t i = lo; i < r->nr_ran && r->ran[i].tid == t->tid &&
	     r->ran[i].start_id == t->start_id; i++)
		(*n)++;
	return *n ? &r->ran[lo] : NULL;
}

static __u64 us_of(__u64 ns)
{
	return (ns + 500) / 1000;
}

static void json_entry(FILE *f, bool first, const struct ran_entry *e, const char *name, __u64 us)
{
	fprintf(f, "%s{", first ? "" : ", ");
	if (e)
		fprintf(f, "\"pid\": %u, \"tid\": %u, ", e->runner_pid, e->runner_tid);
	fprintf(f, "\"comm\": ");
	safestr__json(f, name, strnlen(name, WPROF_COMM_LEN));
	fprintf(f, ", \"us\": %llu}", (unsigned long long)us);
}

void raninst__json(const struct recording *r, const struct thread_acct *t, FILE *f)
{
	__u64 total_us = t->off_us[WPROF_OFF_RUNQ], named_us = 0, others_us = 0;
	size_t n, shown = 0;
	const struct ran_entry *e = entries_of(r, t, &n);

	if (!r->ran_recorded)
		return;
	fprintf(f, ", \"ran_instead\": [");
	for (size_t i = 0; i < n; i++) {
		__u64 us = us_of(e[i].ns);

		if (e[i].runner_tid == WPROF_RAN_NOT_KNOWN)
			continue; /* in the rest below */
		if (shown == RAN_TOP_JSON) {
			others_us += us;
			continue;
		}
		json_entry(f, !shown++, &e[i], e[i].comm, us);
		named_us += us;
	}
	if (others_us)
		json_entry(f, !shown++, NULL, "[others]", others_us);
	/* the wait no run was named for: older than the CPU's ring, or not seen at a switch */
	if (total_us > named_us + others_us)
		json_entry(f, !shown++, NULL, "[not known]", total_us - named_us - others_us);
	fprintf(f, "]");
}

void raninst__column(const struct recording *r, const struct thread_acct *t, char *buf,
		     size_t size)
{
	size_t n, shown = 0, len = 0;
	const struct ran_entry *e = entries_of(r, t, &n);
	__u64 total = t->off_ns[WPROF_OFF_RUNQ];
	char comm[SAFESTR_SIZE(WPROF_COMM_LEN)];

	snprintf(buf, size, "-");
	for (size_t i = 0; i < n && shown < RAN_TOP_TABLE && total && len < size; i++) {
		if (e[i].runner_tid == WPROF_RAN_NOT_KNOWN)
			continue;
		/* one column: safe text has no tab or newline; no space or comma either */
		safestr__str(comm, sizeof(comm), e[i].comm[0] ? e[i].comm : "?");
		for (char *c = comm; *c; c++)
			if (*c == ' ' || *c == ',')
				*c = '_';
		len += snprintf(buf + len, size - len, "%s%s/%u:%.0f%%", shown ? "," : "", comm,
				e[i].runner_tid, 100.0 * e[i].ns / total);
		shown++;
	}
}

/* A process's runners by pid: their time, and the name of the one with the most */
struct ran_group {
	__u32 pid;
	__u64 ns, top_ns;
	const char *comm;
};

static int cmp_group_pid(const void *a, const void *b)
{
	const struct ran_group *x = a, *y = b;

	return x->pid < y->pid ? -1 : x->pid > y->pid;
}

static int cmp_group_ns(const void *a, const void *b)
{
	const struct ran_group *x = a, *y = b;

	if (x->ns != y->ns)
		return x->ns > y->ns ? -1 : 1;
	return cmp_group_pid(a, b);
}

/* whether entry @e is of a selected thread of @pid */
static bool of_selected(const struct recording *r, const struct ran_entry *e, __u32 pid)
{
	const struct thread_acct *t;

	if (e->pid != pid || e->runner_tid == WPROF_RAN_NOT_KNOWN)
		return false;
	t = profile__thread(&r->prof, e->tid);
	return t && t->start_id == e->start_id && t->selected;
}

void raninst__summary(const struct recording *r, __u32 pid, __u64 runq_ns, __u64 busy_ns,
		      FILE *f)
{
	struct ran_group *g;
	size_t n = 0, k = 0;
	char comm[SAFESTR_SIZE(WPROF_COMM_LEN)];

	if (!r->nr_ran || runq_ns < 10000000 || runq_ns * 10 < busy_ns)
		return;
	for (size_t i = 0; i < r->nr_ran; i++)
		n += of_selected(r, &r->ran[i], pid);
	g = calloc(n + 1, sizeof(*g));
	if (!g || !n) {
		free(g); /* out of memory: the summary is only the poorer */
		return;
	}
	for (size_t i = 0; i < r->nr_ran; i++) {
		const struct ran_entry *e = &r->ran[i];

		if (of_selected(r, e, pid))
			g[k++] = (struct ran_group){ e->runner_pid, e->ns, e->ns, e->comm };
	}
	qsort(g, n, sizeof(*g), cmp_group_pid);
	k = 0;
	for (size_t i = 0; i < n; i++) {
		if (k && g[k - 1].pid == g[i].pid) {
			g[k - 1].ns += g[i].ns;
			if (g[i].top_ns > g[k - 1].top_ns) {
				g[k - 1].top_ns = g[i].top_ns;
				g[k - 1].comm = g[i].comm;
			}
			continue;
		}
		g[k++] = g[i];
	}
	qsort(g, k, sizeof(*g), cmp_group_ns);
	fprintf(f, "wprof:   waited for a CPU %.3f s, behind", runq_ns / 1e9);
	for (size_t i = 0; i < k && i < RAN_TOP_TABLE; i++) {
		fprintf(f, "%s ", i ? "," : ":");
		if (g[i].pid == pid)
			fprintf(f, "its own threads");
		else if (!g[i].pid)
			fprintf(f, "nobody (the CPU was idle)");
		else
			fprintf(f, "%s (pid %u)", safestr__str(comm, sizeof(comm), g[i].comm), g[i].pid);
		fprintf(f, " %.1f%%", 100.0 * g[i].ns / runq_ns);
	}
	fputc('\n', f);
	free(g);
}
