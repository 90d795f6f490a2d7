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
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <bpf/libbpf.h>

#include "heldring.h"
#include "procmaps.h"
#include "wprof.h"

/*
 * Waiting for the main thread at most: copies (64 KiB each; the main
 * thread takes them within a tick, or once a table is built) and maps read
 */
#define RING_MAX_RECS 512
#define RING_MAX_MAPS 256
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
	__u64 got_vm, exec_vm, got_stack;
};

struct heldring {
	struct ring_buffer *rb;
	pthread_t thread;
	bool started;
	atomic_bool reading; /* the thread reads the ring; else the taker does */
	int stop_fd;         /* eventfd: written to stop the thread */
	pthread_mutex_t lock; /* of what follows, up to memo */
	struct rec_copy recs[RING_MAX_RECS];
	size_t nr_recs;
	struct read_maps maps[RING_MAX_MAPS];
	size_t nr_maps;
	__u64 dropped;
	struct memo memo[RING_MEMO]; /* the reader's own */
};

static bool memo_has(const struct memo *m, const struct wprof_held *h)
{
	if (m->pid != h->pid || m->start_ticks != h->start_ticks)
		return false;
	return (m->got_stack == h->start_stack &&
		(m->got_vm == h->exec_vm || m->exec_vm == h->exec_vm)) ||
	       (m->asked_vm == h->exec_vm && m->asked_stack == h->start_stack);
}

static void keep(struct heldring *r, __u32 pid, __u64 start_ticks, struct proc_maps *maps)
{
	pthread_mutex_lock(&r->lock);
	if (r->nr_maps < RING_MAX_MAPS) {
		r->maps[r->nr_maps++] = (struct read_maps){ pid, start_ticks, *maps };
		maps->nr = 0;
		maps->maps = NULL;
	}
	pthread_mutex_unlock(&r->lock);
	procmaps__free(maps); /* not kept: its copies wait for the main thread's reads */
}

/*
 * A copy taken while the loader was still mapping the program's libraries
 * has code no maps read later have: what the exec mapped (the program, its
 * interpreter, the vDSO), and no library yet. Where @h's code is just as
 * much as those mappings of @maps (the maps the loader's library mappings
 * only add to), they are the copy's maps: they go first, with a read time
 * just before @maps's, so that the main thread walks the copy with them,
 * then takes @maps.
 */
static void keep_exec_maps(struct heldring *r, const struct wprof_held *h,
			   const struct proc_maps *maps, __u64 interp_base, struct memo *m)
{
	struct proc_maps at_exec;

	if (procmaps__at_exec(maps, interp_base, &at_exec))
		return;
	m->exec_vm = procmaps__exec_pages(&at_exec);
	if (m->exec_vm != h->exec_vm) {
		procmaps__free(&at_exec);
		return;
	}
	at_exec.read_ns--;
	keep(r, h->pid, h->start_ticks, &at_exec);
}

/*
 * Read @h's process's maps, unless read already for a copy with the same
 * code (or read when a copy with @h's code asked, and found other code:
 * read again at the next change). A pid taken by another process since is
 * not read: the copy is not its.
 */
static void read_for(struct heldring *r, const struct wprof_held *h)
{
	struct memo *m = &r->memo[h->pid % RING_MEMO];
	struct proc_maps maps;
	__u64 start, interp_base;

	if (memo_has(m, h))
		return;
	*m = (struct memo){ .pid = h->pid, .start_ticks = h->start_ticks,
			    .asked_vm = h->exec_vm, .asked_stack = h->start_stack };
	/* before the maps: an exec between the two shows in the maps' start of stack */
	if (procmaps__interp_base(h->pid, &interp_base) ||
	    procmaps__read_proc(h->pid, &start, &maps))
		return;
	if (start != h->start_ticks || !maps.nr) {
		procmaps__free(&maps);
		return;
	}
	m->got_vm = procmaps__exec_pages(&maps);
	m->got_stack = maps.start_stack;
	if (m->got_vm != h->exec_vm && m->got_stack == h->start_stack)
		keep_exec_maps(r, h, &maps, interp_base, m);
	keep(r, h->pid, start, &maps);
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
	/* a check's copy is of a walk that had its maps */
	if (!h->check)
		read_for(r, h);
	return 0;
}

static void *reader(void *arg)
{
	struct heldring *r = arg;
	struct pollfd pfd[2] = {
		{ .fd = ring_buffer__epoll_fd(r->rb), .events = POLLIN },
		{ .fd = r->stop_fd, .events = POLLIN },
	};

	/*
	 * Ahead of the programs it reads: a short one exits within a few ms of
	 * its first copy (failing, it stays at the default: read later)
	 */
	setpriority(PRIO_PROCESS, syscall(SYS_gettid), READER_NICE);
	for (;;) {
		if (poll(pfd, 2, -1) < 0 && errno != EINTR)
			break;
		if (pfd[1].revents)
			break;
		if (ring_buffer__consume(r->rb) < 0)
			break;
	}
	/* the taker reads what is left */
	atomic_store(&r->reading, false);
	return NULL;
}

struct heldring *heldring__start(int map_fd, int *err)
{
	struct heldring *r = calloc(1, sizeof(*r));
	sigset_t all, old;

	*err = -ENOMEM;
	if (!r)
		return NULL;
	r->stop_fd = -1;
	pthread_mutex_init(&r->lock, NULL);
	r->rb = ring_buffer__new(map_fd, on_rec, r, NULL);
	if (!r->rb) {
		*err = -errno;
		goto fail;
	}
	r->stop_fd = eventfd(0, EFD_CLOEXEC);
	if (r->stop_fd < 0) {
		*err = -errno;
		goto fail;
	}
	atomic_store(&r->reading, true);
	/* signals are the main thread's (its signalfd) */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	*err = -pthread_create(&r->thread, NULL, reader, r);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (*err)
		goto fail;
	r->started = true;
	return r;
fail:
	heldring__free(r);
	return NULL;
}

void heldring__stop(struct heldring *r)
{
	__u64 one = 1;

	if (!r || !r->started)
		return;
	if (write(r->stop_fd, &one, sizeof(one)) != sizeof(one))
		pthread_cancel(r->thread); /* cannot happen with an eventfd; never left running */
	pthread_join(r->thread, NULL);
	r->started = false;
	atomic_store(&r->reading, false);
}

void heldring__take(struct heldring *r, heldring_rec_fn rec_fn, heldring_maps_fn maps_fn,
		    void *ctx)
{
	struct rec_copy recs[RING_MAX_RECS];
	struct read_maps maps[RING_MAX_MAPS];
	size_t nr_recs, nr_maps;

	if (!r)
		return;
	if (!atomic_load(&r->reading))
		ring_buffer__consume(r->rb);
	pthread_mutex_lock(&r->lock);
	nr_recs = r->nr_recs;
	nr_maps = r->nr_maps;
	memcpy(recs, r->recs, nr_recs * sizeof(recs[0]));
	memcpy(maps, r->maps, nr_maps * sizeof(maps[0]));
	r->nr_recs = r->nr_maps = 0;
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
	pthread_mutex_destroy(&r->lock);
	free(r);
}
