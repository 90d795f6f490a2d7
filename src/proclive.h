/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Which of the processes wprof keeps state for (unwind tables, symbols) are
 * still alive. The kernel says when one ends, through a pidfd per process
 * in an epoll set, so that knowing costs nothing while they live: asking
 * /proc/PID/stat of each one at every drain took 4.8% of a CPU beside 2000
 * idle processes (wprof record -a; 0.35% with pidfds, make bench). A process
 * that has no pidfd (the fd budget is spent, or the kernel predates pidfds)
 * is asked through /proc, and given one once ends have freed some budget.
 */
#ifndef WPROF_PROCLIVE_H
#define WPROF_PROCLIVE_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

struct proclive;

/* At most @max_fds pidfds (0: none, /proc for every process). NULL on failure. */
struct proclive *proclive__new(size_t max_fds);
void proclive__free(struct proclive *l);
/*
 * Watch process @pid, read as started at @start (clock ticks since boot,
 * procmaps__start_time()): call once its state is made. A pid known already
 * for the same start is left as it is. One that gets no pidfd is asked of
 * /proc (proclive__alive()), and gets one there, alive, when the budget has
 * room again.
 */
void proclive__watch(struct proclive *l, int pid, __u64 start);
/*
 * Take the ends the kernel reported since the last call. Call before a
 * round of proclive__alive(): an end taken now is told until the next call.
 */
void proclive__collect(struct proclive *l);
/* Whether @pid is still the process that started at @start. @l NULL: from /proc. */
bool proclive__alive(struct proclive *l, int pid, __u64 start);

struct proclive_stats {
	size_t watched;   /* processes with a pidfd now */
	size_t unwatched; /* processes that got none (past the budget, or no pidfds) */
	size_t late;      /* of those, given one later (the budget had room again) */
	size_t ended;     /* ends the kernel reported */
	size_t asked;     /* proclive__alive() answers from /proc */
};
void proclive__stats(const struct proclive *l, struct proclive_stats *st);

#endif /* WPROF_PROCLIVE_H */
