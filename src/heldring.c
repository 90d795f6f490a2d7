// SPDX-License-Identifier: GPL-2.0-only
/* The held stacks' ring, read on a thread of its own: see heldring.h. */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <bpf/libbpf.h>

#include "heldring.h"
#include "procmaps.h"
#include "util.h"
#include "wprof.h"

/*
 * Waiting for the main thread at most: copies (64 KiB each; the main
 * thread takes them within a tick, or once a table is built), and maps
 * read, by their mappings (some 100 bytes each)
 */
#define RING_MAX_RECS 512
#define RING_MAX_MAPS 256
#define RING_MAX_MAPPINGS (1U << 16)
/*
 * Reads of one process: a burst of this many (a program's loader mapping
 * its libraries changes its code a few times in a millisecond), then one
 * per RING_READ_EVERY_NS: a process that keeps changing its code does not
 * have the reader read its maps at every copy
 */
#define RING_READ_BURST 8
#define RING_READ_EVERY_NS 10000000ULL
/* How long heldring__take() waits for the reader to have read what the ring had */
#define RING_SYNC_WAIT_NS 5000000ULL
/* The reader's nice value */
#define READER_NICE -10
/* Processes whose last read is remembered: a burst of copies reads once */
#define RING_MEMO 256

struct rec_copy {
	void *data;
	size_t size;
};

struct read_maps {
	__u32 pid;
	__u64 start_ticks;
	struct proc_maps maps;
};

/*
 * A process's last read: what the copy that asked for it had, and what it
 * got (its code, and the code its exec mapped)
 */
struct memo {
	__u32 pid;
	__u64 start_ticks;
	__u64 asked_vm, asked_stack;
	__u64 got_vm, at_exec_vm, got_stack;
	__u64 tokens_ns; /* reads allowed: RING_READ_EVERY_NS each, at most a burst */
};

struct heldring {
	struct ring_buffer *rb;
	pthread_t thread;
	bool started;
	atomic_bool reading; /* the thread reads the ring; else the taker does */
	int stop_fd;         /* eventfd: written to stop the thread */
	int sync_fd;         /* eventfd: written by the taker to have the ring read now */
	int ready_fd;        /* eventfd: written by the reader when it queued something */
	pthread_mutex_t lock; /* of what follows, up to memo */
	pthread_cond_t synced;
	__u64 sync_asked, sync_done;
	struct rec_copy recs[RING_MAX_RECS];
	size_t nr_recs;
	struct read_maps maps[RING_MAX_MAPS];
	size_t nr_maps, nr_mappings;
	__u64 dropped;
	struct memo memo[RING_MEMO]; /* the reader's own */
};

static bool memo_has(const struct memo *m, const struct wprof_held *h)
{
	if (m->pid != h->pid || m->start_ticks != h->start_ticks)
		return false;
	return (m->got_stack == h->start_stack &&
		(m->got_vm == h->exec_vm || m->at_exec_vm == h->exec_vm)) ||
	       (m->asked_vm == h->exec_vm && m->asked_stack == h->start_stack);
}

static void notify(struct heldring *r)
{
	__u64 one = 1;

	/* a full counter is still readable: the main thread wakes either way */
	if (write(r->ready_fd, &one, sizeof(one)) < 0)
		return;
}

/*
 * Queue @maps (and @at_exec first, if it has any) for the main thread,
 * both or neither: the maps of the exec alone would stand as the process's
 * current ones. True when queued (they are then the queue's).
 */
static bool keep(struct heldring *r, __u32 pid, __u64 start_ticks, struct proc_maps *at_exec,
		 struct proc_maps *maps)
{
	size_t n = 1 + (at_exec->nr != 0), mappings = maps->nr + at_exec->nr;
	bool kept = false;

	pthread_mutex_lock(&r->lock);
	if (r->nr_maps + n <= RING_MAX_MAPS && r->nr_mappings + mappings <= RING_MAX_MAPPINGS) {
		if (at_exec->nr)
			r->maps[r->nr_maps++] = (struct read_maps){ pid, start_ticks, *at_exec };
		r->maps[r->nr_maps++] = (struct read_maps){ pid, start_ticks, *maps };
		r->nr_mappings += mappings;
		*at_exec = *maps = (struct proc_maps){};
		kept = true;
	}
	pthread_mutex_unlock(&r->lock);
	if (kept)
		notify(r);
	return kept;
}

/*
 * A copy taken while the loader was still mapping the program's libraries
 * has code no maps read later have: what the exec mapped (the program, its
 * interpreter, the vDSO), and no library yet. Where @h's code is just as
 * much as those mappings of @maps (the loader's library mappings only add
 * to them), they are the copy's maps: in *@out, with a read time just
 * before @maps's, so that the main thread walks the copy with them first.
 * Else *@out is empty.
 */
static void exec_maps(const struct wprof_held *h, const struct proc_maps *maps,
		      __u64 interp_base, struct proc_maps *out)
{
	if (procmaps__at_exec(maps, interp_base, out))
		return;
	if (procmaps__exec_pages(out) != h->exec_vm) {
		procmaps__free(out);
		return;
	}
	out->read_ns--;
}

