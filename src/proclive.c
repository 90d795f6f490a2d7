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
	bool wait_close; /* a try found no fd: none again until a pidfd is closed */
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
	l->wait_close = false;
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

/*
 * Whether @pid is still the process that started at @start, from /proc. Yes
 * where that cannot be read (no fd free, say): its state is kept, and it is
 * asked again at the next drain. Only a process gone, or a pid of another,
 * is an end.
 */
static bool proc_alive(int pid, __u64 start)
{
	__u64 now;
	int err = procmaps__start_time(pid, &now);

	return err ? err != -ESRCH : now == start;
}

/*
 * A pidfd of @pid, if @pid is still the process that started at @start;
 * -ESRCH if it is not, another -errno if none could be had.
 */
static int open_pidfd(struct proclive *l, int pid, __u64 start)
{
	__u64 now;
	int fd = syscall(SYS_pidfd_open, pid, 0), err;

	if (fd < 0) {
		err = -errno;
		if (err == -ENOSYS || err == -EPERM) /* before Linux 5.3, or a filter: never */
			l->max_fds = 0;
		return err;
	}
	/*
	 * The pidfd is of whatever process has the pid now. It is the one
	 * read before if it still has that start time: a pid is reused only
	 * after its process is gone.
	 */
	err = procmaps__start_time(pid, &now);
	if (!err && now != start)
		err = -ESRCH;
	if (err) {
		close(fd);
		return err;
	}
	return fd;
}

/*
 * Give @w a pidfd in the epoll set, if the budget has room: 1 if it has one
 * now, 0 if not (it is asked of /proc), -ESRCH if its process is gone.
 * After a try that found no fd (or no room in the epoll set), none until a
 * pidfd has been closed since. Out of fds (EMFILE, ENFILE), the budget
 * becomes half of the pidfds open: the rest of wprof needs fds too (the
 * symbolizer's files, /proc reads), and would find none at the old budget.
 */
static int give_pidfd(struct proclive *l, struct watch *w)
{
	struct epoll_event ev = { .events = EPOLLIN };
	int fd;

	if (l->nr_fds >= l->max_fds || l->wait_close)
		return 0;
	fd = open_pidfd(l, w->pid, w->start);
	if (fd == -ESRCH)
		return -ESRCH;
	ev.data.u64 = (__u64)(__u32)fd << 32 | (__u32)w->pid;
	if (fd >= 0 && epoll_ctl(l->epfd, EPOLL_CTL_ADD, fd, &ev)) {
		int err = -errno;

		close(fd);
		fd = err;
	}
	if (fd < 0) {
		if (fd == -EMFILE || fd == -ENFILE)
			l->max_fds = l->nr_fds / 2;
		l->wait_close = true;
		return 0;
	}
	w->fd = fd;
	l->nr_fds++;
	return 1;
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
	if (give_pidfd(l, w) <= 0)
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
	int given;

	if (w && w->start == start && (w->fd >= 0 || w->ended_round))
		return !w->ended_round;
	if (l)
		l->st.asked++;
	if (!w || w->start != start)
		return proc_alive(pid, start);
	/*
	 * One left to /proc. Where the budget has room again, it gets a
	 * pidfd, whose open reads its start (the answer), and the kernel
	 * tells its end from now on.
	 */
	given = give_pidfd(l, w);
	if (given > 0) {
		l->st.late++;
		return true;
	}
	alive = !given && proc_alive(pid, start);
	/* its entry is told ended, and goes at the next collect */
	if (!alive)
		w->ended_round = l->round;
	return alive;
}

void proclive__stats(const struct proclive *l, struct proclive_stats *st)
{
	*st = l->st;
	st->watched = l->nr_fds;
}
