// SPDX-License-Identifier: GPL-2.0-only
/* Saved recordings (.wprof), written: every section in the file's order (recfile.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "gzip.h"
#include "recfile_priv.h"
#include "statnames.h"
#include "util.h"

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
		err = folded__for_each_pieces(r->lines, recfile_put_pieces, b);
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
	recfile_put_blocks(b, r);
	recfile_put_times(b, &p->times);
	if (r->nr_cgroups) {
		s = begin_section(b, RS_CGROUPS);
		put_u32(b, r->nr_cgroups);
		for (size_t i = 0; i < r->nr_cgroups; i++) {
			const struct cg_limit *c = &r->cgroups[i];

			put_u32(b, c->pid);
			put_u32(b, (c->v2 ? CF_V2 : 0) | (c->read_end ? CF_READ_END : 0));
			put_str(b, c->path);
			put_u64(b, c->quota_us);
			put_u64(b, c->period_us);
			put_u64(b, c->start.periods);
			put_u64(b, c->start.throttled_periods);
			put_u64(b, c->start.throttled_ns);
			put_u64(b, c->end.periods);
			put_u64(b, c->end.throttled_periods);
			put_u64(b, c->end.throttled_ns);
		}
		end_section(b, s);
	}
	recfile_put_ran(b, r);
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
