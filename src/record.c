// SPDX-License-Identifier: GPL-2.0-only
/*
 * `wprof record`: the recording loop (events, maps of new processes, drains),
 * and the outputs and summary at its end.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cgcpu.h"
#include "cli.h"
#include "codewatch.h"
#include "debughint.h"
#include "folded.h"
#include "held.h"
#include "hmap.h"
#include "longblocks.h"
#include "output.h"
#include "proclive.h"
#include "procmaps.h"
#include "profile.h"
#include "pyproc.h"
#include "record.h"
#include "report.h"
#include "samplerate.h"
#include "session.h"
#include "symbolize.h"
#include "threadtime.h"
#include "unwtab.h"
#include "util.h"

#define TICK_MS 100
/*
 * In -a mode, scan /proc for processes not snapshot yet this often (in
 * ticks' worth of time: under churn, events end most ticks early). Their
 * exec and fork events make most scans find none: then the next waits
 * twice as long, up to SCAN_MAX_TICKS. A scan that finds one (an event
 * lost, or one made after the events were taken) brings the pace back, and
 * a drain that finds events lost scans at once. Reading /proc's pids is not
 * free: 3 ms beside 2000 processes here.
 */
#define SCAN_EVERY_TICKS 10
#define SCAN_MAX_TICKS 160
/*
 * Take the BPF maps' content into user space this often (see
 * session__drain()), and every tick while the last drain found a map a
 * quarter full: then a second could fill it. By the clock, not by ticks:
 * under churn the ring buffer's events end most ticks early. The state of
 * processes that ended is pruned at the same pace.
 */
#define DRAIN_EVERY_NS NSEC_PER_SEC
#define DRAIN_SOON_NS (TICK_MS * NSEC_PER_MSEC)
#define DRAIN_SOON_PCT 25

struct recorder {
	struct record_opts opts;
	struct outputs outs;
	int argc;            /* wprof's arguments after "wprof", for the recording */
	char **argv;
	struct session *session;
	struct symbolizer *sym;
	struct unwtab *unw;  /* NULL with --no-cfi */
	struct pyproc *py;   /* the CPython processes; NULL with --no-cfi, WPROF_PYTHON=off */
	struct proclive *live; /* the ends of the processes snapshot */
	struct rlimit nofile; /* RLIMIT_NOFILE as wprof started: CMD's */
	bool nofile_raised;
	int sigfd;
	pid_t child;         /* -- CMD */
	int child_status;
	bool child_done;     /* it ended by itself while recording: child_status says how */
	int go_fd;           /* child execs when this closes */
	int exec_err_fd;     /* child reports exec failure here */
	bool *gone;          /* per target id */
	struct rec_proc *seen; /* processes already snapshot, with their command line */
	size_t nr_seen, cap_seen;
	struct hmap seen_ids;  /* pid -> its index in seen, plus 1 */
	struct codewatch *code; /* the code of the processes read again at every tick */
	/* the lines of threads that ended, made while recording (see retire()) */
	struct profile prof;
	struct folded *lines;
	bool retire_failed;
	int timeline_err; /* the slices could not be made longer: the recording fails */
	struct cg_limit *cg; /* targets in a cgroup with a CPU limit (find_limits()) */
	size_t nr_cg;
};

/* 'Z' and 'X': exited but not reaped; gone for our purposes. */
static bool task_alive(__u32 pid, __u32 tid)
{
	char path[64], buf[512], *p;

	snprintf(path, sizeof(path), "/proc/%u/task/%u/stat", pid, tid);
	if (read_small_file(path, buf, sizeof(buf)) <= 0)
		return false;
	p = strrchr(buf, ')');
	return p && p[1] == ' ' && p[2] != 'Z' && p[2] != 'X';
}

/* The tgid of a thread, or -ESRCH. */
static int tgid_of(__u32 tid)
{
	char path[64], buf[4096], *p;

	snprintf(path, sizeof(path), "/proc/%u/status", tid);
	if (read_small_file(path, buf, sizeof(buf)) <= 0)
		return -ESRCH;
	p = strstr(buf, "\nTgid:");
	return p ? atoi(p + 6) : -ESRCH;
}

static int check_targets(const struct record_opts *o)
{
	for (size_t i = 0; i < o->nr_ids; i++) {
		__u32 id = o->ids[i];
		int tgid = tgid_of(id);

		if (tgid < 0) {
			pr_err("%s %u does not exist", o->filter == WPROF_FILTER_PID ? "pid" : "tid",
			       id);
			return -ESRCH;
		}
		if (o->filter == WPROF_FILTER_PID && (__u32)tgid != id) {
			pr_err("%u is a thread of process %d: use -t %u or -p %d", id, tgid, id,
			       tgid);
			return -EINVAL;
		}
		/* a zombie would record nothing and look like a success */
		if (!task_alive(tgid, id)) {
			pr_err("%s %u has exited (a zombie waiting for its parent): nothing to "
			       "record", o->filter == WPROF_FILTER_PID ? "pid" : "tid", id);
			return -ESRCH;
		}
	}
	return 0;
}

/* How CMD ended, in a line of the summary, and the exit status wprof takes from it. */
static int child_exit(struct recorder *r)
{
	int st = r->child_status;

	if (!r->opts.cmd || !r->child_done)
		return 0;
	if (WIFEXITED(st) && WEXITSTATUS(st)) {
		pr_info("%s exited with status %d", r->opts.cmd[0], WEXITSTATUS(st));
		return WEXITSTATUS(st);
	}
	if (WIFSIGNALED(st)) {
		pr_info("%s was killed by signal %d (%s)%s", r->opts.cmd[0], WTERMSIG(st),
			strsignal(WTERMSIG(st)), WCOREDUMP(st) ? ", core dumped" : "");
		return 128 + WTERMSIG(st);
	}
	return 0;
}