/* Whether @m's process may be read now: RING_READ_BURST, then one per RING_READ_EVERY_NS. */
static bool may_read(struct memo *m, __u64 now)
{
	__u64 cap = RING_READ_BURST * RING_READ_EVERY_NS;

	if (!m->tokens_ns || now - m->tokens_ns > cap)
		m->tokens_ns = now - cap;
	if (now - m->tokens_ns < RING_READ_EVERY_NS)
		return false;
	m->tokens_ns += RING_READ_EVERY_NS;
	return true;
}

/*
 * Read @h's process's maps, unless read already for a copy with the same
 * code (or read when a copy with @h's code asked, and found other code:
 * read again at the next change). A pid taken by another process since is
 * not read: the copy is not its. What cannot be read or kept leaves its
 * copies waiting for the main thread's reads (given up, counted, if none
 * comes).
 */
static void read_for(struct heldring *r, const struct wprof_held *h)
{
	struct memo *m = &r->memo[h->pid % RING_MEMO];
	struct proc_maps maps, at_exec = {};
	__u64 start, interp_base = 0;
	bool has_exec;
	int err;

	if (memo_has(m, h))
		return;
	if (m->pid != h->pid || m->start_ticks != h->start_ticks)
		*m = (struct memo){ .pid = h->pid, .start_ticks = h->start_ticks };
	if (!may_read(m, now_ns()))
		return;
	/* before the maps: an exec between the two shows in the maps' start of stack */
	if (procmaps__interp_base(h->pid, &interp_base))
		interp_base = 0; /* no maps of the exec: the others still are */
	err = procmaps__read_proc(h->pid, &start, &maps);
	if (err)
		return; /* gone, or to try at the next copy */
	if (start != h->start_ticks || !maps.nr) {
		procmaps__free(&maps);
		return;
	}
	m->asked_vm = h->exec_vm;
	m->asked_stack = h->start_stack;
	m->got_vm = procmaps__exec_pages(&maps);
	m->got_stack = maps.start_stack;
	m->at_exec_vm = 0;
	if (m->got_vm != h->exec_vm && m->got_stack == h->start_stack)
		exec_maps(h, &maps, interp_base, &at_exec);
	has_exec = at_exec.nr != 0;
	if (keep(r, h->pid, start, &at_exec, &maps)) {
		m->at_exec_vm = has_exec ? h->exec_vm : 0;
	} else {
		m->asked_vm = m->got_vm = 0; /* dropped: read again */
		procmaps__free(&at_exec);
		procmaps__free(&maps);
	}
}

static int on_rec(void *ctx, void *data, size_t size)
{
	struct heldring *r = ctx;
	const struct wprof_held *h = data;
	void *copy;

	if (size < sizeof(*h))
		return 0;
	copy = malloc(size);
	if (copy)
		memcpy(copy, data, size);
	pthread_mutex_lock(&r->lock);
	if (copy && r->nr_recs < RING_MAX_RECS) {
		r->recs[r->nr_recs++] = (struct rec_copy){ copy, size };
		copy = NULL;
	} else if (!h->check) {
		r->dropped++;
	}
	pthread_mutex_unlock(&r->lock);
	if (copy) {
		free(copy);
		return 0;
	}
	notify(r);
	/* a check's copy is of a walk that had its maps */
	if (!h->check)
		read_for(r, h);
	return 0;
}

static void *reader(void *arg)
{
	struct heldring *r = arg;
	struct pollfd pfd[3] = {
		{ .fd = ring_buffer__epoll_fd(r->rb), .events = POLLIN },
		{ .fd = r->stop_fd, .events = POLLIN },
		{ .fd = r->sync_fd, .events = POLLIN },
	};
	__u64 n, asked;

	/*
	 * Ahead of the programs it reads: a short one exits within a few ms of
	 * its first copy (failing, it stays at the default: read later)
	 */
	setpriority(PRIO_PROCESS, syscall(SYS_gettid), READER_NICE);
	for (;;) {
		if (poll(pfd, 3, -1) < 0 && errno != EINTR)
			break;
		if (pfd[1].revents)
			break;
		/* what the taker asked for: what the ring has now, read */
		pthread_mutex_lock(&r->lock);
		asked = r->sync_asked;
		pthread_mutex_unlock(&r->lock);
		if (pfd[2].revents && read(r->sync_fd, &n, sizeof(n)) < 0 && errno != EAGAIN)
			break;
		if (ring_buffer__consume(r->rb) < 0)
			break;
		pthread_mutex_lock(&r->lock);
		r->sync_done = asked;
		pthread_cond_broadcast(&r->synced);
		pthread_mutex_unlock(&r->lock);
	}
	/* the taker reads what is left */
	pthread_mutex_lock(&r->lock);
	atomic_store(&r->reading, false);
	pthread_cond_broadcast(&r->synced);
	pthread_mutex_unlock(&r->lock);
	return NULL;
}

