/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The session's state (session.h), shared by the files that make it up:
 * session.c (load, attach, events, detach), drain.c (the maps' drains,
 * retiring ended threads, stack lookups), bpfstats.c (--stats) and
 * session_ran.c (who ran instead). No other module includes this.
 */
#ifndef WPROF_SESSION_PRIV_H
#define WPROF_SESSION_PRIV_H

#include <stdbool.h>
#include <bpf/libbpf.h>

#include "session.h"
#include "wprof.h"

struct heldring;
struct held;
struct in_use;
struct store;
struct wprof_bpf;

struct ended;
struct longblocks;

struct session {
	const struct record_opts *opts;
	struct wprof_bpf *skel;
	bool raw_tp;
	bool runq_wakeup; /* run-queue waits are timed from wakeup events (WPROF_RUNQ) */
	bool snapshot; /* the start-edge task iterator loaded */
	bool want_entry; /* switches are to be timed at __schedule() entry ... */
	bool entry_stamp; /* ... and are: sched_entry_tp is there and its program loaded */
	bool steal_time; /* each run's steal is read (bpf/thread.bpf.h: steal_add()) */
	char entry_why[160]; /* why they are, for the start line */
	struct bpf_link **links; /* perf event links, one per online CPU */
	int *pfds;
	int nr_links;
	int stats_fd; /* held while BPF run-time stats are on */
	struct ring_buffer *events;
	struct ring_buffer *blocks_rb;  /* the long blocks' ring ... */
	struct longblocks *blocks;      /* ... and what it sent, the longest kept */
	int blocks_err;                 /* the first failure to keep one (-ENOMEM) */
	__u32 max_rows;                 /* unwind rows the kernel can hold */
	struct wprof_unwind_row *rows;  /* ... mmap()ed */
	size_t rows_len;
	session_event_fn event_fn;
	void *event_ctx;
	__u64 start_ns, end_ns;
	__u64 load_ns; /* spent loading the programs (the kernel's verifier), every try */
	bool running;
	struct store *store; /* what was drained from the maps */
	struct held *held;   /* stacks held for their process's maps (held.h) */
	struct pyproc *py;   /* the CPython processes, their code objects' names (not owned) */
	struct heldring *heldring; /* their ring's reader, NULL when none are held */
	session_maps_fn maps_fn;
	/* counts_a, wakes_a are out of use: the next drain puts them in */
	bool counts_spare_a, wakes_spare_a;
	struct session_drain_stats drains;
	bool drained_final;  /* everything is in the store: the maps are not read again */
	struct ended *ended; /* while draining */
	struct in_use *in_use; /* while retiring */
	int (*slot_fn)(struct session *s, const void *key, const void *val); /* take_slots() */
};

/*
 * Make @inner the map the programs add to, in slot 0 of @outer, once no
 * program still runs that may write the one before. 0 or -errno.
 */
int session_set_active(struct bpf_map *outer, struct bpf_map *inner);

#endif /* WPROF_SESSION_PRIV_H */
