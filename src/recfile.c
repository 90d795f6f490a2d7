// SPDX-License-Identifier: GPL-2.0-only
/*
 * Saved recordings (.wprof), read back, every field checked: see recfile.h.
 * The writer is recfile_write.c; the timeline's sections are recfile_time.c.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gzip.h"
#include "recfile_priv.h"
#include "recline.h"
#include "stackcap.h"
#include "statnames.h"
#include "util.h"

static void get_counters(struct rbuf *b, void *base, const size_t *offs, size_t n)
{
	__u32 have = get_u32(b);

	for (__u32 i = 0; i < have && !b->short_; i++) {
		__u64 v = get_u64(b);

		if (i < n)
			*(__u64 *)((char *)base + offs[i]) = v;
	}
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

static int read_notes(struct loader *l, struct rbuf *b)
{
	bool oom = false;

	l->r->notes = get_str(b, &oom);
	return oom ? -ENOMEM : 0;
}

/* 2 u32, an empty path's length, 8 u64 */
#define CGROUP_MIN_BYTES (2 * 4 + 4 + 8 * 8)

static int read_cgroups(struct loader *l, struct rbuf *b)
{
	struct recording *r = l->r;
	__u32 n = get_u32(b);

	if (n > CGCPU_MAX || !count_fits(b, n, CGROUP_MIN_BYTES))
		return fail(l, -EBADMSG, "corrupt recording (%s: more than the section holds)",
			    "cgroups");
	r->cgroups = calloc(n + 1, sizeof(*r->cgroups));
	if (!r->cgroups)
		return -ENOMEM;
	for (__u32 i = 0; i < n && !b->short_; i++) {
		struct cg_limit *c = &r->cgroups[r->nr_cgroups++];
		__u32 flags;

		c->pid = get_u32(b);
		flags = get_u32(b);
		c->v2 = flags & CF_V2;
		c->read_end = flags & CF_READ_END;
		get_str_into(b, c->path, sizeof(c->path));
		c->quota_us = get_u64(b);
		c->period_us = get_u64(b);
		c->start.periods = get_u64(b);
		c->start.throttled_periods = get_u64(b);
		c->start.throttled_ns = get_u64(b);
		c->end.periods = get_u64(b);
		c->end.throttled_periods = get_u64(b);
		c->end.throttled_ns = get_u64(b);
		/* a limit of 0 CPU says nothing (and would divide by 0) */
		if (!c->quota_us || !c->period_us)
			c->read_end = false;
	}
	return 0;
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
		return recfile_read_blocks(l, b);
	case RS_SLICES:
		return recfile_read_slices(l, b);
	case RS_TIMES:
		return recfile_read_times(l, b);
	case RS_CGROUPS:
		return read_cgroups(l, b);
	case RS_RAN:
		return recfile_read_ran(l, b);
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
