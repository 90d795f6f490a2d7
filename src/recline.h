/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * One line of a recording as profile__build() joins it, taken apart again
 * by the writers that need its parts (svg, pprof, diff):
 *
 *	TAG;[PID;TID;]COMM;frames...           (the tag at the root)
 *	[PID;TID;]COMM;frames...;TAG           (--tag-leaf)
 *
 * PID and TID are there when opts__line_ids() says so. The tag says which
 * kind of time the line is (see enum rec_kind).
 */
#ifndef WPROF_RECLINE_H
#define WPROF_RECLINE_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

#include "folded.h"

/* The kinds of wall-clock time, by tag. */
enum rec_kind {
	REC_ON_CPU,   /* on-cpu */
	REC_SLEEP,    /* off-cpu:sleep */
	REC_DISK,     /* off-cpu:disk */
	REC_RUNQ,     /* off-cpu:runqueue */
	REC_OFF,      /* off-cpu (--no-states) */
	REC_STEAL,    /* steal: on a vCPU the hypervisor gave to something else */
	REC_THROTTLED, /* off-cpu:runqueue:throttled: its cgroup was over its CPU quota */
	REC_OTHER,    /* no tag: a folded file from elsewhere */
	REC_KIND_CNT,
};

/* The tag of a kind ("on-cpu", ...; "" for REC_OTHER) and its name for people ("on-CPU"). */
const char *rec_kind__tag(enum rec_kind k);
const char *rec_kind__label(enum rec_kind k);
/* The kind of the frame @name (@len bytes): REC_OTHER when it is no tag. */
enum rec_kind rec_kind__of(const char *name, size_t len);

/* A frame of a line: not NUL-terminated. */
struct rec_span {
	const char *s;
	size_t len;
};

struct rec_line {
	enum rec_kind kind;
	struct rec_span tag;  /* empty when the line has no tag frame */
	struct rec_span comm;
	__u32 pid, tid;       /* 0 unless the line has ids */
	struct rec_span body; /* the frames after the comm, joined by ';' (tag left out) */
};

/*
 * Split @line. @tag_leaf: the tag is the last frame, not the first; @ids: PID
 * and TID follow the tag (precede the comm). A line without a tag frame
 * where one is expected is taken as it is (kind REC_OTHER, every frame in
 * the body but the first, its comm). 0, or -EINVAL when the ids are not
 * numbers or the line has too few frames.
 */
int rec_line__split(const char *line, bool tag_leaf, bool ids, struct rec_line *out);

/*
 * Add every line of @in to @out without its PID and TID frames: what
 * profile__build() would have added for an output without ids. Weights,
 * counts and maxima merge as folded__add_stats() merges them. 0 or -errno.
 */
int rec_line__strip_ids(const struct folded *in, bool tag_leaf, struct folded *out);

/* Buffers reused by rec_splitter__add(); zero-initialize. */
struct rec_splitter {
	char *buf;
	size_t cap;
	const char **frames;
	size_t cap_frames;
};

/*
 * Add the ';'-joined @line (@len bytes) to @out with its weight, count and
 * max, leaving out @nskip frames from index @skip (none when @nskip is 0).
 * 0 or -errno (-EINVAL when the line has no frame besides those left out).
 */
int rec_splitter__add(struct rec_splitter *sp, struct folded *out, const char *line, size_t len,
		      size_t skip, size_t nskip, __u64 weight, __u64 count, __u64 max);
/* rec_splitter__add(), the line keeping pieces @p[0..@n) (folded__add_full()). */
int rec_splitter__add_pieces(struct rec_splitter *sp, struct folded *out, const char *line,
			     size_t len, size_t skip, size_t nskip, __u64 weight, __u64 count,
			     __u64 max, const struct folded_piece *p, size_t n);
void rec_splitter__free(struct rec_splitter *sp);

/*
 * Call @fn for each frame of the ';'-joined @s (@len bytes), root first;
 * stops at and returns the first non-zero return.
 */
int rec_line__for_each_frame(const char *s, size_t len,
			     int (*fn)(const char *frame, size_t len, void *ctx), void *ctx);

#endif /* WPROF_RECLINE_H */
