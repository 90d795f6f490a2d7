// SPDX-License-Identifier: GPL-2.0-only
/* Saved recordings (.wprof): written and read back, every field checked: see recfile.h. */
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bytebuf.h"
#include "gzip.h"
#include "recfile.h"
#include "recline.h"
#include "stackcap.h"
#include "statnames.h"
#include "util.h"

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
	RS_CNT,
};

static const char *const section_names[RS_CNT] = {
	"end", "info", "counters", "BPF statistics", "drain statistics",
	"symbolizer statistics", "unwinder statistics", "threads", "histograms", "stacks",
	"notes", "processes", "frame origins", "long blocks", "slices", "thread times",
};

/* RS_INFO flags */
enum {
	RF_TAG_LEAF = 1 << 0,
	RF_IDS = 1 << 1,
	RF_NO_STATES = 1 << 2,
	RF_WAKERS = 1 << 3,
	RF_INLINES = 1 << 4,
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

static void put(struct bytebuf *b, const void *d, size_t n)
{
	bytebuf__put(b, d, n);
}

static void put_u32(struct bytebuf *b, __u32 v)
{
	v = htole32(v);
	put(b, &v, sizeof(v));
}

static void put_u64(struct bytebuf *b, __u64 v)
{
	v = htole64(v);
	put(b, &v, sizeof(v));
}

static void put_str(struct bytebuf *b, const char *s)
{
	size_t n = s ? strlen(s) : 0;

	put_u32(b, n);
	put(b, s, n);
}

/* A section's header; its length is patched by end_section(). */
static size_t begin_section(struct bytebuf *b, enum rec_section tag)
{
	put_u32(b, tag);
	put_u64(b, 0);
	return b->len;
}

static void end_section(struct bytebuf *b, size_t start)
{
	__u64 len = htole64(b->len - start);

	if (!b->oom)
		memcpy(b->p + start - sizeof(len), &len, sizeof(len));
}

static void put_counters(struct bytebuf *b, enum rec_section tag, const void *base,
			 const size_t *offs, size_t n)
{
	size_t s = begin_section(b, tag);

	put_u32(b, n);
	for (size_t i = 0; i < n; i++)
		put_u64(b, *(const __u64 *)((const char *)base + offs[i]));
	end_section(b, s);
}

static void put_thread(struct bytebuf *b, const struct thread_acct *t)
{
	put_u32(b, t->pid);
	put_u32(b, t->tid);
	put_u32(b, t->start_id);
	put_str(b, t->comm);
	put_str(b, t->pcomm);
	put_u64(b, t->wall_ns);
	put_u64(b, t->on_ns);
	put_u64(b, t->wall_us);
	put_u64(b, t->on_us);
	put_u64(b, t->samples);
	put_u64(b, t->blocks);
	put_u64(b, t->max_block_ns);
	put_u32(b, WPROF_STATE_CNT);
	for (int k = 0; k < WPROF_STATE_CNT; k++) {
		put_u64(b, t->off_ns[k]);
		put_u64(b, t->off_us[k]);
		put_u64(b, t->kept_ns[k]);
		put_u32(b, t->has_lines[k]);
	}
	put_u32(b, (t->lost_lines ? TF_LOST_LINES : 0) | (t->idle ? TF_IDLE : 0) |
		   (t->selected ? TF_SELECTED : 0));
}

static int put_line(const char *line, __u64 weight, __u64 count, __u64 max, void *ctx)
{
	struct bytebuf *b = ctx;

	put_str(b, line);
	put_u64(b, weight);
	put_u64(b, count);
	put_u64(b, max);
	return b->oom ? -ENOMEM : 0;
}

static int put_pieces(const char *line, __u64 weight, __u64 count, __u64 max,
		      const struct folded_piece *p, size_t n, void *ctx)
{
	struct bytebuf *b = ctx;

	put_u32(b, n);
	for (size_t i = 0; i < n; i++) {
		put_u32(b, p[i].slice);
		put_u32(b, p[i].span);
		put_u64(b, p[i].weight);
		put_u64(b, p[i].count);
		put_u64(b, p[i].max);
	}
	return b->oom ? -ENOMEM : 0;
}

static void put_times(struct bytebuf *b, const struct threadtimes *tt)
{
	size_t s;

	if (!tt->nr)
		return;
	s = begin_section(b, RS_TIMES);
	put_u32(b, WPROF_STATE_CNT);
	put_u64(b, tt->nr);
	for (size_t i = 0; i < tt->nr; i++) {
		const struct thread_time *t = &tt->t[i];

		put_u32(b, t->pid);
		put_u32(b, t->tid);
		put_u32(b, t->start_id);
		put_u32(b, t->nr);
		for (__u32 k = 0; k < t->nr; k++) {
			put_u32(b, t->rows[k].slice);
			put_u32(b, t->rows[k].span);
			for (int st = 0; st < WPROF_STATE_CNT; st++)
				put_u64(b, t->rows[k].ns[st]);
		}
	}
	end_section(b, s);
}

/* RS_BLOCKS flags */
enum {
	BF_OPEN = 1 << 0,
};

static void put_blocks(struct bytebuf *b, const struct recording *r)
{
	size_t s = begin_section(b, RS_BLOCKS);

	put_u64(b, r->long_block_ns);
	put_u32(b, r->nr_blocks);
	for (size_t i = 0; i < r->nr_blocks; i++) {
		const struct rec_block *k = &r->blocks[i];

		put_u32(b, k->pid);
		put_u32(b, k->tid);
		put_u32(b, k->state);
		put_u32(b, k->open ? BF_OPEN : 0);
		put_str(b, k->comm);
		put_u64(b, k->start_ns);
		put_u64(b, k->offset_ns);
		put_u64(b, k->blocked_ns);
		put_u64(b, k->runq_ns);
		put_str(b, k->stack);
		put_str(b, k->waker ? k->waker : "");
	}
	end_section(b, s);
}

static int serialize(const struct recording *r, struct bytebuf *b)
{
	const struct profile *p = &r->prof;
	size_t s;
	int err;

	put(b, recfile_magic, sizeof(recfile_magic));
	put_u32(b, RECFILE_VERSION);

	s = begin_section(b, RS_INFO);
	put_str(b, r->info.target);
	put_str(b, r->info.program);
	put_str(b, r->cmdline);
	put_u64(b, r->info.start_ns);
	put_u64(b, r->info.window_ns);
	put_u64(b, r->info.period_ns);
	put_u64(b, r->info.freq_hz);
	put_u32(b, (r->tag_leaf ? RF_TAG_LEAF : 0) | (r->ids ? RF_IDS : 0) |
		   (r->no_states ? RF_NO_STATES : 0) | (r->wakers ? RF_WAKERS : 0) |
		   (r->inlines ? RF_INLINES : 0));
	end_section(b, s);

	put_counters(b, RS_COUNTERS, p, profile_counters, ARRAY_SIZE(profile_counters));
	s = begin_section(b, RS_BPF_STATS);
	put_u32(b, WPROF_STAT_CNT);
	for (int i = 0; i < WPROF_STAT_CNT; i++) {
		char buf[32];
		const char *name = stat__name(i, buf, sizeof(buf));

		if (!name) /* unnamed: test_recfile says so; by index, readable by this build */
			snprintf(buf, sizeof(buf), "stat_%d", i), name = buf;
		put_str(b, name);
		put_u64(b, r->stats[i]);
	}
	end_section(b, s);
	s = begin_section(b, RS_DRAIN);
	put_u32(b, 7);
	put_u64(b, r->drain.drains);
	put_u64(b, r->drain.threads);
	put_u64(b, r->drain.stacks);
	put_u64(b, r->drain.stacks_kept);
	put_u64(b, r->drain.max_fill_pct < 0 ? 0 : r->drain.max_fill_pct);
	put_u64(b, r->drain.retired);
	put_u64(b, r->drain.stacks_freed);
	end_section(b, s);
	put_counters(b, RS_SYMBOLIZER, &r->sym, sym_counters, ARRAY_SIZE(sym_counters));
	put_counters(b, RS_UNWIND, &p->unw, unw_counters, ARRAY_SIZE(unw_counters));

	s = begin_section(b, RS_THREADS);
	put_u32(b, p->nr_threads);
	for (size_t i = 0; i < p->nr_threads; i++)
		put_thread(b, &p->threads[i]);
	end_section(b, s);

	s = begin_section(b, RS_HISTS);
	put_u32(b, p->nr_hists);
	for (size_t i = 0; i < p->nr_hists; i++) {
		put_u32(b, p->hists[i].pid);
		put_u32(b, WPROF_HIST_SLOTS);
		for (int k = 0; k < WPROF_HIST_SLOTS; k++)
			put_u64(b, p->hists[i].slots[k]);
	}
	end_section(b, s);

	/* before the lines: the reader gives each line its pieces as it adds it */
	if (r->slice_ns) {
		s = begin_section(b, RS_SLICES);
		put_u64(b, r->slice_ns);
		put_u64(b, folded__nr(r->lines));
		err = folded__for_each_pieces(r->lines, put_pieces, b);
		end_section(b, s);
		if (err)
			return err;
	}
	s = begin_section(b, RS_LINES);
	put_u64(b, folded__nr(r->lines));
	err = folded__for_each(r->lines, put_line, b);
	end_section(b, s);
	if (err)
		return err;

	if (r->notes) {
		s = begin_section(b, RS_NOTES);
		put_str(b, r->notes);
		end_section(b, s);
	}
	s = begin_section(b, RS_PROCS);
	put_u32(b, r->nr_procs);
	for (size_t i = 0; i < r->nr_procs; i++) {
		put_u32(b, r->procs[i].pid);
		put_str(b, r->procs[i].cmdline);
	}
	end_section(b, s);
	if (p->origins.nr) {
		s = begin_section(b, RS_ORIGINS);
		put_u32(b, p->origins.nr);
		for (size_t i = 0; i < p->origins.nr; i++) {
			put_str(b, p->origins.list[i].path);
			put_str(b, p->origins.list[i].build_id);
		}
		put_u32(b, p->origins.nr_frames);
		for (size_t i = 0; i < p->origins.nr_frames; i++) {
			put_u32(b, p->origins.frames[i].pid);
			put_u32(b, p->origins.frames[i].origin);
			put_str(b, p->origins.frames[i].name);
		}
		end_section(b, s);
	}
	put_blocks(b, r);
	put_times(b, &p->times);
	begin_section(b, RS_END);
	return b->oom ? -ENOMEM : 0;
}

int recfile__save(const struct recording *r, FILE *f)
{
	struct bytebuf b = {};
	int err = serialize(r, &b);

	if (!err)
		err = gzip__write(b.p, b.len, f);
	free(b.p);
	return err;
}

/* --- reading --- */

struct rbuf {
	const unsigned char *p;
	size_t len, off;
	bool short_; /* sticky: something ran past the end */
};

static const void *take(struct rbuf *b, size_t n)
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

static __u32 get_u32(struct rbuf *b)
{
	const void *p = take(b, sizeof(__u32));
	__u32 v = 0;

	if (p)
		memcpy(&v, p, sizeof(v));
	return le32toh(v);
}

static __u64 get_u64(struct rbuf *b)
{
	const void *p = take(b, sizeof(__u64));
	__u64 v = 0;

	if (p)
		memcpy(&v, p, sizeof(v));
	return le64toh(v);
}

/* A string into @buf (@size > 0 bytes), cut to fit; the bytes it has are bounded by the section. */
static void get_str_into(struct rbuf *b, char *buf, size_t size)
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
static char *get_str(struct rbuf *b, bool *oom)
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
static bool count_fits(const struct rbuf *b, __u64 n, size_t min)
{
	return n <= (b->len - b->off) / min;
}

static void get_counters(struct rbuf *b, void *base, const size_t *offs, size_t n)
{
	__u32 have = get_u32(b);

	for (__u32 i = 0; i < have && !b->short_; i++) {
		__u64 v = get_u64(b);

		if (i < n)
			*(__u64 *)((char *)base + offs[i]) = v;
	}
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

__attribute__((format(printf, 3, 4))) static int fail(struct loader *l, int err,
						      const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(l->why, l->size, fmt, ap);
	va_end(ap);
	return err;
}

static int read_info(struct loader *l, struct rbuf *b)
{
	struct recording *r = l->r;
	bool oom = false;
	__u32 flags;

	get_str_into(b, r->info.target, sizeof(r->info.target));
	get_str_into(b, r->info.program, sizeof(r->info.program));
	r->cmdline = get_str(b, &oom);
	r->info.start_ns = get_u64(b);
	r->info.window_ns = get_u64(b);
	r->info.period_ns = get_u64(b);
	r->info.freq_hz = get_u64(b);
	flags = get_u32(b);
	r->tag_leaf = flags & RF_TAG_LEAF;
	r->ids = flags & RF_IDS;
	r->no_states = flags & RF_NO_STATES;
	r->wakers = flags & RF_WAKERS;
	r->inlines = flags & RF_INLINES;
	return oom ? -ENOMEM : 0;
}

static void read_drain(struct rbuf *b, struct session_drain_stats *d)
{
	__u64 v[7] = {};
	__u32 n = get_u32(b);

	for (__u32 i = 0; i < n && !b->short_; i++) {
		__u64 x = get_u64(b);

		if (i < ARRAY_SIZE(v))
			v[i] = x;
	}
	d->drains = v[0];
	d->threads = v[1];
	d->stacks = v[2];
	d->stacks_kept = v[3];
	d->max_fill_pct = v[4] > 100 ? 100 : v[4];
	d->retired = v[5];
	d->stacks_freed = v[6];
}

/* As profile.c sorts them: by tid, then start_id (a reused tid is two threads). */
static int cmp_thread(const void *a, const void *b)
{
	const struct thread_acct *x = a, *y = b;

	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	return x->start_id < y->start_id ? -1 : x->start_id > y->start_id;
}

/* The smallest thread record: 3 ids, two empty strings, 7 u64, the state count, flags. */
#define THREAD_MIN_BYTES (3 * 4 + 4 + 4 + 7 * 8 + 4 + 4)

static int read_threads(struct loader *l, struct rbuf *b)
{
	struct profile *p = &l->r->prof;
	__u32 n = get_u32(b), flags, states;

	if (!count_fits(b, n, THREAD_MIN_BYTES))
		return fail(l, -EBADMSG, "corrupt recording (%s: more than the section holds)",
			    "threads");
	p->threads = calloc(n + 1, sizeof(*p->threads));
	if (!p->threads)
		return -ENOMEM;
	for (__u32 i = 0; i < n && !b->short_; i++) {
		struct thread_acct *t = &p->threads[p->nr_threads++];

		t->pid = get_u32(b);
		t->tid = get_u32(b);
		t->start_id = get_u32(b);
		get_str_into(b, t->comm, sizeof(t->comm));
		get_str_into(b, t->pcomm, sizeof(t->pcomm));
		t->wall_ns = get_u64(b);
		t->on_ns = get_u64(b);
		t->wall_us = get_u64(b);
		t->on_us = get_u64(b);
		t->samples = get_u64(b);
		t->blocks = get_u64(b);
		t->max_block_ns = get_u64(b);
		/* recordings made before steal was kept apart have one state less */
		states = get_u32(b);
		if ((states < WPROF_STEAL || states > WPROF_STATE_CNT) && !b->short_)
			return fail(l, -EBADMSG, "corrupt recording (%s: thread states not this wprof's)",
				    "threads");
		for (__u32 k = 0; k < states && k < WPROF_STATE_CNT; k++) {
			t->off_ns[k] = get_u64(b);
			t->off_us[k] = get_u64(b);
			t->kept_ns[k] = get_u64(b);
			t->has_lines[k] = get_u32(b);
		}
		flags = get_u32(b);
		t->lost_lines = flags & TF_LOST_LINES;
		t->idle = flags & TF_IDLE;
		t->selected = flags & TF_SELECTED;
	}
	/* profile__thread() searches them by tid */
	qsort(p->threads, p->nr_threads, sizeof(*p->threads), cmp_thread);
	return 0;
}

static int read_hists(struct loader *l, struct rbuf *b)
{
	struct profile *p = &l->r->prof;
	__u32 n = get_u32(b);

	/*
	 * Every writer writes every slot: an entry takes in the file what it
	 * takes in memory, so a small file cannot ask for much
	 */
	if (!count_fits(b, n, 4 + 4 + 8 * WPROF_HIST_SLOTS))
		return fail(l, -EBADMSG, "corrupt recording (%s: more than the section holds)",
			    "histograms");
	p->hists = calloc(n + 1, sizeof(*p->hists));
	if (!p->hists)
		return -ENOMEM;
	for (__u32 i = 0; i < n && !b->short_; i++) {
		struct proc_hist *h = &p->hists[p->nr_hists++];
		__u32 slots;

		h->pid = get_u32(b);
		slots = get_u32(b);
		if (slots != WPROF_HIST_SLOTS && !b->short_)
			return fail(l, -EBADMSG, "corrupt recording (%s: not %d slots)",
				    "histograms", WPROF_HIST_SLOTS);
		for (__u32 k = 0; k < slots; k++)
			h->slots[k] = get_u64(b);
	}
	return 0;
}

/* A line the writers can take apart (rec_line__split()). */
static int check_line(const char *line, __u64 weight, __u64 count, __u64 max, void *ctx)
{
	const struct recording *r = ctx;
	struct rec_line rl;

	return rec_line__split(line, r->tag_leaf, true, &rl);
}

static int read_lines(struct loader *l, struct rbuf *b)
{
	struct recording *r = l->r;
	struct rec_splitter sp = {};
	__u64 n = get_u64(b);
	char *cut = NULL;
	size_t cut_len;
	int err = 0;

	if (!count_fits(b, n, 4 + 3 * 8))
		return fail(l, -EBADMSG, "corrupt recording (%s: more than the section holds)",
			    "stacks");
	r->lines = folded__new();
	cut = malloc(stackcap_default.bytes + 1);
	if (!r->lines || !cut) {
		free(cut);
		return -ENOMEM;
	}
	if (l->pieces && l->nr_pieces != n) {
		free(cut);
		return fail(l, -EBADMSG, "corrupt recording (%s)",
			    "slices: not as many lines as the stacks");
	}
	for (__u64 i = 0; i < n && !err; i++) {
		__u32 len = get_u32(b);
		const char *line = take(b, len);
		__u64 weight = get_u64(b), count = get_u64(b), max = get_u64(b);
		const struct line_pieces *lp = l->pieces ? &l->pieces[i] : NULL;

		if (b->short_)
			break;
		if (!len || memchr(line, '\0', len)) {
			err = -EINVAL;
			break;
		}
		/* before it is split: a line's frames take 8 bytes each there */
		if (stackcap__cut(&stackcap_default, line, len, cut, &cut_len)) {
			line = cut;
			len = cut_len;
			l->cut++;
		}
		err = rec_splitter__add_pieces(&sp, r->lines, line, len, 0, 0, weight, count, max,
					       lp ? lp->p : NULL, lp ? lp->n : 0);
	}
	rec_splitter__free(&sp);
	free(cut);
	if (err == -ENOMEM)
		return err;
	if (err)
		return fail(l, -EBADMSG, "corrupt recording (%s: a malformed line)", "stacks");
	return 0;
}

/* u32 slice, u32 span, 3 u64 */
#define PIECE_BYTES (2 * 4 + 3 * 8)

static int read_slices(struct loader *l, struct rbuf *b)
{
	__u64 slice_ns = get_u64(b), n = get_u64(b);

	if (l->seen[RS_LINES])
		return fail(l, -EBADMSG, "corrupt recording (%s)", "slices after the stacks");
	if (!count_fits(b, n, 4) || !slice_ns)
		return fail(l, -EBADMSG, "corrupt recording (%s: more than the section holds)",
			    "slices");
	l->r->slice_ns = slice_ns;
	l->pieces = calloc(n + 1, sizeof(*l->pieces));
	if (!l->pieces)
		return -ENOMEM;
	for (__u64 i = 0; i < n && !b->short_; i++) {
		struct line_pieces *lp = &l->pieces[l->nr_pieces++];
		__u32 k = get_u32(b);

		if (!count_fits(b, k, PIECE_BYTES))
			return fail(l, -EBADMSG, "corrupt recording (%s: more than the section holds)",
				    "slices");
		lp->p = calloc(k + 1, sizeof(*lp->p));
		if (!lp->p)
			return -ENOMEM;
		for (__u32 j = 0; j < k && !b->short_; j++, lp->n++) {
			lp->p[j].slice = get_u32(b);
			lp->p[j].span = get_u32(b);
			lp->p[j].weight = get_u64(b);
			lp->p[j].count = get_u64(b);
			lp->p[j].max = get_u64(b);
		}
	}
	return 0;
}

static int read_times(struct loader *l, struct rbuf *b)
{
	__u32 states = get_u32(b);
	__u64 n = get_u64(b);

	/* the states by enum wprof_state: one this build does not know is left out */
	if (!states || states > 64 || !count_fits(b, n, 4 * 4))
		return fail(l, -EBADMSG, "corrupt recording (%s)", "thread times: bad counts");
	for (__u64 i = 0; i < n && !b->short_; i++) {
		__u32 pid = get_u32(b), tid = get_u32(b), start_id = get_u32(b), rows = get_u32(b);

		if (!count_fits(b, rows, 8 + 8 * (size_t)states))
			return fail(l, -EBADMSG, "corrupt recording (%s: more than the section holds)",
				    "thread times");
		for (__u32 k = 0; k < rows && !b->short_; k++) {
			__u32 slice = get_u32(b), span = get_u32(b);
			__u64 ns[WPROF_STATE_CNT] = {};

			for (__u32 st = 0; st < states; st++) {
				__u64 v = get_u64(b);

				if (st < WPROF_STATE_CNT)
					ns[st] = v;
			}
			if (threadtimes__add(&l->r->prof.times, pid, tid, start_id, slice, span, ns))
				return -ENOMEM;
		}
	}
	return 0;
}

static int read_notes(struct loader *l, struct rbuf *b)
{
	bool oom = false;

	l->r->notes = get_str(b, &oom);
	return oom ? -ENOMEM : 0;
}

static int read_procs(struct loader *l, struct rbuf *b)
{
	struct recording *r = l->r;
	__u32 n = get_u32(b);
	bool oom = false;

	if (!count_fits(b, n, 8))
		return fail(l, -EBADMSG, "corrupt recording (%s: more than the section holds)",
			    "processes");
	r->procs = calloc(n + 1, sizeof(*r->procs));
	if (!r->procs)
		return -ENOMEM;
	for (__u32 i = 0; i < n && !b->short_ && !oom; i++) {
		struct rec_proc *p = &r->procs[r->nr_procs++];

		p->pid = get_u32(b);
		p->cmdline = get_str(b, &oom);
	}
	return oom ? -ENOMEM : 0;
}

/* 4 u32, 2 empty strings' lengths, 4 u64, a stack's length */
#define BLOCK_MIN_BYTES (4 * 4 + 2 * 4 + 4 * 8 + 4)

static int read_blocks(struct loader *l, struct rbuf *b)
{
	struct recording *r = l->r;
	__u64 threshold = get_u64(b);
	__u32 n = get_u32(b);
	bool oom = false;

	if (!count_fits(b, n, BLOCK_MIN_BYTES))
		return fail(l, -EBADMSG, "corrupt recording (%s: more than the section holds)",
			    "long blocks");
	r->long_block_ns = threshold;
	r->blocks = calloc(n + 1, sizeof(*r->blocks));
	if (!r->blocks)
		return -ENOMEM;
	for (__u32 i = 0; i < n && !b->short_ && !oom; i++) {
		struct rec_block *k = &r->blocks[r->nr_blocks++];

		k->pid = get_u32(b);
		k->tid = get_u32(b);
		k->state = get_u32(b);
		k->open = get_u32(b) & BF_OPEN;
		get_str_into(b, k->comm, sizeof(k->comm));
		k->start_ns = get_u64(b);
		k->offset_ns = get_u64(b);
		k->blocked_ns = get_u64(b);
		k->runq_ns = get_u64(b);
		k->stack = get_str(b, &oom);
		k->waker = get_str(b, &oom);
		if (k->waker && !k->waker[0]) {
			free(k->waker);
			k->waker = NULL;
		}
		/* the writers add the two: a sum that wraps is no length */
		if (k->blocked_ns > UINT64_MAX - k->runq_ns || !k->stack ||
		    k->state >= WPROF_STATE_CNT)
			return oom ? -ENOMEM : fail(l, -EBADMSG, "corrupt recording (%s)",
						    "long blocks: a bad entry");
	}
	return oom ? -ENOMEM : 0;
}

static int read_origins(struct loader *l, struct rbuf *b)
{
	struct origins *o = &l->r->prof.origins;
	__u32 n = get_u32(b);
	int err = 0;

	if (!count_fits(b, n, 8))
		return fail(l, -EBADMSG, "corrupt recording (%s: more than the section holds)",
			    "frame origins");
	for (__u32 i = 0; i < n && !b->short_ && !err; i++) {
		bool oom = false;
		char *path = get_str(b, &oom), *id = get_str(b, &oom);
		long idx = path && id ? origins__add(o, path, id) : oom ? -ENOMEM : 0;

		free(path);
		free(id);
		if (idx < 0)
			err = idx;
		else if (!b->short_ && idx != i)
			err = fail(l, -EBADMSG, "corrupt recording (%s: a file twice)", "frame origins");
	}
	n = err ? 0 : get_u32(b);
	if (!err && !count_fits(b, n, 12))
		return fail(l, -EBADMSG, "corrupt recording (%s: more than the section holds)",
			    "frame origins");
	for (__u32 i = 0; i < n && !b->short_ && !err; i++) {
		__u32 pid = get_u32(b), origin = get_u32(b), len = get_u32(b);
		const char *name = take(b, len);

		if (name)
			err = origins__put(o, pid, name, len, origin);
		if (err == -EINVAL)
			err = fail(l, -EBADMSG, "corrupt recording (%s: a bad entry)", "frame origins");
	}
	return err;
}

static int read_section(struct loader *l, enum rec_section tag, struct rbuf *b)
{
	struct recording *r = l->r;

	switch (tag) {
	case RS_INFO:
		return read_info(l, b);
	case RS_COUNTERS:
		get_counters(b, &r->prof, profile_counters, ARRAY_SIZE(profile_counters));
		return 0;
	case RS_BPF_STATS: {
		__u32 n = get_u32(b);

		/* by name: a statistic this build does not have is left out */
		for (__u32 i = 0; i < n && !b->short_; i++) {
			char name[32];
			__u64 v;
			int k;

			get_str_into(b, name, sizeof(name));
			v = get_u64(b);
			k = stat__index(name);
			if (k < 0 && sscanf(name, "stat_%d", &k) != 1)
				k = -1;
			if (k >= 0 && k < WPROF_STAT_CNT)
				r->stats[k] = v;
		}
		return 0;
	}
	case RS_DRAIN:
		read_drain(b, &r->drain);
		return 0;
	case RS_SYMBOLIZER:
		get_counters(b, &r->sym, sym_counters, ARRAY_SIZE(sym_counters));
		return 0;
	case RS_UNWIND:
		get_counters(b, &r->prof.unw, unw_counters, ARRAY_SIZE(unw_counters));
		return 0;
	case RS_THREADS:
		return read_threads(l, b);
	case RS_HISTS:
		return read_hists(l, b);
	case RS_LINES:
		return read_lines(l, b);
	case RS_NOTES:
		return read_notes(l, b);
	case RS_PROCS:
		return read_procs(l, b);
	case RS_ORIGINS:
		return read_origins(l, b);
	case RS_BLOCKS:
		return read_blocks(l, b);
	case RS_SLICES:
		return read_slices(l, b);
	case RS_TIMES:
		return read_times(l, b);
	default:
		return 0; /* a later wprof's: skipped */
	}
}

/* The magic and a version this wprof reads, from @b. */
static int check_header(struct loader *l, struct rbuf *b)
{
	const void *magic = take(b, sizeof(recfile_magic));
	__u32 version = get_u32(b);

	if (!magic || memcmp(magic, recfile_magic, sizeof(recfile_magic)))
		return fail(l, -ENOMSG, "not a wprof recording%s", "");
	if (b->short_)
		return fail(l, -ENODATA, "truncated recording (%s)", "no version");
	if (version > RECFILE_VERSION) {
		snprintf(l->why, l->size, "recording version %u is newer than this wprof (it reads "
			 "version %d); report it with the wprof that recorded it", version,
			 RECFILE_VERSION);
		return -EPROTONOSUPPORT;
	}
	if (!version)
		return fail(l, -EBADMSG, "corrupt recording (%s)", "version 0");
	return 0;
}

static int parse(struct loader *l, const unsigned char *buf, size_t len)
{
	struct rbuf b = { .p = buf, .len = len };
	__u64 *p_cut;
	int err = check_header(l, &b);

	if (err)
		return err;
	for (;;) {
		__u32 tag = get_u32(&b);
		__u64 slen = get_u64(&b);
		const char *name = tag < RS_CNT ? section_names[tag] : "unknown section";
		struct rbuf sec;
		int err;

		if (b.short_)
			return fail(l, -ENODATA, "truncated recording (%s)", "no end marker");
		if (tag == RS_END)
			break;
		if (slen > b.len - b.off)
			return fail(l, -ENODATA, "truncated recording (%s: shorter than its length)",
				    name);
		if (tag < RS_CNT && l->seen[tag])
			return fail(l, -EBADMSG, "corrupt recording (%s: twice)", name);
		if (tag < RS_CNT)
			l->seen[tag] = true;
		sec = (struct rbuf){ .p = b.p + b.off, .len = slen };
		b.off += slen;
		err = read_section(l, tag, &sec);
		if (err == -ENOMEM)
			return fail(l, err, "%s", "out of memory");
		if (err)
			return err;
		if (sec.short_)
			return fail(l, -EBADMSG, "corrupt recording (%s: shorter than its content)",
				    name);
	}
	if (b.off != b.len)
		return fail(l, -EBADMSG, "corrupt recording (%s)", "bytes after the end marker");
	/* after the counters, whichever section came first */
	p_cut = &l->r->prof.stacks_cut_on_read;
	*p_cut = *p_cut > UINT64_MAX - l->cut ? UINT64_MAX : *p_cut + l->cut;
	if (!l->seen[RS_INFO] || !l->seen[RS_THREADS] || !l->seen[RS_LINES])
		return fail(l, -EBADMSG, "corrupt recording (%s)",
			    "no info, threads or stacks section");
	/* wprof saves its lines with ids (opts__line_ids()): every writer may rely on them */
	if (!l->r->ids)
		return fail(l, -EBADMSG, "corrupt recording (%s)", "stacks without thread ids");
	/* what the writers take apart must be there: checked once, here, whatever the order */
	if (folded__for_each(l->r->lines, check_line, l->r))
		return fail(l, -EBADMSG, "corrupt recording (%s: a malformed line)", "stacks");
	return 0;
}

/*
 * -errno with why when the first bytes of a file already show it is no
 * recording this wprof reads: not gzip, or the first bytes it inflates to
 * are not the magic and a version it knows. 0 when it may be one. Inflates
 * a few bytes, whatever the file.
 */
static int sniff(struct loader *l, const void *buf, size_t len)
{
	unsigned char head[RECFILE_MAGIC_LEN + sizeof(__u32)];
	struct rbuf b = { .p = head, .len = sizeof(head) };
	size_t n;

	if (!gzip__is_gzip(buf, len))
		return fail(l, -ENOMSG, "not a wprof recording%s", " (not gzip-compressed)");
	n = gzip__head(buf, len, head, sizeof(head));
	if (n == sizeof(head))
		return check_header(l, &b);
	/* shorter: refused once inflated, saying why; unless it starts as no recording does */
	if (n && memcmp(head, recfile_magic, n < RECFILE_MAGIC_LEN ? n : RECFILE_MAGIC_LEN))
		return fail(l, -ENOMSG, "not a wprof recording%s", "");
	return 0;
}

int recfile__parse(const void *buf, size_t len, struct recording *r, char *why, size_t size)
{
	struct loader l = { .r = r, .why = why, .size = size };
	void *raw;
	size_t raw_len;
	int err;

	memset(r, 0, sizeof(*r));
	snprintf(why, size, "?");
	/* before inflating up to RECFILE_MAX_BYTES of what may be anything */
	err = sniff(&l, buf, len);
	if (err)
		return err;
	err = gzip__read(buf, len, RECFILE_MAX_BYTES, &raw, &raw_len);
	switch (err) {
	case 0:
		break;
	case -ENODATA:
		return fail(&l, err, "truncated recording (%s)", "the compressed data ends early");
	case -EBADMSG:
		return fail(&l, err, "corrupt recording (%s)", "bad compressed data or checksum");
	case -EFBIG:
		snprintf(why, size, "recording larger than %llu MiB uncompressed: not one wprof "
			 "wrote", RECFILE_MAX_BYTES >> 20);
		return err;
	default:
		return fail(&l, err, "%s", strerror(-err));
	}
	err = parse(&l, raw, raw_len);
	free(raw);
	for (__u64 i = 0; i < l.nr_pieces; i++)
		free(l.pieces[i].p);
	free(l.pieces);
	if (err)
		recording__free(r);
	return err;
}

/* What is read before looking at what the file is. */
#define SNIFF_BYTES (64 * 1024)

int recfile__read_fd(int fd, const void *prefix, size_t n, void **out, size_t *len)
{
	size_t cap = SNIFF_BYTES;
	unsigned char *buf = malloc(cap);
	bool sniffed = false;
	char why[8];
	int err = 0;

	*out = NULL;
	*len = 0;
	if (!buf)
		return -ENOMEM;
	if (n > cap)
		n = cap;
	if (n)
		memcpy(buf, prefix, n);
	for (;;) {
		ssize_t got;

		if (!sniffed && n >= SNIFF_BYTES) {
			struct loader l = { .why = why, .size = sizeof(why) };

			/* what recfile__parse() would refuse: no need to read the rest */
			sniffed = true;
			if (sniff(&l, buf, n))
				break;
		}
		if (n == cap) {
			unsigned char *b;

			if (cap >= RECFILE_MAX_BYTES) {
				err = -EFBIG;
				break;
			}
			b = realloc(buf, 2 * cap);
			if (!b) {
				err = -ENOMEM;
				break;
			}
			buf = b;
			cap *= 2;
		}
		got = read(fd, buf + n, cap - n);
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0) {
			err = -errno;
			break;
		}
		if (!got)
			break;
		n += got;
	}
	if (err) {
		free(buf);
		return err;
	}
	*out = buf;
	*len = n;
	return 0;
}

int recfile__read_file(const char *path, void **out, size_t *len)
{
	struct stat st;
	int fd = open(path, O_RDONLY | O_CLOEXEC), err;

	*out = NULL;
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
		close(fd);
		return -EISDIR;
	}
	err = recfile__read_fd(fd, NULL, 0, out, len);
	close(fd);
	return err;
}

int recfile__load(const char *path, struct recording *r)
{
	char why[256];
	void *buf;
	size_t len = 0;
	int err;

	memset(r, 0, sizeof(*r));
	err = recfile__read_file(path, &buf, &len);
	if (err) {
		pr_err("cannot read %s: %s", path, strerror(-err));
		return err;
	}
	err = recfile__parse(buf, len, r, why, sizeof(why));
	free(buf);
	if (err)
		pr_err("%s: %s", path, why);
	return err;
}