/*
 * Fork CMD stopped before exec, so that it can be made a target before its
 * first instruction; it execs when go_fd closes.
 */
static int spawn_child(struct recorder *r, const sigset_t *oldmask)
{
	int go[2], ex[2];

	if (pipe2(go, O_CLOEXEC) || pipe2(ex, O_CLOEXEC)) {
		pr_err("cannot create a pipe: %s", strerror(errno));
		return -errno;
	}
	r->child = fork();
	if (r->child < 0) {
		pr_err("cannot fork: %s", strerror(errno));
		return -errno;
	}
	if (r->child == 0) {
		char c;
		int e;

		close(go[1]);
		close(ex[0]);
		sigprocmask(SIG_SETMASK, oldmask, NULL);
		signal(SIGPIPE, SIG_DFL);
		if (r->nofile_raised)
			setrlimit(RLIMIT_NOFILE, &r->nofile);
		if (read(go[0], &c, 1) != 0)
			_exit(127); /* the recorder gave up */
		execvp(r->opts.cmd[0], r->opts.cmd);
		e = errno;
		if (write(ex[1], &e, sizeof(e)) < 0)
			_exit(127);
		_exit(127);
	}
	close(go[0]);
	close(ex[1]);
	r->go_fd = go[1];
	r->exec_err_fd = ex[0];
	return 0;
}

static int release_child(struct recorder *r)
{
	int e = 0;
	ssize_t n;

	close(r->go_fd);
	r->go_fd = -1;
	n = read(r->exec_err_fd, &e, sizeof(e));
	close(r->exec_err_fd);
	r->exec_err_fd = -1;
	if (n == sizeof(e)) {
		waitpid(r->child, NULL, 0);
		r->child = 0;
		pr_err("cannot run %s: %s", r->opts.cmd[0], strerror(e));
		return -e;
	}
	return 0;
}

/* By a table, not a search: -a looks up every pid of /proc ten times a second. */
static struct rec_proc *seen_pid(struct recorder *r, __u32 pid)
{
	uintptr_t i = (uintptr_t)hmap__get(&r->seen_ids, pid, 0);

	return i ? &r->seen[i - 1] : NULL;
}

/*
 * The command line of @pid as it is now, its arguments joined by spaces and
 * cut at REC_CMDLINE_MAX bytes, kept when it has one (a kernel thread or a
 * zombie has none): read again at each snapshot, so that the one after an
 * exec (the -- CMD child is snapshot before it) wins.
 */
static void keep_cmdline(struct rec_proc *p)
{
	char path[64], buf[REC_CMDLINE_MAX + 1], *s;
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%u/cmdline", p->pid);
	n = read_small_file(path, buf, sizeof(buf));
	if (n <= 0)
		return;
	/* other bytes are kept as they are: each output shows them as safestr.h says */
	for (ssize_t i = 0; i < n; i++)
		if (buf[i] == '\0')
			buf[i] = ' ';
	while (n > 0 && buf[n - 1] == ' ')
		n--;
	buf[n] = '\0';
	if (!n || (p->cmdline && !strcmp(p->cmdline, buf)))
		return;
	s = strdup(buf);
	if (!s)
		return;
	free(p->cmdline);
	p->cmdline = s;
}

/*
 * Before the unwinder lets the maps of ended processes go (of @pid only,
 * unless 0): their copies still queued by the held stacks' reader are taken
 * and walked with them first. A copy taken while the main thread built a
 * big file's tables can be queued after the maps it needs were installed,
 * and the process gone by the time the main thread looks again: 40% of a
 * compile's stacks were lost so on a busy machine.
 */
static void walk_held_before_gone(struct recorder *r, __u32 pid)
{
	if (!r->session)
		return;
	session__take_held(r->session);
	held__walk(session__held(r->session), r->unw, pid, now_ns(), false);
}

/*
 * Keep @maps of @pid, started at @start, for the unwinder and the
 * symbolizer (which takes them over), and walk the held stacks they were
 * wanted for. 0, or the first error.
 */
static int keep_maps(struct recorder *r, __u32 pid, __u64 start, struct proc_maps *maps)
{
	int uerr = 0, err;

	/*
	 * A kernel thread or a zombie: no mappings, nothing to keep, no end to
	 * learn; and a process's maps as last read are kept (its stacks held
	 * before it exited are walked with them)
	 */
	if (maps->nr)
		proclive__watch(r->live, pid, start);
	if (r->py && maps->nr)
		pyproc__add_maps(r->py, pid, start, maps);
	if (r->unw && maps->nr) {
		uerr = unwtab__add_maps(r->unw, pid, start, maps);
		if (!uerr && r->session)
			held__walk(session__held(r->session), r->unw, pid, now_ns(), false);
	}
	err = symbolizer__add_maps(r->sym, pid, start, maps->read_ns, maps);
	return uerr ? uerr : err;
}

/*
 * Snapshot @pid's mappings (and command line) for the unwinder and the
 * symbolizer. @again: a named target's read at every tick, which catches
 * dlopen(); skipped while its code is unchanged (codewatch.h). A snapshot
 * an event asks for (exec, fork, the unwinder meeting code it has no table
 * for), and the last one, read everything.
 */
