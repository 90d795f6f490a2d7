/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The held stacks' ring buffer (held.h), read on a thread of its own, which
 * also reads the maps of the processes the copies come from, as they come.
 * The main thread may be building a large file's unwind tables meanwhile
 * (a compiler's: tens of ms), in which time a short program loads its
 * libraries, runs and exits: its copies, taken with those libraries mapped,
 * could otherwise never be walked, since no maps read while it lived had
 * them. The main thread takes the copies and those maps when it is free,
 * and walks the copies with them, also after the process is gone.
 */
#ifndef WPROF_HELDRING_H
#define WPROF_HELDRING_H

#include <stddef.h>
#include <linux/types.h>

struct heldring;
struct proc_maps;

/* A record as the ring had it (struct wprof_held), on the taker's thread. */
typedef void (*heldring_rec_fn)(void *ctx, const void *data, size_t size);
/*
 * Maps of process @pid, started at @start_ticks, read when a copy came
 * whose code they did not have yet: the callee frees them (procmaps__free()).
 */
typedef void (*heldring_maps_fn)(void *ctx, __u32 pid, __u64 start_ticks,
				 struct proc_maps *maps);

/* Start reading the ring of map @map_fd, into *@out. 0 or -errno. */
int heldring__start(int map_fd, struct heldring **out);
/* Readable when the reader has queued something for heldring__take(). */
int heldring__ready_fd(const struct heldring *r);
/*
 * Stop the thread (the ring's writers are detached): what is left in the
 * ring is read by heldring__take() from then on.
 */
void heldring__stop(struct heldring *r);
/*
 * Hand what came since the last take to @rec_fn (in the ring's order), then
 * the maps read meanwhile to @maps_fn. What the ring holds as it is called
 * is read first (waiting for the reader a few ms at most): copies taken
 * before the events the caller handles next are handed to it before them.
 */
void heldring__take(struct heldring *r, heldring_rec_fn rec_fn, heldring_maps_fn maps_fn,
		    void *ctx);
/*
 * Records not kept for want of room or memory: their stacks stay frame
 * pointers only (and are counted so when named).
 */
__u64 heldring__dropped(struct heldring *r);
void heldring__free(struct heldring *r); /* NULL ok; stops first */

#endif
