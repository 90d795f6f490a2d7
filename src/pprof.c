// SPDX-License-Identifier: GPL-2.0-only
/*
 * profile.proto written by hand: a few varints and length-delimited fields
 * need no protobuf library. Each table (strings, functions, locations) is
 * encoded as its entries are made and the parts are joined at the end:
 * repeated fields may come in any order of field numbers.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "bytebuf.h"
#include "gzip.h"
#include "pprof.h"
#include "recline.h"
#include "safestr.h"
#include "strmap.h"
#include "util.h"

/* Field numbers of profile.proto. */
enum {
	PROFILE_SAMPLE_TYPE = 1,
	PROFILE_SAMPLE = 2,
	PROFILE_MAPPING = 3,
	PROFILE_LOCATION = 4,
	PROFILE_FUNCTION = 5,
	PROFILE_STRING_TABLE = 6,
	PROFILE_TIME_NANOS = 9,
	PROFILE_DURATION_NANOS = 10,
	PROFILE_PERIOD_TYPE = 11,
	PROFILE_PERIOD = 12,
	PROFILE_COMMENT = 13,
	PROFILE_DEFAULT_SAMPLE_TYPE = 14,
	VALUE_TYPE_TYPE = 1,
	VALUE_TYPE_UNIT = 2,
	SAMPLE_LOCATION_ID = 1,
	SAMPLE_VALUE = 2,
	SAMPLE_LABEL = 3,
	LABEL_KEY = 1,
	LABEL_STR = 2,
	LABEL_NUM = 3,
	MAPPING_ID = 1,
	MAPPING_FILENAME = 5,
	MAPPING_BUILD_ID = 6,
	MAPPING_HAS_FUNCTIONS = 7,
	MAPPING_HAS_INLINE_FRAMES = 10,
	LOCATION_ID = 1,
	LOCATION_MAPPING_ID = 2,
	LOCATION_LINE = 4,
	LINE_FUNCTION_ID = 1,
	FUNCTION_ID = 1,
	FUNCTION_NAME = 2,
	FUNCTION_SYSTEM_NAME = 3,
};

enum { WIRE_VARINT = 0, WIRE_LEN = 2 };

#define INLINE_SUFFIX "_[i]"

static void pb_put(struct bytebuf *b, const void *data, size_t len)
{
	bytebuf__put(b, data, len);
}

static void pb_varint(struct bytebuf *b, __u64 v)
{
	unsigned char buf[10];
	size_t n = 0;

	do {
		buf[n++] = (v & 0x7f) | (v > 0x7f ? 0x80 : 0);
		v >>= 7;
	} while (v);
	pb_put(b, buf, n);
}

static void pb_uint(struct bytebuf *b, int field, __u64 v)
{
	pb_varint(b, (__u64)field << 3 | WIRE_VARINT);
	pb_varint(b, v);
}

static void pb_bytes(struct bytebuf *b, int field, const void *data, size_t len)
{
	pb_varint(b, (__u64)field << 3 | WIRE_LEN);
	pb_varint(b, len);
	pb_put(b, data, len);
}

/* A sub-message built in @sub, which is emptied for the next one. */
static void pb_msg(struct bytebuf *b, int field, struct bytebuf *sub)
{
	pb_bytes(b, field, sub->p, sub->len);
	b->oom |= sub->oom;
	sub->len = 0;
}

/*
 * Mapping 1 is the main binary's to pprof: the program's file, or its name.
 * Frames of no known file have no mapping (a location may have none): so
 * that a file is one mapping, with its build id, not also the program's name.
 */
#define MAPPING_PROGRAM 1
#define MAPPING_NONE 0

struct pprof {
	const struct profile *p;
	bool tag_leaf, ids, inlines;
	struct bytebuf samples, locations, functions, strings, mappings;
	/* scratch, one per message that may be built while another one is */
	struct bytebuf fn, loc, loc_line, sample, label, packed;
	struct strmap *string_ids, *function_ids, *location_ids;
	__u64 *stack; /* location ids of the current sample, leaf first */
	size_t nr_stack, cap_stack;
	__u64 *mapping_ids; /* by index in p->origins.list; 0: not written yet */
	__u32 pid;          /* of the current sample */
	__u64 ambiguous;    /* locations whose function two files have: no mapping */
	bool last_ambiguous; /* that of the last mapping_of() */
	char *key;          /* scratch: a location's key */
	size_t cap_key;
	char *safe;         /* scratch: a string as safe text */
	size_t cap_safe;
	int err;
};