int heldring__start(int map_fd, struct heldring **out)
{
	struct heldring *r = calloc(1, sizeof(*r));
	pthread_condattr_t attr;
	sigset_t all, old;
	int err;

	*out = NULL;
	if (!r)
		return -ENOMEM;
	r->stop_fd = r->sync_fd = r->ready_fd = -1;
	pthread_mutex_init(&r->lock, NULL);
	pthread_condattr_init(&attr);
	pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
	pthread_cond_init(&r->synced, &attr);
	pthread_condattr_destroy(&attr);
	r->rb = ring_buffer__new(map_fd, on_rec, r, NULL);
	if (!r->rb) {
		err = -errno;
		goto fail;
	}
	r->stop_fd = eventfd(0, EFD_CLOEXEC);
	r->sync_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	r->ready_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (r->stop_fd < 0 || r->sync_fd < 0 || r->ready_fd < 0) {
		err = -errno;
		goto fail;
	}
	atomic_store(&r->reading, true);
	/* signals are the main thread's (its signalfd) */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	err = -pthread_create(&r->thread, NULL, reader, r);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (err)
		goto fail;
	r->started = true;
	*out = r;
	return 0;
fail:
	heldring__free(r);
	return err;
}

int heldring__ready_fd(const struct heldring *r)
{
	return r ? r->ready_fd : -1;
}

void heldring__stop(struct heldring *r)
{
	__u64 one = 1;

	if (!r || !r->started)
		return;
	/* an eventfd's write fails only on a full counter: never with one writer of 1 */
	while (write(r->stop_fd, &one, sizeof(one)) < 0 && errno == EINTR)
		;
	pthread_join(r->thread, NULL);
	r->started = false;
	atomic_store(&r->reading, false);
}

/*
 * Have the reader read what the ring holds now, and wait (a little) until it
 * has: copies taken before the events the caller is about to handle are
 * then in the queue, as they were when both rings were read by one thread.
 */
static void sync_reader(struct heldring *r)
{
	__u64 one = 1, want;
	struct timespec until;

	if (!atomic_load(&r->reading)) {
		ring_buffer__consume(r->rb);
		return;
	}
	clock_gettime(CLOCK_MONOTONIC, &until);
	until.tv_nsec += RING_SYNC_WAIT_NS;
	if (until.tv_nsec >= 1000000000L) {
		until.tv_sec++;
		until.tv_nsec -= 1000000000L;
	}
	pthread_mutex_lock(&r->lock);
	want = ++r->sync_asked;
	pthread_mutex_unlock(&r->lock);
	if (write(r->sync_fd, &one, sizeof(one)) < 0)
		return; /* not read now: at the next take */
	pthread_mutex_lock(&r->lock);
	while (r->sync_done < want && atomic_load(&r->reading))
		if (pthread_cond_timedwait(&r->synced, &r->lock, &until))
			break;
	pthread_mutex_unlock(&r->lock);
}

void heldring__take(struct heldring *r, heldring_rec_fn rec_fn, heldring_maps_fn maps_fn,
		    void *ctx)
{
	struct rec_copy recs[RING_MAX_RECS];
	struct read_maps maps[RING_MAX_MAPS];
	size_t nr_recs, nr_maps;
	__u64 n;

	if (!r)
		return;
	sync_reader(r);
	if (read(r->ready_fd, &n, sizeof(n)) < 0 && errno != EAGAIN)
		n = 0; /* nothing to clear */
	pthread_mutex_lock(&r->lock);
	nr_recs = r->nr_recs;
	nr_maps = r->nr_maps;
	memcpy(recs, r->recs, nr_recs * sizeof(recs[0]));
	memcpy(maps, r->maps, nr_maps * sizeof(maps[0]));
	r->nr_recs = r->nr_maps = r->nr_mappings = 0;
	pthread_mutex_unlock(&r->lock);
	for (size_t i = 0; i < nr_recs; i++) {
		rec_fn(ctx, recs[i].data, recs[i].size);
		free(recs[i].data);
	}
	for (size_t i = 0; i < nr_maps; i++)
		maps_fn(ctx, maps[i].pid, maps[i].start_ticks, &maps[i].maps);
}

__u64 heldring__dropped(struct heldring *r)
{
	__u64 n;

	if (!r)
		return 0;
	pthread_mutex_lock(&r->lock);
	n = r->dropped;
	pthread_mutex_unlock(&r->lock);
	return n;
}

void heldring__free(struct heldring *r)
{
	if (!r)
		return;
	heldring__stop(r);
	for (size_t i = 0; i < r->nr_recs; i++)
		free(r->recs[i].data);
	for (size_t i = 0; i < r->nr_maps; i++)
		procmaps__free(&r->maps[i].maps);
	ring_buffer__free(r->rb);
	if (r->stop_fd >= 0)
		close(r->stop_fd);
	if (r->sync_fd >= 0)
		close(r->sync_fd);
	if (r->ready_fd >= 0)
		close(r->ready_fd);
	pthread_cond_destroy(&r->synced);
	pthread_mutex_destroy(&r->lock);
	free(r);
}
