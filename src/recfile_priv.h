/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * What the files of the saved recording (recfile.h) share, and no other
 * module includes: the sections' tags, flags and counter tables (the file
 * format), the byte helpers that write and read them, and the reader's
 * state. recfile_write.c writes a recording, recfile.c reads one back, and
 * recfile_time.c writes and reads the timeline's sections (long blocks,
 * slices, thread times).
 */
#ifndef WPROF_RECFILE_PRIV_H
#define WPROF_RECFILE_PRIV_H

#include <endian.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "bytebuf.h"
#include "recfile.h"
#include "recording.h"

static const char recfile_magic[RECFILE_MAGIC_LEN] = RECFILE_MAGIC;

enum rec_section {
	RS_END,
	RS_INFO,
	RS_COUNTERS,
	RS_BPF_STATS,
	RS_DRAIN,
	RS_SYMBOLIZER,
	RS_UNWIND,
	RS_THREADS,
	RS_HISTS,
	RS_LINES,
	RS_NOTES,
	RS_PROCS,
	RS_ORIGINS,
	RS_BLOCKS,
	RS_SLICES,
	RS_TIMES,
	RS_CGROUPS,
	RS_RAN,
	RS_CNT,
};

static const char *const section_names[RS_CNT] = {
	"end", "info", "counters", "BPF statistics", "drain statistics",
	"symbolizer statistics", "unwinder statistics", "threads", "histograms", "stacks",
	"notes", "processes", "frame origins", "long blocks", "slices", "thread times",
	"cgroups", "ran instead",
};

/* RS_INFO flags */
enum {
	RF_TAG_LEAF = 1 << 0,
	RF_IDS = 1 << 1,
	RF_NO_STATES = 1 << 2,
	RF_WAKERS = 1 << 3,
	RF_INLINES = 1 << 4,
};

/* RS_CGROUPS flags */
enum {
	CF_V2 = 1 << 0,
	CF_READ_END = 1 << 1,
};

/* per-thread flags */
enum {
	TF_LOST_LINES = 1 << 0,
	TF_IDLE = 1 << 1,
	TF_SELECTED = 1 << 2,
};

/* The u64 arrays, by field: the order is the file format's. */
#define F(type, field) offsetof(type, field)
static const size_t profile_counters[] = {
	F(struct profile, window_ns),         F(struct profile, period_ns),
	F(struct profile, frames_total),      F(struct profile, frames_unnamed),
	F(struct profile, stacks_missing),    F(struct profile, threads_left_out),
	F(struct profile, unsampled_threads), F(struct profile, unsampled_us),
	F(struct profile, untimed_threads),   F(struct profile, estimated_lines),
	F(struct profile, unwalked_groups),   F(struct profile, unwalked_us),
	F(struct profile, open_unwalked),     F(struct profile, pending_lost),
	F(struct profile, late_keys),         F(struct profile, stacks_cut_on_read),
};
static const size_t sym_counters[] = {
	F(struct symbolizer_stats, user_named),     F(struct symbolizer_stats, user_fallback),
	F(struct symbolizer_stats, kernel_named),   F(struct symbolizer_stats, kernel_fallback),
	F(struct symbolizer_stats, user_jit),       F(struct symbolizer_stats, user_inlined),
	F(struct symbolizer_stats, files),          F(struct symbolizer_stats, files_shared),
	F(struct symbolizer_stats, files_failed),
	F(struct symbolizer_stats, files_closed_early),
	F(struct symbolizer_stats, jit_maps),       F(struct symbolizer_stats, jit_untrusted),
	F(struct symbolizer_stats, jit_truncated),
	F(struct symbolizer_stats, debug_build_id_mismatch),
	F(struct symbolizer_stats, debug_crc_mismatch),
	F(struct symbolizer_stats, debug_too_big),
	F(struct symbolizer_stats, inflate_refused),
	F(struct symbolizer_stats, alt_refused),
};
static const size_t unw_counters[] = {
	F(struct unwtab_stats, files),          F(struct unwtab_stats, files_no_cfi),
	F(struct unwtab_stats, files_no_room),  F(struct unwtab_stats, rows),
	F(struct unwtab_stats, procs),          F(struct unwtab_stats, procs_failed),
	F(struct unwtab_stats, maps_truncated), F(struct unwtab_stats, build_ns),
	F(struct unwtab_stats, files_cfi_refused),
	F(struct unwtab_stats, files_inflate_refused),
	F(struct unwtab_stats, rows_live_peak), F(struct unwtab_stats, rows_capacity),
	F(struct unwtab_stats, files_given_back), F(struct unwtab_stats, files_rebuilt),
	F(struct unwtab_stats, room_waits),     F(struct unwtab_stats, images_dropped),
};
#undef F