/*
 * The index of @s in the string table, adding it when new: as safe text
 * (safestr.h), since pprof's readers take its strings for UTF-8, and show
 * them on terminals.
 */
static __u64 str_id(struct pprof *pp, const char *s, size_t len)
{
	size_t safe_len = safestr__text(NULL, 0, s, len);
	__u64 id = 0;
	int ret;

	if (safe_len != len) {
		if (safe_len + 1 > pp->cap_safe) {
			char *b = realloc(pp->safe, safe_len + 1);

			if (!b) {
				pp->err = -ENOMEM;
				return 0;
			}
			pp->safe = b;
			pp->cap_safe = safe_len + 1;
		}
		safestr__text(pp->safe, safe_len + 1, s, len);
		s = pp->safe;
		len = safe_len;
	}
	ret = strmap__intern(pp->string_ids, s, len, strmap__nr(pp->string_ids), &id);
	if (ret < 0)
		pp->err = ret;
	if (ret == 1)
		pb_bytes(&pp->strings, PROFILE_STRING_TABLE, s, len);
	return id;
}

static __u64 cstr_id(struct pprof *pp, const char *s)
{
	return str_id(pp, s, strlen(s));
}

static bool inlined(const char *s, size_t len)
{
	size_t n = strlen(INLINE_SUFFIX);

	return len > n && !memcmp(s + len - n, INLINE_SUFFIX, n);
}

static __u64 function_id(struct pprof *pp, const char *name, size_t len)
{
	size_t shown = inlined(name, len) ? len - strlen(INLINE_SUFFIX) : len;
	__u64 id, next = strmap__nr(pp->function_ids) + 1; /* ids start at 1 */
	int ret = strmap__intern(pp->function_ids, name, shown, next, &id);

	if (ret < 0)
		pp->err = ret;
	if (ret == 1) {
		__u64 name_id = str_id(pp, name, shown);

		pb_uint(&pp->fn, FUNCTION_ID, id);
		pb_uint(&pp->fn, FUNCTION_NAME, name_id);
		pb_uint(&pp->fn, FUNCTION_SYSTEM_NAME, name_id);
		pb_msg(&pp->functions, PROFILE_FUNCTION, &pp->fn);
	}
	return id;
}

/*
 * The origin that stands for @idx's file: a file whose build id could not
 * be read once (a process that exited, a mount namespace not entered) and
 * could another time is one file, one mapping, with its build id. Two
 * build ids of one path are two files (one replaced while recording).
 */
static size_t canonical(const struct origins *os, size_t idx)
{
	if (os->list[idx].build_id[0])
		return idx;
	for (size_t i = 0; i < os->nr; i++)
		if (os->list[i].build_id[0] && !strcmp(os->list[i].path, os->list[idx].path))
			return i;
	return idx;
}

/*
 * The origin of the program's own file (@program as the command line gave
 * it: a path, or a name found in PATH), with its build id, or -1.
 */
static long program_origin(const struct origins *os, const char *program)
{
	const char *base = strrchr(program, '/');
	long found = -1;

	base = base ? base + 1 : program;
	if (!*base)
		return -1;
	for (size_t i = 0; i < os->nr; i++) {
		const char *path = os->list[i].path, *pb = strrchr(path, '/');

		if (strcmp(path, program) && (!pb || strcmp(pb + 1, base)))
			continue;
		if (found < 0 || (!os->list[found].build_id[0] && os->list[i].build_id[0]))
			found = i;
	}
	return found;
}

