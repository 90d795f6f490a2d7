// SPDX-License-Identifier: GPL-2.0-only
/* Process ends from pidfds: see proclive.h. */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "hmap.h"
#include "proclive.h"
#include "procmaps.h"

#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif

struct watch {
	int pid;
	int fd;        /* -1: ended, or none could be opened (then asked of /proc) */
	__u64 start;
	__u64 ended_round; /* 0: not seen ended */
};

struct proclive {
	int epfd;
	size_t max_fds, nr_fds;
	__u64 round; /* proclive__collect() calls */
	struct hmap by_pid; /* pid -> struct watch */
	struct proclive_stats st;
};

struct proclive *proclive__new(size_t max_fds)
{
	struct proclive *l = calloc(1, sizeof(*l));

	if (!l)
		return NULL;
	l->max_fds = max_fds;
	l->epfd = max_fds ? epoll_create1(EPOLL_CLOEXEC) : -1;
	if (l->epfd < 0)
		l->max_fds = 0;
	l->round = 1;
	return l;
}

static void unwatch(struct proclive *l, struct watch *w)
{
	if (w->fd < 0)
		return;
	/* closing the only fd of the pidfd takes it out of the epoll set */
	close(w->fd);
	w->fd = -1;
	l->nr_fds--;
}

void proclive__free(struct proclive *l)
{
	if (!l)
		return;
	for (size_t i = 0; i < l->by_pid.cap; i++) {
		struct watch *w = l->by_pid.slots[i].val;

		if (w) {
			unwatch(l, w);
			free(w);
		}
	}
	hmap__clear(&l->by_pid);
	if (l->epfd >= 0)
		close(l->epfd);
	free(l);
}

/* A pidfd of @pid, if @pid is still the process that started at @start; else -1. */
static int open_pidfd(struct proclive *l, int pid, __u64 start)
{
	__u64 now;
	int fd = syscall(SYS_pidfd_open, pid, 0);

	if (fd < 0) {
		if (errno == ENOSYS || errno == EPERM) /* before Linux 5.3, or a filter: never */
			l->max_fds = 0;
		/* out of fds after all: the budget is what is open, and no more tries */
		else if (errno == EMFILE || errno == ENFILE)
			l->max_fds = l->nr_fds;
		return -1;
	}
	/*
	 * The pidfd is of whatever process has the pid now. It is the one
	 * read before if it still has that start time: a pid is reused only
	 * after its process is gone.
	 */
	if (procmaps__start_time(pid, &now) || now != start) {
		close(fd);
		return -1;
	}
	return fd;
}

/* Give @w a pidfd in the epoll set, if the budget has room: whether it has one now. */
static bool give_pidfd(struct proclive *l, struct watch *w)
{
	struct epoll_event ev = { .events = EPOLLIN };
	int fd = l->nr_fds < l->max_fds ? open_pidfd(l, w->pid, w->start) : -1;

	ev.data.u64 = (__u64)(__u32)fd << 32 | (__u32)w->pid;
	if (fd >= 0 && epoll_ctl(l->epfd, EPOLL_CTL_ADD, fd, &ev)) {
		close(fd);
		fd = -1;
	}
	if (fd < 0)
		return false;
	w->fd = fd;
	l->nr_fds++;
	return true;
}

void proclive__watch(struct proclive *l, int pid, __u64 start)
{
	struct watch *w = l ? hmap__get(&l->by_pid, pid, 0) : NULL;
	void *old = NULL;

	if (!l)
		return;
	if (w && w->start == start) /* watched, ended, or left to /proc already */
		return;
	if (w) { /* another process had the pid: its entry goes */
		unwatch(l, w);
		hmap__del(&l->by_pid, pid, 0);
		free(w);
	}
	w = malloc(sizeof(*w));
	if (!w || hmap__put(&l->by_pid, pid, 0, w, &old)) {
		free(w);
		l->st.unwatched++;
		return;
	}
	*w = (struct watch){ .pid = pid, .fd = -1, .start = start };
	if (!give_pidfd(l, w))
		l->st.unwatched++;
}

void proclive__collect(struct proclive *l)
{
	struct epoll_event evs[64];
	int *gone = NULL, n;
	size_t nr_gone = 0;

	if (!l)
		return;
	/* the ends told since the last call have been told: their entries go */
	l->round++;
	for (size_t i = 0; i < l->by_pid.cap; i++) {
		struct watch *w = l->by_pid.slots[i].val;
		int *g;

		if (!w || !w->ended_round || w->ended_round >= l->round)
			continue;
		g = realloc(gone, (nr_gone + 1) * sizeof(*gone));
		if (!g)
			break;
		gone = g;
		gone[nr_gone++] = w->pid;
	}
	for (size_t i = 0; i < nr_gone; i++)
		free(hmap__del(&l->by_pid, gone[i], 0));
	free(gone);
	if (l->epfd < 0)
		return;
	do {
		n = epoll_wait(l->epfd, evs, sizeof(evs) / sizeof(evs[0]), 0);
		for (int i = 0; i < n; i++) {
			int pid = (int)(__u32)evs[i].data.u64, fd = evs[i].data.u64 >> 32;
			struct watch *w = hmap__get(&l->by_pid, pid, 0);

			if (!w || w->fd != fd)
				continue;
			unwatch(l, w);
			w->ended_round = l->round;
			l->st.ended++;
		}
	} while (n == sizeof(evs) / sizeof(evs[0]));
}

bool proclive__alive(struct proclive *l, int pid, __u64 start)
{
	struct watch *w = l ? hmap__get(&l->by_pid, pid, 0) : NULL;
	bool alive;
	__u64 now;

	if (w && w->start == start && (w->fd >= 0 || w->ended_round))
		return !w->ended_round;
	if (l)
		l->st.asked++;
	alive = !procmaps__start_time(pid, &now) && now == start;
	if (!w || w->start != start)
		return alive;
	/* one left to /proc: its entry is told ended, and goes at the next collect */
	if (!alive)
		w->ended_round = l->round;
	/* alive, and pidfds ended since: the kernel tells its end from now on */
	else if (give_pidfd(l, w))
		l->st.late++;
	return alive;
}

void proclive__stats(const struct proclive *l, struct proclive_stats *st)
{
	*st = l->st;
	st->watched = l->nr_fds;
}