/* --- writing --- */

static inline void put(struct bytebuf *b, const void *d, size_t n)
{
	bytebuf__put(b, d, n);
}

static inline void put_u32(struct bytebuf *b, __u32 v)
{
	v = htole32(v);
	put(b, &v, sizeof(v));
}

static inline void put_u64(struct bytebuf *b, __u64 v)
{
	v = htole64(v);
	put(b, &v, sizeof(v));
}

static inline void put_str(struct bytebuf *b, const char *s)
{
	size_t n = s ? strlen(s) : 0;

	put_u32(b, n);
	put(b, s, n);
}

/* A section's header; its length is patched by end_section(). */
static inline size_t begin_section(struct bytebuf *b, enum rec_section tag)
{
	put_u32(b, tag);
	put_u64(b, 0);
	return b->len;
}

static inline void end_section(struct bytebuf *b, size_t start)
{
	__u64 len = htole64(b->len - start);

	if (!b->oom)
		memcpy(b->p + start - sizeof(len), &len, sizeof(len));
}

/* --- reading --- */

struct rbuf {
	const unsigned char *p;
	size_t len, off;
	bool short_; /* sticky: something ran past the end */
};

static inline const void *take(struct rbuf *b, size_t n)
{
	const void *p;

	if (b->short_ || n > b->len - b->off) {
		b->short_ = true;
		return NULL;
	}
	p = b->p + b->off;
	b->off += n;
	return p;
}

static inline __u32 get_u32(struct rbuf *b)
{
	const void *p = take(b, sizeof(__u32));
	__u32 v = 0;

	if (p)
		memcpy(&v, p, sizeof(v));
	return le32toh(v);
}

static inline __u64 get_u64(struct rbuf *b)
{
	const void *p = take(b, sizeof(__u64));
	__u64 v = 0;

	if (p)
		memcpy(&v, p, sizeof(v));
	return le64toh(v);
}

/* A string into @buf (@size > 0 bytes), cut to fit; the bytes it has are bounded by the section. */
static inline void get_str_into(struct rbuf *b, char *buf, size_t size)
{
	__u32 n = get_u32(b);
	const char *s = take(b, n);
	size_t keep = n < size - 1 ? n : size - 1;

	buf[0] = '\0';
	if (!s)
		return;
	memcpy(buf, s, keep);
	buf[keep] = '\0';
	buf[strnlen(buf, keep)] = '\0';
}

/* A malloc'd copy of a string, or NULL (with b->short_ set, or out of memory: *@oom). */
static inline char *get_str(struct rbuf *b, bool *oom)
{
	__u32 n = get_u32(b);
	const char *s = take(b, n);
	char *c;

	if (!s)
		return NULL;
	c = strndup(s, n);
	*oom |= !c;
	return c;
}

/* A count of items of at least @min bytes each: more than the section holds is corrupt. */
static inline bool count_fits(const struct rbuf *b, __u64 n, size_t min)
{
	return n <= (b->len - b->off) / min;
}

/* One line's pieces, read before the line (RS_SLICES). */
struct line_pieces {
	struct folded_piece *p;
	__u32 n;
};

struct loader {
	struct recording *r;
	char *why;
	size_t size;
	bool seen[RS_CNT];
	struct line_pieces *pieces; /* by line, in the file's order */
	__u64 nr_pieces;
	__u64 cut; /* stacks cut to the limits here (the file may count more, cut before) */
};

__attribute__((format(printf, 3, 4))) static inline int fail(struct loader *l, int err,
							     const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(l->why, l->size, fmt, ap);
	va_end(ap);
	return err;
}

/*
 * The timeline's sections (recfile_time.c): recfile_write.c calls the
 * writers in the file's order (recfile_put_pieces() for each line, through
 * folded__for_each_pieces()), recfile.c the readers by tag. The readers
 * return 0 or -errno, with why in the loader (fail()).
 */
void recfile_put_blocks(struct bytebuf *b, const struct recording *r);
int recfile_put_pieces(const char *line, __u64 weight, __u64 count, __u64 max,
		       const struct folded_piece *p, size_t n, void *ctx);
void recfile_put_times(struct bytebuf *b, const struct threadtimes *tt);
int recfile_read_blocks(struct loader *l, struct rbuf *b);
int recfile_read_slices(struct loader *l, struct rbuf *b);
int recfile_read_times(struct loader *l, struct rbuf *b);
/* who ran instead (recfile_ran.c) */
void recfile_put_ran(struct bytebuf *b, const struct recording *r);
int recfile_read_ran(struct loader *l, struct rbuf *b);

#endif /* WPROF_RECFILE_PRIV_H */