static void snapshot(struct recorder *r, __u32 pid, bool again)
{
	struct rec_proc *p = seen_pid(r, pid);
	struct proc_maps maps = {};
	__u64 start;
	int err;

	if (!p) {
		void *old;

		if (array_reserve(&r->seen, &r->cap_seen, r->nr_seen, sizeof(*r->seen), 256) ||
		    hmap__put(&r->seen_ids, pid, 0, (void *)(uintptr_t)(r->nr_seen + 1), &old))
			return;
		p = &r->seen[r->nr_seen++];
		p->pid = pid;
		p->cmdline = NULL;
	}
	keep_cmdline(p);
	if (codewatch__same(r->code, pid, again, &start)) {
		symbolizer__refresh_jit(r->sym, pid, start); /* the JIT's perf map grows still */
		return;
	}
	/*
	 * One read of its mappings for both (the kernel's making of the maps
	 * file is most of this). The unwinder's maps first: the kernel's
	 * walks wait for them, the symbolizer only has to be done before the
	 * process exits. A process gone meanwhile is not an error: its
	 * frames fall back.
	 */
	/* copies taken with the maps about to be replaced: walked with those */
	if (r->unw && r->session)
		held__walk(session__held(r->session), r->unw, pid, now_ns(), false);
	err = procmaps__read_proc(pid, &start, &maps);
	if (err) {
		if (err == -ESRCH && r->unw) {
			walk_held_before_gone(r, pid);
			unwtab__gone(r->unw, pid);
			pyproc__gone(r->py, pid);
		}
		return;
	}
	err = keep_maps(r, pid, start, &maps);
	/* a snapshot that failed in part is made again at the next tick */
	codewatch__keep(r->code, pid, start, !err);
}

/* Every process's mappings, so that exiting ones stay nameable: how many were new. */
static size_t snapshot_new_processes(struct recorder *r)
{
	struct dirent *de;
	DIR *d = opendir("/proc");
	size_t nr = 0;

	if (!d)
		return 0;
	while ((de = readdir(d))) {
		char *end;
		unsigned long pid = strtoul(de->d_name, &end, 10);

		if (*end || !pid || seen_pid(r, pid))
			continue;
		snapshot(r, pid, false);
		nr++;
	}
	closedir(d);
	return nr;
}

/* The named targets' mappings: @again at every tick (see snapshot()); else all read. */
static void snapshot_targets(struct recorder *r, bool again)
{
	const struct record_opts *o = &r->opts;

	if (o->cmd) {
		if (r->child > 0)
			snapshot(r, r->child, again);
		return;
	}
	for (size_t i = 0; i < o->nr_ids; i++) {
		int pid = o->filter == WPROF_FILTER_PID ? (int)o->ids[i] : tgid_of(o->ids[i]);

		if (pid > 0 && !r->gone[i])
			snapshot(r, pid, again);
	}
}

/* True when no target is left to record. */
static bool targets_gone(struct recorder *r)
{
	const struct record_opts *o = &r->opts;
	bool all = true;

	if (o->cmd) {
		if (r->child > 0 && waitpid(r->child, &r->child_status, WNOHANG) == r->child) {
			r->child = 0;
			r->child_done = true;
		}
		return r->child == 0;
	}
	if (o->filter == WPROF_FILTER_ALL)
		return false;
	for (size_t i = 0; i < o->nr_ids; i++) {
		if (!r->gone[i]) {
			__u32 id = o->ids[i];
			int pid = o->filter == WPROF_FILTER_PID ? (int)id : tgid_of(id);

			r->gone[i] = pid < 0 || !task_alive(pid, id);
		}
		all &= r->gone[i];
	}
	return all;
}

/* --stats: what wprof's user space cost, and how it learnt of process ends. */
static void print_own_costs(const struct recorder *r)
{
	struct proclive_stats st;
	struct rusage ru;

	if (!getrusage(RUSAGE_SELF, &ru))
		pr_info("own CPU %.0f ms user, %.0f ms system",
			ru.ru_utime.tv_sec * 1e3 + ru.ru_utime.tv_usec / 1e3,
			ru.ru_stime.tv_sec * 1e3 + ru.ru_stime.tv_usec / 1e3);
	proclive__stats(r->live, &st);
	pr_info("process ends: %zu told by pidfds; %zu processes still watched, %zu with no "
		"pidfd at first (%zu given one later; %zu answers read from /proc)", st.ended,
		st.watched, st.unwatched, st.late, st.asked);
}

/*
 * After a drain: the threads that ended become their lines now, and what
 * only they named (their stacks, their process's maps in the symbolizer) is
 * freed, so that memory follows what is alive, not what was seen. Lines
 * made now are those the end would have made (see profile__retire()).
 * By the default, only once RETIRE_BATCH threads are waiting: symbolizing
 * takes CPU from what is recorded (the first time, reading the ELF files:
 * ~100 ms here), which a recording whose threads seldom end should not pay
 * before its end; memory then stays within that many threads' worth.
 */
#define RETIRE_BATCH 512

/*
 * The rows of ended processes go (profile__compact()), and with them the
 * command lines kept for them, of those that are dead: a pid that lives
 * again is another process, snapshot anew. On failure everything stays.
 */