/* The mapping of the file of origin @idx, written when first used. */
static __u64 mapping_id(struct pprof *pp, size_t idx)
{
	const struct origin *o;
	size_t canon;
	__u64 id = pp->mapping_ids[idx];

	if (id)
		return id;
	canon = canonical(&pp->p->origins, idx);
	if (canon != idx)
		return pp->mapping_ids[idx] = mapping_id(pp, canon);
	o = &pp->p->origins.list[idx];
	/* ids 1..n: mapping 1 is that of frames of no known file */
	id = pp->mapping_ids[idx] = MAPPING_PROGRAM + 1 + idx;
	pb_uint(&pp->fn, MAPPING_ID, id);
	pb_uint(&pp->fn, MAPPING_FILENAME, cstr_id(pp, o->path));
	if (o->build_id[0])
		pb_uint(&pp->fn, MAPPING_BUILD_ID, cstr_id(pp, o->build_id));
	/* already symbolized: pprof neither looks for the file nor warns it has none */
	pb_uint(&pp->fn, MAPPING_HAS_FUNCTIONS, 1);
	if (pp->inlines)
		pb_uint(&pp->fn, MAPPING_HAS_INLINE_FRAMES, 1);
	pb_msg(&pp->mappings, PROFILE_MAPPING, &pp->fn);
	return id;
}

/* The mapping of the frame @name (@len bytes) of the current sample's process. */
static __u64 mapping_of(struct pprof *pp, const char *name, size_t len)
{
	long idx = pp->mapping_ids ? origins__find(&pp->p->origins, pp->pid, name, len) : -ENOENT;

	pp->last_ambiguous = idx == -EEXIST;
	return idx < 0 ? MAPPING_NONE : mapping_id(pp, idx);
}

/*
 * The location of the frames @s (@len bytes, ';'-joined): a function and
 * the calls inlined into it, innermost last. Its lines go innermost first.
 */
static __u64 location_id(struct pprof *pp, const char *s, size_t len)
{
	__u64 id = 0, next = strmap__nr(pp->location_ids) + 1;
	__u64 mapping = mapping_of(pp, s, (const char *)(memchr(s, ';', len) ?: s + len) - s);
	const char *end = s + len;
	int ret;

	/* one location per mapping and frames: "main" is every program's */
	if (pp->cap_key < sizeof(mapping) + len) {
		char *k = realloc(pp->key, 2 * (sizeof(mapping) + len));

		if (!k) {
			pp->err = -ENOMEM;
			return 0;
		}
		pp->key = k;
		pp->cap_key = 2 * (sizeof(mapping) + len);
	}
	memcpy(pp->key, &mapping, sizeof(mapping));
	memcpy(pp->key + sizeof(mapping), s, len);
	ret = strmap__intern(pp->location_ids, pp->key, sizeof(mapping) + len, next, &id);
	if (ret < 0)
		pp->err = ret;
	if (ret != 1)
		return id;
	pp->ambiguous += pp->last_ambiguous;
	pb_uint(&pp->loc, LOCATION_ID, id);
	pb_uint(&pp->loc, LOCATION_MAPPING_ID, mapping);
	while (end > s) {
		const char *semi = memrchr(s, ';', end - s), *name = semi ? semi + 1 : s;
		__u64 fid = function_id(pp, name, end - name);

		pb_uint(&pp->loc_line, LINE_FUNCTION_ID, fid);
		pb_msg(&pp->loc, LOCATION_LINE, &pp->loc_line);
		end = semi ? semi : s;
	}
	pb_msg(&pp->locations, PROFILE_LOCATION, &pp->loc);
	return id;
}

static int push_location(struct pprof *pp, __u64 id)
{
	if (array_reserve(&pp->stack, &pp->cap_stack, pp->nr_stack, sizeof(*pp->stack), 256))
		return -ENOMEM;
	pp->stack[pp->nr_stack++] = id;
	return 0;
}

/*
 * The locations of @body (@len bytes), root first, into pp->stack: each
 * frame with the frames inlined into it, which follow it, as one.
 */
static int body_locations(struct pprof *pp, const char *body, size_t len)
{
	const char *p = body, *end = body + len;

	while (p < end) {
		const char *start = p, *stop;
		int err;

		do {
			const char *semi = memchr(p, ';', end - p);

			stop = semi ? semi : end;
			p = semi ? semi + 1 : end;
		} while (p < end && inlined(p, (const char *)(memchr(p, ';', end - p) ?: end) - p));
		err = push_location(pp, location_id(pp, start, stop - start));
		if (err)
			return err;
	}
	return 0;
}

static void label_str(struct pprof *pp, const char *key, const char *s, size_t len)
{
	pb_uint(&pp->label, LABEL_KEY, cstr_id(pp, key));
	pb_uint(&pp->label, LABEL_STR, str_id(pp, s, len));
	pb_msg(&pp->sample, SAMPLE_LABEL, &pp->label);
}

