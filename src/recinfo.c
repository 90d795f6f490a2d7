// SPDX-License-Identifier: GPL-2.0-only
/* What a recording was of, and when, for the outputs' titles: see recinfo.h. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "recinfo.h"
#include "util.h"

/* Append to @buf, cutting with "..." when it is full. */
static void append(char *buf, size_t size, const char *fmt, ...)
{
	size_t len = strlen(buf);
	va_list ap;
	int n;

	if (len + 4 >= size)
		return;
	va_start(ap, fmt);
	n = vsnprintf(buf + len, size - len, fmt, ap);
	va_end(ap);
	if (n >= 0 && (size_t)n >= size - len)
		memcpy(buf + size - 4, "...", 4);
}

static const char *pcomm_of(const struct profile *p, __u32 id, bool tid)
{
	for (size_t i = 0; i < p->nr_threads; i++)
		if (tid ? p->threads[i].tid == id : p->threads[i].pid == id)
			return tid ? p->threads[i].comm : p->threads[i].pcomm;
	return NULL;
}

void rec_info__fill(struct rec_info *ri, const struct record_opts *o, const struct profile *p,
		    __u64 window_start_ns)
{
	struct timespec ts;
	__u64 now_rt, now_mono = now_ns();

	memset(ri, 0, sizeof(*ri));
	clock_gettime(CLOCK_REALTIME, &ts);
	now_rt = (__u64)ts.tv_sec * NSEC_PER_SEC + ts.tv_nsec;
	ri->start_ns = now_rt - (now_mono > window_start_ns ? now_mono - window_start_ns : 0);
	ri->window_ns = p->window_ns;
	ri->period_ns = p->period_ns;
	ri->freq_hz = o->freq_hz;
	if (o->cmd)
		snprintf(ri->program, sizeof(ri->program), "%s", o->cmd[0]);
	else if (o->nr_ids && pcomm_of(p, o->ids[0], false))
		snprintf(ri->program, sizeof(ri->program), "%s", pcomm_of(p, o->ids[0], false));
	if (o->cmd) {
		for (char **a = o->cmd; *a; a++)
			append(ri->target, sizeof(ri->target), "%s%s", a == o->cmd ? "" : " ", *a);
	} else if (o->filter == WPROF_FILTER_ALL) {
		append(ri->target, sizeof(ri->target), "every thread");
	} else {
		bool tid = o->filter == WPROF_FILTER_TID;

		for (size_t i = 0; i < o->nr_ids; i++) {
			const char *name = pcomm_of(p, o->ids[i], tid);

			append(ri->target, sizeof(ri->target), "%s%s %u", i ? ", " : "",
			       tid ? "tid" : "pid", o->ids[i]);
			if (name && name[0])
				append(ri->target, sizeof(ri->target), " (%s)", name);
		}
	}
	if (o->thread_glob)
		append(ri->target, sizeof(ri->target), ", threads %s", o->thread_glob);
	if (o->comm_glob)
		append(ri->target, sizeof(ri->target), ", processes %s", o->comm_glob);
}

void rec_info__date(const struct rec_info *ri, char *buf, size_t size)
{
	time_t t = ri->start_ns / NSEC_PER_SEC;
	struct tm tm;

	if (!localtime_r(&t, &tm) || !strftime(buf, size, "%Y-%m-%d %H:%M:%S %Z", &tm))
		snprintf(buf, size, "%llu s after the epoch", (unsigned long long)t);
}

const struct thread_acct *rec_info__thread_of(const struct profile *p, __u32 pid, __u32 tid)
{
	const struct thread_acct *t = profile__thread(p, tid), *end = p->threads + p->nr_threads;

	if (!t)
		return NULL;
	while (t > p->threads && t[-1].tid == tid)
		t--;
	for (; t < end && t->tid == tid; t++)
		if (t->pid == pid)
			return t;
	return NULL;
}
