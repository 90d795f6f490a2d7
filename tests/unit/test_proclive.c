// SPDX-License-Identifier: GPL-2.0-only
/*
 * Process ends from pidfds, against processes this test makes and ends
 * itself: a watched child is alive until it exits, and then ended even
 * while it is a zombie (its /proc entry, start time and all, still there:
 * the answer comes from the kernel's report, not from /proc). A start time
 * that is not the process's is never taken for it, and without pidfds
 * (a budget of none) every answer comes from /proc. With no fd free, a
 * live process is never told ended, and the budget shrinks.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "proclive.h"
#include "procmaps.h"
#include "unit.h"

#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif

/* A child that waits for *@wfd to close, then exits; -1 on failure. */
static pid_t child(int *wfd)
{
	int fds[2];
	pid_t pid;
	char c;

	if (pipe(fds))
		return -1;
	pid = fork();
	if (pid == 0) {
		/* no other child's write end either: each ends when its own closes */
		for (int fd = 3; fd < 1024; fd++)
			if (fd != fds[0])
				close(fd);
		_exit(read(fds[0], &c, 1) < 0);
	}
	close(fds[0]);
	*wfd = fds[1];
	return pid;
}

/* End the child *@pid of child() (its pipe's write end *@wfd), if any, and reap it. */
static void end_child(int *wfd, pid_t *pid)
{
	if (*wfd >= 0)
		close(*wfd);
	*wfd = -1;
	if (*pid > 0)
		waitpid(*pid, NULL, 0);
	*pid = -1;
}

/* Collect until @pid (started at @start) is told ended, for up to 5 s. */
static bool ends(struct proclive *l, pid_t pid, __u64 start)
{
	for (int i = 0; i < 500; i++) {
		struct timespec ts = { 0, 10 * 1000 * 1000 };

		proclive__collect(l);
		if (!proclive__alive(l, pid, start))
			return true;
		nanosleep(&ts, NULL);
	}
	return false;
}

static void test_end_of_child(void)
{
	struct proclive *l = proclive__new(16);
	struct proclive_stats st;
	__u64 start, zstart;
	int wfd = -1;
	pid_t pid = child(&wfd);

	if (!CHECK(l && pid > 0, "a watcher and a child")) {
		proclive__free(l);
		return;
	}
	CHECK(!procmaps__start_time(pid, &start), "the child's start time");
	proclive__watch(l, pid, start);
	proclive__stats(l, &st);
	CHECK_EQ_U64(st.watched, 1, "the child has a pidfd");
	proclive__collect(l);
	CHECK(proclive__alive(l, pid, start), "alive while it waits");
	CHECK(!proclive__alive(l, pid, start + 1), "not alive as another start time");
	proclive__stats(l, &st);
	CHECK_EQ_U64(st.asked, 1, "only the other start time was asked of /proc");

	close(wfd); /* it exits: a zombie, not reaped yet */
	CHECK(ends(l, pid, start), "ended once it exited");
	CHECK(!procmaps__start_time(pid, &zstart) && zstart == start,
	      "its zombie still shows the same start time in /proc");
	proclive__stats(l, &st);
	CHECK_EQ_U64(st.ended, 1, "one end reported");
	CHECK_EQ_U64(st.watched, 0, "its pidfd closed");
	CHECK_EQ_U64(st.asked, 1, "the end came from the pidfd, not from /proc");
	waitpid(pid, NULL, 0);
	proclive__collect(l); /* its entry goes: /proc answers, and it is gone there */
	CHECK(!proclive__alive(l, pid, start), "still ended once reaped");
	proclive__free(l);
}

static void test_wrong_start(void)
{
	struct proclive *l = proclive__new(16);
	struct proclive_stats st;
	__u64 start;

	if (!CHECK(l && !procmaps__start_time(getpid(), &start), "a watcher"))
		goto out;
	/* as if the pid had been reused since its start time was read */
	proclive__watch(l, getpid(), start + 1);
	proclive__stats(l, &st);
	CHECK_EQ_U64(st.watched, 0, "no pidfd for a start time that is not the process's");
	CHECK_EQ_U64(st.unwatched, 1, "counted");
	CHECK(!proclive__alive(l, getpid(), start + 1), "not alive as that start time");
	proclive__watch(l, getpid(), start);
	proclive__watch(l, getpid(), start);
	proclive__stats(l, &st);
	CHECK_EQ_U64(st.watched, 1, "one pidfd for the right one, watched twice");
	CHECK(proclive__alive(l, getpid(), start), "alive as its own start time");
out:
	proclive__free(l);
}

/*
 * A budget of one pidfd: the second child gets none at first, is asked of
 * /proc, and gets the pidfd once the first child's end freed it; then its
 * own end comes from the kernel, with no more answers from /proc.
 */