static void label_num(struct pprof *pp, const char *key, __u64 v)
{
	pb_uint(&pp->label, LABEL_KEY, cstr_id(pp, key));
	pb_uint(&pp->label, LABEL_NUM, v);
	pb_msg(&pp->sample, SAMPLE_LABEL, &pp->label);
}

static const char *state_of(enum rec_kind k)
{
	static const char *const states[REC_KIND_CNT] = {
		[REC_ON_CPU] = "on-cpu", [REC_SLEEP] = "sleep", [REC_DISK] = "disk",
		[REC_RUNQ] = "runqueue", [REC_OFF] = "off-cpu", [REC_STEAL] = "steal",
		[REC_THROTTLED] = "throttled", [REC_OTHER] = "unknown",
	};

	return states[k];
}

static int add_sample(const char *line, __u64 weight, __u64 count, __u64 max, void *ctx)
{
	struct pprof *pp = ctx;
	const struct thread_acct *t;
	struct rec_line rl;
	__u64 ns = weight * 1000;
	int err;

	if (rec_line__split(line, pp->tag_leaf, pp->ids, &rl))
		return -EINVAL;
	pp->pid = pp->ids ? rl.pid : ORIGIN_ANY_PID;
	pp->nr_stack = 0;
	err = rl.body.len ? body_locations(pp, rl.body.s, rl.body.len) :
			    push_location(pp, location_id(pp, "[no stack]", 10));
	if (err)
		return err;
	/* location ids go leaf first */
	for (size_t i = pp->nr_stack; i-- > 0;)
		pb_varint(&pp->packed, pp->stack[i]);
	pb_msg(&pp->sample, SAMPLE_LOCATION_ID, &pp->packed);
	pb_varint(&pp->packed, ns);
	/* wall = oncpu + offcpu + steal */
	pb_varint(&pp->packed, rl.kind == REC_ON_CPU ? ns : 0);
	pb_varint(&pp->packed, rl.kind == REC_ON_CPU || rl.kind == REC_STEAL ? 0 : ns);
	pb_varint(&pp->packed, rl.kind == REC_STEAL ? ns : 0);
	pb_msg(&pp->sample, SAMPLE_VALUE, &pp->packed);
	label_str(pp, "state", state_of(rl.kind), strlen(state_of(rl.kind)));
	label_str(pp, "thread", rl.comm.s, rl.comm.len);
	t = pp->ids ? rec_info__thread_of(pp->p, rl.pid, rl.tid) : NULL;
	if (t && t->pcomm[0])
		label_str(pp, "process", t->pcomm, strlen(t->pcomm));
	if (pp->ids) {
		label_num(pp, "pid", rl.pid);
		label_num(pp, "tid", rl.tid);
	}
	pb_msg(&pp->samples, PROFILE_SAMPLE, &pp->sample);
	return pp->err;
}

static void value_type(struct pprof *pp, struct bytebuf *out, int field, const char *type,
		       const char *unit)
{
	pb_uint(&pp->label, VALUE_TYPE_TYPE, cstr_id(pp, type));
	pb_uint(&pp->label, VALUE_TYPE_UNIT, cstr_id(pp, unit));
	pb_msg(out, field, &pp->label);
}