static void compact(struct recorder *r, const struct hmap *busy)
{
	struct hmap gone = {};
	size_t n = 0;
	void *old;

	if (profile__compact(&r->prof, &r->opts, busy, &gone) <= 0)
		goto out;
	for (size_t i = 0; i < r->nr_seen; i++) {
		struct rec_proc *p = &r->seen[i];

		if (hmap__get(&gone, p->pid, 0) && kill(p->pid, 0) && errno == ESRCH)
			free(p->cmdline);
		else
			r->seen[n++] = *p;
	}
	if (n == r->nr_seen)
		goto out;
	r->nr_seen = n;
	/* a pid the table misses is snapshot again: no harm if this fails */
	hmap__clear(&r->seen_ids);
	for (size_t i = 0; i < n; i++)
		if (hmap__put(&r->seen_ids, r->seen[i].pid, 0, (void *)(uintptr_t)(i + 1), &old))
			break;
out:
	hmap__clear(&gone);
}

static void retire(struct recorder *r)
{
	size_t min = r->opts.retire == RETIRE_ALWAYS ? 1 : RETIRE_BATCH;
	struct hmap busy = {};
	int ret;

	if (r->retire_failed || r->opts.retire == RETIRE_NEVER ||
	    (r->opts.retire == RETIRE_AUTO && opts__line_ids(&r->opts)))
		return;
	ret = profile__retire(&r->prof, r->session, r->sym, &r->opts, min, r->lines, &busy);
	if (ret < 0) {
		pr_err("cannot add up the stacks of ended threads while recording: %s; "
		       "their time may be missing", strerror(-ret));
		r->retire_failed = true;
	} else if (ret > 0) {
		symbolizer__forget(r->sym, &busy);
		compact(r, &busy);
	}
	hmap__clear(&busy);
}

/*
 * A new target process: capture its mappings before it can exit. A forked
 * one runs its parent's code until it execs: its parent's maps, if read
 * before the fork, name what it did before (if it is gone already, all it
 * did).
 */
static int on_new_process(const struct wprof_event *e, void *ctx)
{
	struct recorder *r = ctx;

	snapshot(r, e->pid, false);
	if (e->kind == WPROF_EV_FORK && e->ppid)
		symbolizer__inherit(r->sym, e->pid, e->start_ticks, e->ppid,
				    e->parent_start_ticks, e->fork_ns);
	return 0;
}

/*
 * Maps read as a process's stacks were held (heldring.h), perhaps since
 * replaced or gone with the process: kept as a snapshot's are when newer
 * than the ones the unwinder has, and its copies walked with them at once.
 * The symbolizer gets them too (it names those stacks' frames). The
 * command line and the watch of code changes are a snapshot's own.
 */
static void on_held_maps(void *ctx, __u32 pid, __u64 start, struct proc_maps *maps)
{
	struct recorder *r = ctx;

	if (r->unw && maps->nr && maps->read_ns > unwtab__read_ns(r->unw, pid)) {
		/* copies taken with the maps about to be replaced: walked with those */
		held__walk(session__held(r->session), r->unw, pid, now_ns(), false);
		keep_maps(r, pid, start, maps);
	}
	procmaps__free(maps);
}

/*
 * Processes whose maps wait for room in the kernel's unwind rows to be given
 * back (unwtab.c): the drain comes soon, since it both learns of the ended
 * processes whose code's room can go and is the grace point after which
 * room given back can be used; after it (@drained) they are read again.
 */
static void retry_room(struct recorder *r, __u64 *next_drain, bool drained)
{
	__u32 pids[64];
	size_t n = unwtab__waiting(r->unw, pids, ARRAY_SIZE(pids));

	if (n && *next_drain > now_ns() + DRAIN_SOON_NS)
		*next_drain = now_ns() + DRAIN_SOON_NS;
	for (size_t i = 0; drained && i < n; i++)
		snapshot(r, pids[i], false);
}

/*
 * A recording keeps at most MAX_SLICES slices of its window (--slice): past
 * them its slices become twice as long, neighbours merged, so that what it
 * keeps by slice stops growing with its length (docs/memory.md). Checked at
 * each drain: the window may have a second more.
 */
#define MAX_SLICES 512
#define FEW_SLICES 128 /* WPROF_SLICES=few */

static int coarsen(struct recorder *r)
{
	__u64 len = session__slice_ns(r->session), start = session__window_start_ns(r->session);
	int err;

	if (!len || now_ns() < start + (r->opts.few_slices ? FEW_SLICES : MAX_SLICES) * len)
		return 0;
	err = session__coarsen(r->session);
	if (!err)
		err = threadtimes__coarsen(&r->prof.times);
	if (!err && r->lines)
		err = folded__coarsen(r->lines);
	return err;
}

/* Add @pid's cgroup if it has a CPU limit, its cpu.stat read now. */
static void find_limit(struct recorder *r, __u32 pid)
{
	struct cg_limit *a = realloc(r->cg, (r->nr_cg + 1) * sizeof(*a));

	if (!a)
		return; /* not said: the summary is only the poorer */
	r->cg = a;
	if (cgcpu__find(pid, &r->cg[r->nr_cg]) == 1)
		r->nr_cg++;
}

/*
 * The processes named (-p, -- CMD) whose cgroup has a CPU limit, as the
 * window opens: the cgroup's own count of throttling, beside the stacks.
 */
static void find_limits(struct recorder *r)
{
	if (r->opts.cmd && r->child > 0)
		find_limit(r, r->child);
	else if (r->opts.filter == WPROF_FILTER_PID)
		for (size_t i = 0; i < r->opts.nr_ids && i < CGCPU_MAX; i++)
			find_limit(r, r->opts.ids[i]);
}