static void test_late_pidfd(void)
{
	struct proclive *l = proclive__new(1);
	struct proclive_stats st;
	__u64 start1, start2;
	int wfd1 = -1, wfd2 = -1;
	pid_t pid1 = child(&wfd1), pid2 = child(&wfd2);

	if (!CHECK(l && pid1 > 0 && pid2 > 0 && !procmaps__start_time(pid1, &start1) &&
			   !procmaps__start_time(pid2, &start2),
		   "a watcher with room for one pidfd, and two children"))
		goto out;
	proclive__watch(l, pid1, start1);
	proclive__watch(l, pid2, start2);
	proclive__stats(l, &st);
	CHECK(st.watched == 1 && st.unwatched == 1, "one watched, one not (%zu, %zu)", st.watched,
	      st.unwatched);
	proclive__collect(l);
	CHECK(proclive__alive(l, pid2, start2), "the second alive, from /proc");
	proclive__stats(l, &st);
	CHECK(st.late == 0 && st.asked == 1, "no room yet: no pidfd for it (late %zu, asked %zu)",
	      st.late, st.asked);
	close(wfd1);
	wfd1 = -1;
	CHECK(ends(l, pid1, start1), "the first ended");
	end_child(&wfd1, &pid1);
	CHECK(proclive__alive(l, pid2, start2), "the second still alive, from /proc");
	proclive__stats(l, &st);
	CHECK(st.late == 1 && st.watched == 1, "and given the freed pidfd (late %zu, watched %zu)",
	      st.late, st.watched);
	close(wfd2);
	wfd2 = -1;
	CHECK(ends(l, pid2, start2), "the second ended");
	proclive__stats(l, &st);
	CHECK_EQ_U64(st.asked, 2, "its end from the pidfd: no more answers from /proc");
	CHECK_EQ_U64(st.ended, 2, "two ends told by pidfds");
out:
	end_child(&wfd1, &pid1);
	end_child(&wfd2, &pid2);
	proclive__free(l);
}

/*
 * Out of fds: the pidfd for a child cannot be opened, nor its /proc entry
 * read. It is alive all the same (before, the failed read said it ended,
 * and its state was dropped), and the budget is now half of the pidfds
 * open: none, so a second child gets none with fds free again. Its end is
 * then read from /proc.
 */
static void test_no_fd_free(void)
{
	struct proclive *l = proclive__new(4);
	struct rlimit old, low;
	struct proclive_stats st;
	int wfd1 = -1, wfd2 = -1, fds[64], nr = 0;
	pid_t pid1 = child(&wfd1), pid2 = child(&wfd2), gone;
	__u64 start1, start2;
	bool alive;

	if (!CHECK(l && pid1 > 0 && pid2 > 0 && !procmaps__start_time(pid1, &start1) &&
			   !procmaps__start_time(pid2, &start2) && !getrlimit(RLIMIT_NOFILE, &old),
		   "a watcher, two children"))
		goto out;
	/* every fd below the limit taken */
	low = old;
	low.rlim_cur = 64;
	if (!CHECK(!setrlimit(RLIMIT_NOFILE, &low), "a soft limit of 64 fds"))
		goto out;
	while (nr < 64 && (fds[nr] = open("/dev/null", O_RDONLY | O_CLOEXEC)) >= 0)
		nr++;
	CHECK(nr < 64 && errno == EMFILE, "the fd table full (%d more fds)", nr);
	proclive__watch(l, pid1, start1);
	proclive__collect(l);
	alive = proclive__alive(l, pid1, start1);
	while (nr > 0)
		close(fds[--nr]);
	setrlimit(RLIMIT_NOFILE, &old);
	CHECK(alive, "the first child alive, though neither its pidfd nor its /proc entry opens");
	proclive__watch(l, pid2, start2);
	proclive__stats(l, &st);
	CHECK(st.watched == 0 && st.unwatched == 2,
	      "out of fds, the budget is half the pidfds open, none: neither child has one "
	      "(watched %zu, unwatched %zu)",
	      st.watched, st.unwatched);
	gone = pid1;
	end_child(&wfd1, &pid1);
	proclive__collect(l);
	CHECK(!proclive__alive(l, gone, start1), "the first child's end, from /proc");
out:
	end_child(&wfd1, &pid1);
	end_child(&wfd2, &pid2);
	proclive__free(l);
}

static void test_no_budget(void)
{
	struct proclive *l = proclive__new(0);
	struct proclive_stats st;
	__u64 start;
	int wfd = -1;
	pid_t pid = child(&wfd);

	if (!CHECK(l && pid > 0 && !procmaps__start_time(pid, &start), "a watcher and a child")) {
		proclive__free(l);
		return;
	}
	proclive__watch(l, pid, start);
	proclive__watch(l, pid, start);
	proclive__collect(l);
	CHECK(proclive__alive(l, pid, start), "alive, from /proc");
	close(wfd);
	waitpid(pid, NULL, 0);
	proclive__collect(l);
	CHECK(!proclive__alive(l, pid, start), "gone, from /proc");
	CHECK(!proclive__alive(l, pid, start), "gone, told again without /proc");
	proclive__stats(l, &st);
	CHECK_EQ_U64(st.watched, 0, "no pidfd");
	CHECK_EQ_U64(st.unwatched, 1, "one process without a pidfd, watched twice");
	CHECK_EQ_U64(st.asked, 2, "two answers from /proc");
	proclive__collect(l); /* its entry goes: asked of /proc again */
	CHECK(!proclive__alive(l, pid, start), "still gone after the next collect");
	proclive__stats(l, &st);
	CHECK_EQ_U64(st.asked, 3, "that answer from /proc");
	CHECK(!proclive__alive(NULL, pid, start), "no watcher at all: /proc");
	proclive__free(l);
}

int main(void)
{
	int fd = syscall(SYS_pidfd_open, getpid(), 0);

	signal(SIGPIPE, SIG_IGN);
	if (fd >= 0) {
		close(fd);
		test_end_of_child();
		test_wrong_start();
		test_late_pidfd();
		test_no_fd_free();
	} else {
		printf("skip main: no pidfds here (pidfd_open: %s)\n", strerror(errno));
	}
	test_no_budget();
	return unit_done();
}