int pprof__write_recording(const struct recording *r, FILE *f)
{
	const struct rec_info *ri = &r->info;
	struct pprof pp = { .p = &r->prof, .tag_leaf = r->tag_leaf, .ids = r->ids,
			    .inlines = r->inlines };
	struct bytebuf head = {}, all = {};
	char comment[700];
	long main;
	int err;

	pp.string_ids = strmap__new();
	pp.function_ids = strmap__new();
	pp.location_ids = strmap__new();
	if (r->prof.origins.nr)
		pp.mapping_ids = calloc(r->prof.origins.nr, sizeof(*pp.mapping_ids));
	if (!pp.string_ids || !pp.function_ids || !pp.location_ids ||
	    (r->prof.origins.nr && !pp.mapping_ids)) {
		err = -ENOMEM;
		goto out;
	}
	cstr_id(&pp, ""); /* string 0 is always "" */
	value_type(&pp, &head, PROFILE_SAMPLE_TYPE, "wall", "nanoseconds");
	value_type(&pp, &head, PROFILE_SAMPLE_TYPE, "oncpu", "nanoseconds");
	value_type(&pp, &head, PROFILE_SAMPLE_TYPE, "offcpu", "nanoseconds");
	value_type(&pp, &head, PROFILE_SAMPLE_TYPE, "steal", "nanoseconds");
	/*
	 * The first mapping, the main binary's to pprof: the program's file
	 * when a frame of it was recorded, else its name; already symbolized
	 * (has_functions).
	 */
	main = pp.mapping_ids ? program_origin(&r->prof.origins, ri->program) : -1;
	pb_uint(&pp.fn, MAPPING_ID, MAPPING_PROGRAM);
	if (main >= 0) {
		pp.mapping_ids[main] = MAPPING_PROGRAM;
		pb_uint(&pp.fn, MAPPING_FILENAME, cstr_id(&pp, r->prof.origins.list[main].path));
		if (r->prof.origins.list[main].build_id[0])
			pb_uint(&pp.fn, MAPPING_BUILD_ID,
				cstr_id(&pp, r->prof.origins.list[main].build_id));
	} else {
		pb_uint(&pp.fn, MAPPING_FILENAME,
			cstr_id(&pp, ri->program[0] ? ri->program : "wprof"));
	}
	pb_uint(&pp.fn, MAPPING_HAS_FUNCTIONS, 1);
	if (r->inlines)
		pb_uint(&pp.fn, MAPPING_HAS_INLINE_FRAMES, 1);
	pb_msg(&head, PROFILE_MAPPING, &pp.fn);
	err = folded__for_each(r->lines, add_sample, &pp);
	if (err)
		goto out;
	pb_uint(&head, PROFILE_TIME_NANOS, ri->start_ns);
	pb_uint(&head, PROFILE_DURATION_NANOS, ri->window_ns);
	value_type(&pp, &head, PROFILE_PERIOD_TYPE, "cpu", "nanoseconds");
	pb_uint(&head, PROFILE_PERIOD, ri->period_ns);
	snprintf(comment, sizeof(comment), "wprof: wall-clock time of %s", ri->target);
	pb_uint(&head, PROFILE_COMMENT, cstr_id(&pp, comment));
	snprintf(comment, sizeof(comment), "on-CPU time from the scheduler's switches, split "
		 "across stacks by samples at %llu Hz; off-CPU time from every switch",
		 (unsigned long long)ri->freq_hz);
	pb_uint(&head, PROFILE_COMMENT, cstr_id(&pp, comment));
	if (pp.ambiguous) {
		snprintf(comment, sizeof(comment), "%llu locations have a function name that two "
			 "files of one process have: they have no mapping, as frames of no known file",
			 (unsigned long long)pp.ambiguous);
		pb_uint(&head, PROFILE_COMMENT, cstr_id(&pp, comment));
	}
	pb_uint(&head, PROFILE_DEFAULT_SAMPLE_TYPE, cstr_id(&pp, "wall"));
	err = pp.err;
	if (err)
		goto out;
	pb_put(&all, head.p, head.len);
	pb_put(&all, pp.mappings.p, pp.mappings.len);
	pb_put(&all, pp.samples.p, pp.samples.len);
	pb_put(&all, pp.locations.p, pp.locations.len);
	pb_put(&all, pp.functions.p, pp.functions.len);
	pb_put(&all, pp.strings.p, pp.strings.len);
	/* a sub-message's oom reached its parent in pb_msg() */
	if (all.oom || head.oom || pp.samples.oom || pp.locations.oom || pp.functions.oom ||
	    pp.strings.oom || pp.mappings.oom) {
		err = -ENOMEM;
		goto out;
	}
	err = gzip__write(all.p, all.len, f);
out:
	free(head.p);
	free(all.p);
	free(pp.samples.p);
	free(pp.locations.p);
	free(pp.functions.p);
	free(pp.strings.p);
	free(pp.mappings.p);
	free(pp.mapping_ids);
	free(pp.key);
	free(pp.safe);
	free(pp.fn.p);
	free(pp.loc.p);
	free(pp.loc_line.p);
	free(pp.sample.p);
	free(pp.label.p);
	free(pp.packed.p);
	free(pp.stack);
	strmap__free(pp.string_ids);
	strmap__free(pp.function_ids);
	strmap__free(pp.location_ids);
	return err;
}