static const char *record_loop(struct recorder *r)
{
	const struct record_opts *o = &r->opts;
	__u64 deadline = o->duration_ns ? now_ns() + o->duration_ns : 0;
	struct pollfd pfd[3] = {
		{ .fd = r->sigfd, .events = POLLIN },
		{ .fd = session__event_fd(r->session), .events = POLLIN },
		{ .fd = session__held_fd(r->session), .events = POLLIN },
	};

	__u64 next_drain = now_ns() + DRAIN_EVERY_NS, next_scan = 0, scan_ticks = SCAN_EVERY_TICKS;
	__u64 events_lost = 0, lost;
	bool drain_failed = false;

	for (;;) {
		struct signalfd_siginfo si;
		int timeout = TICK_MS;
		__u64 now = now_ns();

		if (deadline) {
			if (now >= deadline)
				return "duration reached";
			if (deadline - now < TICK_MS * NSEC_PER_MSEC)
				timeout = (deadline - now + NSEC_PER_MSEC - 1) / NSEC_PER_MSEC;
		}
		if (poll(pfd, 3, timeout) > 0 && (pfd[0].revents & POLLIN) &&
		    read(r->sigfd, &si, sizeof(si)) == sizeof(si)) {
			if (si.ssi_signo == SIGINT)
				return "interrupted";
			if (si.ssi_signo == SIGTERM)
				return "terminated";
		}
		session__consume_events(r->session);
		if (targets_gone(r))
			return "every target exited";
		/* cheap when nothing changed: catches dlopen() and a fresh exec */
		snapshot_targets(r, true);
		/* stacks held for the maps just read: walked before a drain may name them */
		held__walk(session__held(r->session), r->unw, 0, now_ns(), false);
		if (o->filter == WPROF_FILTER_ALL && now_ns() >= next_scan) {
			if (snapshot_new_processes(r))
				scan_ticks = SCAN_EVERY_TICKS;
			else if (scan_ticks < SCAN_MAX_TICKS)
				scan_ticks *= 2;
			next_scan = now_ns() + scan_ticks * TICK_MS * NSEC_PER_MSEC;
		}
		if (now_ns() >= next_drain) {
			int pct = session__drain(r->session, false);

			if (pct < 0 && !drain_failed) /* the maps keep it: losses, if any, are counted */
				pr_err("cannot drain the BPF maps while recording: %s",
				       strerror(-pct));
			drain_failed |= pct < 0;
			next_drain = now_ns() + (pct >= DRAIN_SOON_PCT ? DRAIN_SOON_NS : DRAIN_EVERY_NS);
			/*
			 * Events lost: the scan finds the processes whose fork
			 * went unheard now (not an exec of a process seen
			 * before: the unwinder asks for its maps as it meets
			 * its code). A counter that cannot be read is 0.
			 */
			lost = o->filter == WPROF_FILTER_ALL ?
				       session__stat(r->session, WPROF_STAT_EVENTS_LOST) : 0;
			if (lost > events_lost) {
				events_lost = lost;
				scan_ticks = SCAN_EVERY_TICKS;
				next_scan = 0;
			}
			proclive__collect(r->live);
			if (r->unw) {
				walk_held_before_gone(r, 0);
				unwtab__prune(r->unw, r->live);
				pyproc__prune(r->py, r->live);
				/* the drain's switch of maps waited for every program running */
				if (pct >= 0)
					unwtab__grace(r->unw);
			}
			symbolizer__prune(r->sym, r->live);
			if (pct >= 0)
				retire(r);
			if (pct >= 0 && (r->timeline_err = coarsen(r))) {
				pr_err("cannot make the timeline's slices longer: %s",
				       strerror(-r->timeline_err));
				return "a failure";
			}
			if (r->unw)
				retry_room(r, &next_drain, pct >= 0);
		} else if (r->unw) {
			retry_room(r, &next_drain, false);
		}
	}
}

/* Whether the machine has had steal time at all (/proc/stat's steal column), since boot. */
static bool machine_has_steal(void)
{
	unsigned long long v[8] = {};
	char buf[512];

	if (read_small_file("/proc/stat", buf, sizeof(buf)) <= 0)
		return false;
	return sscanf(buf, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2],
		      &v[3], &v[4], &v[5], &v[6], &v[7]) == 8 && v[7] > 0;
}

/*
 * On a VM whose kernel cannot tell each run's steal, on-CPU time includes
 * it: said once, at the start (the machine has had steal, so it matters).
 */
static void note_no_steal(const struct recorder *r)
{
	if (r->opts.no_steal || session__steal_time(r->session) || !machine_has_steal())
		return;
	pr_info("this kernel does not tell each thread's steal (the time the hypervisor ran "
		"something else on its CPU: it needs CONFIG_PARAVIRT_TIME_ACCOUNTING and "
		"CONFIG_FAIR_GROUP_SCHED); on-CPU time includes it");
}

/*
 * -F above kernel.perf_event_max_sample_rate would be throttled to it, a
 * rate the run did not ask for: refused, as a usage error. Where the limit
 * cannot be read, the kernel's own 10 us floor (the CLI's 100 kHz) is all.
 */
static int check_freq(const struct record_opts *o)
{
	__u64 max_hz;

	if (samplerate__kernel_max(NULL, &max_hz) || o->freq_hz <= max_hz)
		return 0;
	pr_err("-F %llu is above the kernel's limit of %llu samples a second "
	       "(kernel.perf_event_max_sample_rate); use -F %llu or lower",
	       (unsigned long long)o->freq_hz, (unsigned long long)max_hz,
	       (unsigned long long)max_hz);
	return -EINVAL;
}

/*
 * The samples that came against what -F asked for the targets' exact
 * on-CPU time (see samplerate.h): the kernel's count of target samples,
 * the one the summary prints (map losses do not lower it), over the
 * on-CPU time of every thread timed.
 */
static void check_sample_rate(const struct recording *rec, const struct record_opts *o)
{
	const struct profile *p = &rec->prof;
	__u64 on_ns = 0, got_hz;

	for (size_t i = 0; i < p->nr_threads; i++)
		on_ns += p->threads[i].on_ns;
	on_ns += p->dropped_on_ns;
	if (!samplerate__short(rec->stats[WPROF_STAT_SAMPLES], on_ns, o->freq_hz, &got_hz))
		return;
	pr_info("warning: -F %llu gave only %llu samples a second of on-CPU time (%llu%%): the "
		"timer cannot fire that often on this machine; use -F %llu or lower",
		(unsigned long long)o->freq_hz, (unsigned long long)got_hz,
		(unsigned long long)(got_hz * 100 / o->freq_hz),
		(unsigned long long)samplerate__suggest(got_hz));
}

/* "wprof record -d 3 -- ls": for people, not to be run again (no quoting). */
static char *join_args(int argc, char **argv)
{
	size_t len = strlen("wprof") + 1;
	char *s;

	for (int i = 0; i < argc; i++)
		len += strlen(argv[i]) + 1;
	s = malloc(len);
	if (!s)
		return NULL;
	strcpy(s, "wprof");
	for (int i = 0; i < argc; i++) {
		strcat(s, " ");
		strcat(s, argv[i]);
	}
	return s;
}

/*
 * The notes the summary ends with, as text: the debug hints (they need the
 * symbolizer and dpkg), the CPython processes not read.
 */
static int capture_hints(struct recording *r, const struct symbolizer *sym,
			 const struct pyproc *py)
{
	size_t len = 0;
	FILE *f = open_memstream(&r->notes, &len);

	if (!f)
		return -errno;
	debughint__print(sym, f);
	pyproc__print_notes(py, f);
	if (fclose(f))
		return -ENOMEM;
	if (!len) {
		free(r->notes);
		r->notes = NULL;
	}
	return 0;
}

static int cmp_block_start(const void *a, const void *b)
{
	const struct rec_block *x = a, *y = b;

	if (x->offset_ns != y->offset_ns)
		return x->offset_ns < y->offset_ns ? -1 : 1;
	return x->tid < y->tid ? -1 : x->tid > y->tid;
}

/* The long blocks the session kept, named (profile_names.c), into @r by start. 0 or -ENOMEM. */
static int capture_blocks(struct recording *r, struct session *s)
{
	struct longblocks *lbs = session__long_blocks(s);
	__u64 start = session__window_start_ns(s);
	size_t n = longblocks__nr(lbs);

	r->blocks = calloc(n + 1, sizeof(*r->blocks));
	if (!r->blocks)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		struct long_block *lb = longblocks__at(lbs, i);
		struct rec_block *rb = &r->blocks[r->nr_blocks];

		if (!lb->stack) { /* never named (cannot happen): counted, not shown */
			r->stats[WPROF_STAT_LONG_DROPPED]++;
			continue;
		}
		rb->pid = lb->b.pid;
		rb->tid = lb->b.tid;
		memcpy(rb->comm, lb->comm, sizeof(rb->comm));
		rb->comm[sizeof(rb->comm) - 1] = '\0';
		rb->state = lb->b.state;
		rb->open = lb->open;
		rb->offset_ns = lb->b.start > start ? lb->b.start - start : 0;
		rb->start_ns = r->info.start_ns + rb->offset_ns;
		rb->blocked_ns = lb->b.ns[0];
		rb->runq_ns = lb->b.ns[1];
		rb->stack = lb->stack;
		rb->waker = lb->waker;
		lb->stack = lb->waker = NULL;
		r->nr_blocks++;
	}
	if (r->nr_blocks)
		qsort(r->blocks, r->nr_blocks, sizeof(*r->blocks), cmp_block_start);
	return 0;
}

/*
 * Take what the detached session @s and @sym hold, with the profile @p
 * built from them and its lines @lines (both owned by @r from then on, also
 * on failure), into @r: the last use of the live data. 0 or -ENOMEM.
 */
static int capture(struct recording *r, struct profile *p, struct folded *lines,
		   struct session *s, const struct symbolizer *sym, const struct record_opts *o,
		   int argc, char **argv)
{
	memset(r, 0, sizeof(*r));
	r->prof = *p;
	memset(p, 0, sizeof(*p));
	r->lines = lines;
	rec_info__fill(&r->info, o, &r->prof, session__window_start_ns(s));
	r->tag_leaf = o->tag_leaf;
	r->ids = opts__line_ids(o);
	r->no_states = o->no_states;
	r->wakers = o->wakers;
	r->inlines = o->inlines;
	session__stats(s, r->stats);
	session__drain_stats(s, &r->drain);
	symbolizer__stats(sym, &r->sym);
	r->cmdline = join_args(argc, argv);
	if (!r->cmdline)
		return -ENOMEM;
	r->long_block_ns = o->long_block_ns;
	r->slice_ns = session__slice_ns(s);
	if (capture_blocks(r, s))
		return -ENOMEM;
	return capture_hints(r, sym, session__python(s));
}

struct ran_capture {
	struct ran_entry *e;
	size_t nr, cap;
};

static int take_ran(const struct wprof_ran_key *k, const struct wprof_ran_val *v, void *ctx)
{
	struct ran_capture *c = ctx;
	struct ran_entry *e;

	if (c->nr == c->cap) {
		size_t cap = c->cap ? 2 * c->cap : 256;

		e = realloc(c->e, cap * sizeof(*e));
		if (!e)
			return -ENOMEM;
		c->e = e;
		c->cap = cap;
	}
	e = &c->e[c->nr++];
	*e = (struct ran_entry){ .pid = k->pid, .tid = k->tid, .start_id = k->start_id,
				 .runner_pid = k->runner_pid, .runner_tid = k->runner_tid,
				 .ns = v->ns };
	memcpy(e->comm, v->comm, sizeof(e->comm) - 1);
	return 0;
}

/* Who ran instead while each thread waited for a CPU, into @rec. 0 or -errno. */
static int capture_ran(struct recording *rec, struct session *s)
{
	struct ran_capture c = {};
	int err;

	if (!session__ran_instead(s))
		return 0;
	err = session__for_each_ran(s, take_ran, &c);
	if (err) {
		free(c.e);
		return err;
	}
	rec->ran = c.e;
	rec->nr_ran = raninst__sort(c.e, c.nr);
	rec->ran_recorded = true;
	return 0;
}

/* The command lines of the processes the recording has threads of, into @rec. */
static int capture_cmdlines(struct recorder *r, struct recording *rec)
{
	struct hmap has_threads = {};
	int err = 0;

	rec->procs = calloc(r->nr_seen + 1, sizeof(*rec->procs));
	if (!rec->procs)
		return -ENOMEM;
	for (size_t t = 0; t < rec->prof.nr_threads && !err; t++) {
		void *old;

		err = hmap__put(&has_threads, rec->prof.threads[t].pid, 0, (void *)1, &old);
	}
	for (size_t i = 0; i < r->nr_seen && !err; i++) {
		struct rec_proc *p = &r->seen[i];

		if (!p->cmdline || !hmap__get(&has_threads, p->pid, 0))
			continue;
		rec->procs[rec->nr_procs++] = *p;
		p->cmdline = NULL;
	}
	hmap__clear(&has_threads);
	return err;
}

/*
 * Stop, and copy what was measured into a struct recording (the last use of
 * the BPF session's and the symbolizer's data), which every output is
 * written from.
 */
static int finish(struct recorder *r, const char *why)
{
	struct recording rec = {};
	struct folded *f = r->lines;
	int err;

	/* as the window closes: its cgroups' count of throttling */
	for (size_t i = 0; i < r->nr_cg; i++)
		r->cg[i].read_end = !cgcpu__read(&r->cg[i], &r->cg[i].end);
	session__stop(r->session);
	/* the last held stacks, walked or given up before any is named */
	session__consume_events(r->session);
	held__walk(session__held(r->session), r->unw, 0, now_ns(), true);
	err = profile__build(&r->prof, r->session, r->sym, &r->opts, f);
	if (r->unw)
		unwtab__stats(r->unw, &r->prof.unw);
	if (err) {
		pr_err("cannot read the recorded data: %s", strerror(-err));
		return err;
	}
	if (session__slice_ns(r->session) != r->opts.slice_ns)
		pr_info("time slices of %.3f s, not %.3f s: past %d slices they double",
			session__slice_ns(r->session) / 1e9, r->opts.slice_ns / 1e9,
			r->opts.few_slices ? FEW_SLICES : MAX_SLICES);
	r->lines = NULL; /* capture() owns them from here, also on failure */
	err = capture(&rec, &r->prof, f, r->session, r->sym, &r->opts, r->argc, r->argv);
	rec.cgroups = r->cg;
	rec.nr_cgroups = r->nr_cg;
	r->cg = NULL;
	r->nr_cg = 0;
	if (!err)
		err = capture_cmdlines(r, &rec);
	if (!err)
		err = capture_ran(&rec, r->session);
	if (err) {
		pr_err("cannot keep the recorded data: %s", strerror(-err));
		goto out;
	}
	err = outputs__write(&r->outs, &rec, r->opts.group);
	/* what was measured is on stderr even when the output could not be written */
	pr_info("stopped: %s; %zu stacks %s", why, folded__nr(rec.lines),
		err ? "not written" : "written");
	report__summary(&rec, stderr, r->opts.bpf_stats);
	check_sample_rate(&rec, &r->opts);
	if (r->opts.bpf_stats) {
		session__print_prog_stats(r->session, stderr);
		report__switch_kinds(&rec, stderr);
		print_own_costs(r);
	}
out:
	recording__free(&rec);
	return err;
}

/*
 * Raise the soft RLIMIT_NOFILE to the hard one (at most NOFILE_MAX) and
 * return how many pidfds to watch processes with (proclive.h): a quarter of
 * it. Beside thousands of processes, a quarter of the usual 1024 would leave
 * most of them to /proc. The symbolizer's files take another quarter (more
 * ELF files kept open, fewer read twice). CMD gets the limit wprof started
 * with (spawn_child()).
 */
#define NOFILE_MAX 65536

static size_t raise_nofile(struct recorder *r)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &r->nofile))
		return 0;
	rl = r->nofile;
	if (rl.rlim_cur < NOFILE_MAX && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max < NOFILE_MAX ? rl.rlim_max : NOFILE_MAX;
		r->nofile_raised = !setrlimit(RLIMIT_NOFILE, &rl);
		if (!r->nofile_raised)
			rl = r->nofile;
	}
	return rl.rlim_cur == RLIM_INFINITY ? NOFILE_MAX / 4 : rl.rlim_cur / 4;
}

int cmd_record(int argc, char **argv)
{
	struct recorder r = { .sigfd = -1, .go_fd = -1, .exec_err_fd = -1, .argc = argc,
			      .argv = argv };
	sigset_t mask, oldmask;
	size_t max_pidfds;
	char timing[256];
	const char *why;
	int err, code = 0;

	err = cli_parse_record(argc, argv, &r.opts);
	if (!err)
		err = check_freq(&r.opts);
	if (err) {
		cli_free_record(&r.opts); /* the ids parsed before the mistake */
		return err > 0 ? 0 : 2;
	}
	err = check_targets(&r.opts);
	if (!err)
		err = outputs__open(&r.outs, r.opts.outputs, r.opts.nr_outputs);
	if (err)
		goto out;
	r.gone = calloc(r.opts.nr_ids + 1, sizeof(*r.gone));
	max_pidfds = raise_nofile(&r);
	r.live = proclive__new(r.opts.proc_ends_proc ? 0 : max_pidfds);
	/* with the unwinder's tables (r.unw below), code it meets unmapped is asked for at once */
	r.code = codewatch__new(r.opts.user_stacks && !r.opts.no_cfi);
	r.sym = symbolizer__new();
	r.lines = folded__new();
	profile__init(&r.prof, &r.opts);
	if (!r.gone || !r.live || !r.code || !r.sym || !r.lines) {
		err = -ENOMEM;
		pr_err("out of memory");
		goto out;
	}
	/* signals arrive through a descriptor, so the loop never races them */
	sigemptyset(&mask);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGTERM);
	sigprocmask(SIG_BLOCK, &mask, &oldmask);
	signal(SIGPIPE, SIG_IGN);
	r.sigfd = signalfd(-1, &mask, SFD_CLOEXEC);
	if (r.sigfd < 0) {
		err = -errno;
		pr_err("cannot create a signalfd: %s", strerror(-err));
		goto out;
	}
	/* the unwind rows of what the targets map now size the kernel's table */
	if (r.opts.user_stacks && !r.opts.no_cfi) {
		r.unw = unwtab__new();
		r.py = r.opts.no_python ? NULL : pyproc__new();
		if (!r.unw || (!r.opts.no_python && !r.py)) {
			err = -ENOMEM;
			pr_err("out of memory");
			goto out;
		}
		snapshot_targets(&r, true);
		if (r.opts.filter == WPROF_FILTER_ALL)
			snapshot_new_processes(&r);
	}
	err = session__open(&r.opts, r.unw ? unwtab__nr_rows(r.unw) : 0, &r.session);
	if (err)
		goto out;
	if (r.unw) {
		struct wprof_unwind_row *rows;
		__u32 max_rows;
		int procs_fd;

		err = session__unwind_maps(r.session, &rows, &max_rows, &procs_fd);
		if (!err)
			err = unwtab__bind(r.unw, rows, max_rows, procs_fd);
		if (err) {
			pr_err("cannot load the unwind tables: %s", strerror(-err));
			goto out;
		}
		err = r.py ? session__set_python(r.session, r.py) : 0;
		if (err) {
			pr_err("cannot tell the BPF side of the Python processes: %s",
			       strerror(-err));
			goto out;
		}
	}
	err = session__set_event_fn(r.session, on_new_process, on_held_maps, &r);
	if (err) {
		pr_err("cannot set up the BPF ring buffer: %s", strerror(-err));
		goto out;
	}
	if (r.opts.cmd) {
		err = spawn_child(&r, &oldmask);
		if (!err) {
			session__gate_until_exec(r.session, r.child);
			err = session__add_target(r.session, r.child);
		}
	}
	for (size_t i = 0; !err && i < r.opts.nr_ids; i++)
		err = session__add_target(r.session, r.opts.ids[i]);
	if (err) {
		if (err != -ENOMEM && r.opts.cmd && r.child > 0)
			pr_err("cannot add a target: %s", strerror(-err));
		goto out;
	}
	snapshot_targets(&r, true);
	if (r.opts.filter == WPROF_FILTER_ALL)
		snapshot_new_processes(&r);
	err = session__start(r.session);
	if (err)
		goto out;
	if (session__switch_timing(r.session, timing, sizeof(timing)))
		pr_info("%s", timing);
	pr_info("recording with %s sched events%s and %llu Hz cpu-clock samples; Ctrl-C stops",
		session__attach_kind(r.session),
		session__runq_wakeup(r.session) ? " (run-queue waits timed from wakeups)" : "",
		(unsigned long long)r.opts.freq_hz);
	note_no_steal(&r);
	if (r.opts.cmd) {
		err = release_child(&r);
		if (err)
			goto out;
	}
	find_limits(&r);
	why = record_loop(&r);
	err = r.timeline_err;
	if (err)
		goto out;
	snapshot_targets(&r, false); /* what the last ticks' checks may have waited to see */
	err = finish(&r, why);
	code = child_exit(&r);
out:
	if (r.go_fd >= 0)
		close(r.go_fd); /* a child still waiting exits without running CMD */
	if (r.child > 0) {
		kill(r.child, SIGTERM);
		waitpid(r.child, NULL, 0);
	}
	outputs__abort(&r.outs); /* a run that failed leaves the old files */
	profile__free(&r.prof);
	folded__free(r.lines);
	session__free(r.session);
	pyproc__free(r.py);
	symbolizer__free(r.sym);
	unwtab__free(r.unw);
	proclive__free(r.live);
	if (r.sigfd >= 0)
		close(r.sigfd);
	free(r.gone);
	for (size_t i = 0; i < r.nr_seen; i++)
		free(r.seen[i].cmdline);
	free(r.seen);
	hmap__clear(&r.seen_ids);
	codewatch__free(r.code);
	free(r.cg);
	cli_free_record(&r.opts);
	return err ? 1 : code;
}
