// SPDX-License-Identifier: GPL-2.0-only
/*
 * Unit tests of src/pprof.c: the file is gunzipped and decoded here with a
 * protobuf reader of its own (written from profile.proto, not from the
 * writer), and every field go tool pprof reads is checked: sample types and
 * the default one, values that add up to the lines' weights in ns, labels,
 * locations leaf first with inlined calls as lines of their caller's
 * location, functions, the string table, the window and period.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "origins.h"
#include "pprof.h"
#include "unit.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define MAX 64

struct span {
	const unsigned char *p;
	size_t len;
};

struct label {
	__u64 key, str, num;
};

struct sample {
	__u64 locs[MAX], values[MAX];
	size_t nr_locs, nr_values;
	struct label labels[MAX];
	size_t nr_labels;
};

struct location {
	__u64 id, mapping, funcs[MAX];
	size_t nr_funcs;
};

struct prof {
	struct span strings[256];
	size_t nr_strings;
	__u64 sample_types[8][2];
	size_t nr_sample_types;
	struct sample samples[16];
	size_t nr_samples;
	struct location locs[32];
	size_t nr_locs;
	__u64 funcs[32][3]; /* id, name, system_name */
	size_t nr_funcs;
	size_t nr_mappings;
	__u64 mapping_has_functions, mapping_file;
	__u64 mappings[8][3]; /* id, filename, build_id */
	__u64 time_nanos, duration_nanos, period, period_type[2], default_sample_type;
	int bad; /* a field this reader did not expect, or a truncated message */
};

static __u64 varint(struct span *s, int *bad)
{
	__u64 v = 0;

	for (int shift = 0; shift < 64; shift += 7) {
		if (!s->len) {
			*bad = 1;
			return 0;
		}
		v |= (__u64)(s->p[0] & 0x7f) << shift;
		s->len--;
		if (!(*s->p++ & 0x80))
			return v;
	}
	*bad = 1;
	return v;
}

/* The next field of @s: its number, and its value (varint) or bytes (length-delimited). */
static int field(struct span *s, __u64 *v, struct span *bytes, int *bad)
{
	__u64 key = varint(s, bad);

	if (*bad)
		return -1;
	if ((key & 7) == 0) {
		*v = varint(s, bad);
	} else if ((key & 7) == 2) {
		__u64 len = varint(s, bad);

		if (len > s->len) {
			*bad = 1;
			return -1;
		}
		bytes->p = s->p;
		bytes->len = len;
		s->p += len;
		s->len -= len;
	} else {
		*bad = 1;
		return -1;
	}
	return key >> 3;
}

/* A repeated varint field: packed (bytes) or one value. */
static void repeated(__u64 *out, size_t *nr, __u64 v, struct span b, bool packed, int *bad)
{
	if (!packed) {
		if (*nr < MAX)
			out[(*nr)++] = v;
		return;
	}
	while (b.len && *nr < MAX)
		out[(*nr)++] = varint(&b, bad);
}

/* A ValueType: type and unit, string indices. */
static void value_type(struct span b, __u64 out[2], int *bad)
{
	struct span c;
	__u64 v;
	int f;

	while (b.len && (f = field(&b, &v, &c, bad)) > 0)
		if (f == 1 || f == 2)
			out[f - 1] = v;
}

static void sample(struct span b, struct sample *smp, int *bad)
{
	struct span c, d;
	__u64 v, w;
	int f, g;

	while (b.len) {
		const unsigned char *at = b.p;
		bool packed;

		f = field(&b, &v, &c, bad);
		if (f <= 0)
			break;
		packed = (*at & 7) == 2; /* the key's wire type: both forms are valid */
		if (f == 1)
			repeated(smp->locs, &smp->nr_locs, v, c, packed, bad);
		else if (f == 2)
			repeated(smp->values, &smp->nr_values, v, c, packed, bad);
		else if (f == 3 && smp->nr_labels < MAX) {
			struct label *l = &smp->labels[smp->nr_labels++];

			while (c.len && (g = field(&c, &w, &d, bad)) > 0)
				if (g == 1)
					l->key = w;
				else if (g == 2)
					l->str = w;
				else if (g == 3)
					l->num = w;
		}
	}
}

static void location(struct span b, struct location *loc, int *bad)
{
	struct span c, d;
	__u64 v, w;
	int f, g;

	while (b.len && (f = field(&b, &v, &c, bad)) > 0) {
		if (f == 1)
			loc->id = v;
		else if (f == 2)
			loc->mapping = v;
		else if (f == 4)
			while (c.len && (g = field(&c, &w, &d, bad)) > 0)
				if (g == 1 && loc->nr_funcs < MAX)
					loc->funcs[loc->nr_funcs++] = w;
	}
}

static void decode(struct prof *pr, struct span s)
{
	struct span b = {}, c;
	__u64 v = 0;
	int f;

	while (s.len && (f = field(&s, &v, &b, &pr->bad)) > 0) {
		switch (f) {
		case 1:
			if (pr->nr_sample_types < 8)
				value_type(b, pr->sample_types[pr->nr_sample_types++], &pr->bad);
			break;
		case 2:
			if (pr->nr_samples < 16)
				sample(b, &pr->samples[pr->nr_samples++], &pr->bad);
			break;
		case 3:
			pr->nr_mappings++;
			while (b.len && (f = field(&b, &v, &c, &pr->bad)) > 0) {
				if (pr->nr_mappings <= 8 && (f == 1 || f == 5 || f == 6))
					pr->mappings[pr->nr_mappings - 1][f == 1 ? 0 : f - 4] = v;
				if (pr->nr_mappings > 1)
					continue;
				if (f == 5)
					pr->mapping_file = v;
				else if (f == 7)
					pr->mapping_has_functions = v;
			}
			break;
		case 4:
			if (pr->nr_locs < 32)
				location(b, &pr->locs[pr->nr_locs++], &pr->bad);
			break;
		case 5:
			if (pr->nr_funcs < 32) {
				__u64 *fn = pr->funcs[pr->nr_funcs++];

				while (b.len && (f = field(&b, &v, &c, &pr->bad)) > 0)
					if (f >= 1 && f <= 3)
						fn[f - 1] = v;
			}
			break;
		case 6:
			if (pr->nr_strings < 256)
				pr->strings[pr->nr_strings++] = b;
			break;
		case 9:
			pr->time_nanos = v;
			break;
		case 10:
			pr->duration_nanos = v;
			break;
		case 11:
			value_type(b, pr->period_type, &pr->bad);
			break;
		case 12:
			pr->period = v;
			break;
		case 14:
			pr->default_sample_type = v;
			break;
		}
	}
}

/* String @i of the table, as a C string (static buffer), "?" when out of range. */
static const char *str(const struct prof *pr, __u64 i)
{
	static char buf[4][256];
	static int n;
	char *out = buf[n++ % 4];

	if (i >= pr->nr_strings)
		return "?";
	snprintf(out, 256, "%.*s", (int)pr->strings[i].len, (const char *)pr->strings[i].p);
	return out;
}

static const struct location *loc_of(const struct prof *pr, __u64 id)
{
	for (size_t i = 0; i < pr->nr_locs; i++)
		if (pr->locs[i].id == id)
			return &pr->locs[i];
	return NULL;
}

static const char *func_name(const struct prof *pr, __u64 id)
{
	for (size_t i = 0; i < pr->nr_funcs; i++)
		if (pr->funcs[i][0] == id)
			return str(pr, pr->funcs[i][1]);
	return "?";
}

/* A sample's stack as "leaf|inlined,caller|...": locations by '|', their lines by ','. */
static void stack_of(const struct prof *pr, const struct sample *s, char *out, size_t size)
{
	out[0] = '\0';
	for (size_t i = 0; i < s->nr_locs; i++) {
		const struct location *l = loc_of(pr, s->locs[i]);

		snprintf(out + strlen(out), size - strlen(out), "%s", i ? "|" : "");
		for (size_t k = 0; l && k < l->nr_funcs; k++)
			snprintf(out + strlen(out), size - strlen(out), "%s%s", k ? "," : "",
				 func_name(pr, l->funcs[k]));
	}
}

/* The value of label @key of @s: its string, or its number printed. */
static const char *label(const struct prof *pr, const struct sample *s, const char *key)
{
	static char num[32];

	for (size_t i = 0; i < s->nr_labels; i++) {
		if (strcmp(str(pr, s->labels[i].key), key))
			continue;
		if (s->labels[i].str)
			return str(pr, s->labels[i].str);
		snprintf(num, sizeof(num), "%llu", (unsigned long long)s->labels[i].num);
		return num;
	}
	return "(none)";
}

static struct folded *lines_of(const char *const *lines, size_t n)
{
	struct folded *f = folded__new();

	for (size_t i = 0; f && i < n; i++) {
		char buf[512], *frames[64], *p, *sp;
		size_t nr = 0;

		snprintf(buf, sizeof(buf), "%s", lines[i]);
		sp = strrchr(buf, ' ');
		*sp = '\0';
		for (p = buf; nr < 64; p++) {
			frames[nr++] = p;
			p = strchr(p, ';');
			if (!p)
				break;
			*p = '\0';
		}
		if (folded__add(f, (const char *const *)frames, nr, strtoull(sp + 1, NULL, 10)))
			return NULL;
	}
	return f;
}

/* Write @lines as pprof and decode the result into @pr; 0 or -errno. */
static int roundtrip_with(const char *const *lines, size_t n, bool tag_leaf,
			  const struct origins *origins, struct prof *pr, unsigned char **raw)
{
	/* sorted by tid, then start_id: tid 101 was reused by a thread of pid 300 */
	struct thread_acct th[3] = {
		{ .pid = 100, .tid = 101, .comm = "work", .pcomm = "app", .selected = true },
		{ .pid = 300, .tid = 101, .start_id = 1, .comm = "late", .pcomm = "later",
		  .selected = true },
		{ .pid = 100, .tid = 102, .comm = "pool", .pcomm = "app", .selected = true },
	};
	struct profile p = { .threads = th, .nr_threads = 3, .window_ns = 2000000000,
			     .period_ns = 10101010 };
	struct recording r = { .tag_leaf = tag_leaf, .ids = true, .inlines = true, .prof = p };
	struct rec_info ri = { .target = "pid 100 (app)", .program = "app",
			       .start_ns = 1700000000123456789ULL, .window_ns = 2000000000,
			       .period_ns = 10101010, .freq_hz = 99 };
	struct folded *f = lines_of(lines, n);
	char *gz = NULL;
	size_t gz_len = 0;
	FILE *out = open_memstream(&gz, &gz_len);
	z_stream z = {};
	size_t cap = 1 << 20;
	int err;

	r.info = ri;
	r.lines = f;
	if (origins)
		r.prof.origins = *origins;
	memset(pr, 0, sizeof(*pr));
	*raw = malloc(cap);
	err = f && out && *raw ? pprof__write_recording(&r, out) : -ENOMEM;
	if (out)
		fclose(out);
	folded__free(f);
	if (err) {
		free(gz);
		return err;
	}
	CHECK(gz_len > 2 && (unsigned char)gz[0] == 0x1f && (unsigned char)gz[1] == 0x8b,
	      "the file is gzip (magic 1f 8b)");
	inflateInit2(&z, 15 + 16);
	z.next_in = (unsigned char *)gz;
	z.avail_in = gz_len;
	z.next_out = *raw;
	z.avail_out = cap;
	err = inflate(&z, Z_FINISH) == Z_STREAM_END ? 0 : -EINVAL;
	CHECK_EQ_S64(err, 0, "it gunzips to its end");
	decode(pr, (struct span){ *raw, z.total_out });
	inflateEnd(&z);
	free(gz);
	return err;
}

static int roundtrip(const char *const *lines, size_t n, bool tag_leaf, struct prof *pr,
		     unsigned char **raw)
{
	return roundtrip_with(lines, n, tag_leaf, NULL, pr, raw);
}

static void test_profile(void)
{
	static const char *const lines[] = {
		"on-cpu;100;101;work;main;outer;inl_[i];leaf 300",
		"on-cpu;100;101;work;main;outer;inl_[i];leaf2 5",
		"off-cpu:sleep;100;101;work;main;nap 600",
		"off-cpu:runqueue;100;102;pool;[no stack] 50",
		"steal;100;101;work;main;outer;inl_[i];leaf 7",
	};
	unsigned char *raw = NULL;
	struct prof *pr = calloc(1, sizeof(*pr));
	__u64 sum[4] = {};
	char stack[512];
	const struct sample *on = NULL, *sl = NULL, *rq = NULL, *st = NULL;

	if (!pr || roundtrip(lines, ARRAY_SIZE(lines), false, pr, &raw)) {
		CHECK(false, "write and read back a profile");
		goto out;
	}
	CHECK(!pr->bad, "every field decodes (varint or length-delimited, none truncated)");
	CHECK(pr->nr_strings > 0 && pr->strings[0].len == 0, "string 0 is the empty string");
	CHECK_EQ_U64(pr->nr_sample_types, 4, "four sample types");
	CHECK_STREQ(str(pr, pr->sample_types[0][0]), "wall", "sample type 0: wall");
	CHECK_STREQ(str(pr, pr->sample_types[1][0]), "oncpu", "sample type 1: oncpu");
	CHECK_STREQ(str(pr, pr->sample_types[2][0]), "offcpu", "sample type 2: offcpu");
	CHECK_STREQ(str(pr, pr->sample_types[3][0]), "steal", "sample type 3: steal");
	for (int i = 0; i < 4; i++)
		CHECK_STREQ(str(pr, pr->sample_types[i][1]), "nanoseconds", "sample type %d in ns", i);
	CHECK_STREQ(str(pr, pr->default_sample_type), "wall", "wall is the default sample type");
	CHECK_EQ_U64(pr->nr_samples, 5, "one sample a line");
	for (size_t i = 0; i < pr->nr_samples; i++) {
		const struct sample *s = &pr->samples[i];

		CHECK_EQ_U64(s->nr_values, 4, "sample %zu: four values", i);
		for (int k = 0; k < 4 && s->nr_values == 4; k++)
			sum[k] += s->values[k];
		CHECK_EQ_U64(s->values[0], s->values[1] + s->values[2] + s->values[3],
			     "sample %zu: wall = on + off + steal", i);
		if (!strcmp(label(pr, s, "state"), "steal"))
			st = s;
		if (!strcmp(label(pr, s, "state"), "on-cpu") && s->values[0] == 300000)
			on = s;
		if (!strcmp(label(pr, s, "state"), "sleep"))
			sl = s;
		if (!strcmp(label(pr, s, "state"), "runqueue"))
			rq = s;
	}
	CHECK_EQ_U64(sum[0], 962000, "wall values add up to the lines' weights, in ns");
	CHECK_EQ_U64(sum[1], 305000, "oncpu values: the on-cpu lines'");
	CHECK_EQ_U64(sum[2], 650000, "offcpu values: the off-cpu lines'");
	CHECK_EQ_U64(sum[3], 7000, "steal values: the steal line's");
	CHECK(st && st->values[0] == 7000, "the steal line is a sample labelled state=steal");
	if (CHECK(on && sl && rq, "the on-cpu, sleep and runqueue samples")) {
		stack_of(pr, on, stack, sizeof(stack));
		CHECK_STREQ(stack, "leaf|inl,outer|main",
			    "locations leaf first; an inlined call is a line of its caller's location");
		CHECK_STREQ(label(pr, on, "thread"), "work", "label thread");
		CHECK_STREQ(label(pr, on, "process"), "app", "label process");
		CHECK_STREQ(label(pr, on, "pid"), "100", "label pid (a number)");
		CHECK_STREQ(label(pr, on, "tid"), "101", "label tid (a number)");
		CHECK_EQ_U64(sl->values[2], 600000, "the sleep sample is off-CPU time");
		stack_of(pr, rq, stack, sizeof(stack));
		CHECK_STREQ(stack, "[no stack]", "a line without frames keeps its [no stack] frame");
		CHECK_STREQ(label(pr, rq, "thread"), "pool", "the runqueue sample's thread");
	}
	CHECK_EQ_U64(pr->nr_funcs, 7, "one function a name: leaf, leaf2, inl, outer, main, nap, "
		     "[no stack]");
	CHECK_EQ_U64(pr->nr_mappings, 1, "one mapping");
	CHECK(pr->mapping_has_functions == 1 && !strcmp(str(pr, pr->mapping_file), "app"),
	      "the mapping is the program, marked symbolized");
	for (size_t i = 0; i < pr->nr_locs; i++)
		CHECK(pr->locs[i].id == i + 1 && pr->locs[i].mapping == 0,
		      "location %zu: id %zu, no mapping (no file known)", i, i + 1);
	CHECK_EQ_U64(pr->time_nanos, 1700000000123456789ULL, "time_nanos: the window's start");
	CHECK_EQ_U64(pr->duration_nanos, 2000000000, "duration_nanos: the window");
	CHECK_EQ_U64(pr->period, 10101010, "period: the sampling period");
	CHECK_STREQ(str(pr, pr->period_type[0]), "cpu", "period type cpu");
	CHECK_STREQ(str(pr, pr->period_type[1]), "nanoseconds", "period unit ns");
out:
	free(raw);
	free(pr);
}

static void test_tag_leaf(void)
{
	static const char *const lines[] = {
		"100;101;work;main;burn;on-cpu 300",
		"100;101;work;main;burn;off-cpu 70",
	};
	unsigned char *raw = NULL;
	struct prof *pr = calloc(1, sizeof(*pr));
	char stack[256];

	if (!pr || roundtrip(lines, ARRAY_SIZE(lines), true, pr, &raw)) {
		CHECK(false, "write and read back a profile, tag at the leaf");
		goto out;
	}
	CHECK_EQ_U64(pr->nr_samples, 2, "tag at the leaf: two samples");
	for (size_t i = 0; i < pr->nr_samples; i++) {
		const struct sample *s = &pr->samples[i];
		bool on = !strcmp(label(pr, s, "state"), "on-cpu");

		stack_of(pr, s, stack, sizeof(stack));
		CHECK_STREQ(stack, "burn|main", "tag at the leaf: the tag is no frame");
		CHECK(on ? s->values[1] == 300000 : s->values[2] == 70000 &&
			   !strcmp(label(pr, s, "state"), "off-cpu"),
		      "tag at the leaf: the state from the last frame (--no-states: off-cpu)");
	}
out:
	free(raw);
	free(pr);
}

/* The file name and build-id of mapping @id, as "file@build-id". */
static const char *mapping_of(const struct prof *pr, __u64 id)
{
	static char out[256];

	out[0] = '\0';
	for (size_t i = 0; i < pr->nr_mappings && i < 8; i++) {
		if (pr->mappings[i][0] != id)
			continue;
		snprintf(out, sizeof(out), "%s@", str(pr, pr->mappings[i][1]));
		snprintf(out + strlen(out), sizeof(out) - strlen(out), "%s",
			 str(pr, pr->mappings[i][2]));
	}
	return out;
}

/* The mapping of the location of @s whose (first) function is @fn. */
static const char *mapping_at(const struct prof *pr, const struct sample *s, const char *fn)
{
	for (size_t i = 0; i < s->nr_locs; i++) {
		const struct location *l = loc_of(pr, s->locs[i]);

		if (l && l->nr_funcs && !strcmp(func_name(pr, l->funcs[l->nr_funcs - 1]), fn))
			return mapping_of(pr, l->mapping);
	}
	return "(no such location)";
}

static void test_mappings(void)
{
	static const char *const lines[] = {
		"on-cpu;100;101;work;main;leaf;twice;schedule_[k] 10",
		"on-cpu;200;201;other;main;leaf;unknown 20",
		"on-cpu;300;101;late;main 5",
	};
	struct origins o = {};
	unsigned char *raw = NULL;
	struct prof *pr = calloc(1, sizeof(*pr));
	long app = origins__add(&o, "/srv/app", "aa01"), tool = origins__add(&o, "/bin/tool", ""),
	     libc = origins__add(&o, "/lib/libc.so.6", "cc03"),
	     kernel = origins__add(&o, "[kernel.kallsyms]", "dd04");
	const struct sample *s100 = NULL, *s200 = NULL, *s300 = NULL;
	int err = 0;

	CHECK(app == 0 && tool == 1 && libc == 2 && kernel == 3, "origins get indexes in order");
	CHECK_EQ_S64(origins__add(&o, "/lib/libc.so.6", "cc03"), libc, "an origin added twice is one");
	err |= origins__note(&o, 100, "main", 4, app);
	err |= origins__note(&o, 200, "main", 4, tool);
	err |= origins__note(&o, 100, "leaf", 4, libc);
	err |= origins__note(&o, 200, "leaf", 4, libc);
	err |= origins__note(&o, 100, "twice", 5, app);
	err |= origins__note(&o, 100, "twice", 5, libc);
	err |= origins__note(&o, ORIGIN_ANY_PID, "schedule_[k]", 12, kernel);
	CHECK_EQ_S64(err, 0, "frames noted");
	CHECK_EQ_S64(origins__find(&o, 100, "main", 4), app, "main of 100: the app's");
	CHECK_EQ_S64(origins__find(&o, 200, "main", 4), tool, "main of 200: the tool's");
	CHECK_EQ_S64(origins__find(&o, 300, "main", 4), -EEXIST,
		     "main of a process not noted: any process's, which two files have");
	CHECK_EQ_S64(origins__find(&o, 300, "leaf", 4), libc, "leaf of any process: libc's");
	CHECK_EQ_S64(origins__find(&o, 100, "twice", 5), -EEXIST, "a name of two files: none");
	CHECK_EQ_S64(origins__find(&o, 100, "unknown", 7), -ENOENT, "a name never noted: none");
	CHECK_EQ_S64(origins__put(&o, 100, "main", 4, app), -EINVAL, "an entry twice is refused");
	CHECK_EQ_S64(origins__put(&o, 100, "other", 5, 4), -EINVAL,
		     "an entry of an origin out of range is refused");
	if (!pr || roundtrip_with(lines, ARRAY_SIZE(lines), false, &o, pr, &raw)) {
		CHECK(false, "write and read back a profile with origins");
		goto out;
	}
	CHECK(!pr->bad, "every field decodes");
	for (size_t i = 0; i < pr->nr_samples; i++) {
		if (!strcmp(label(pr, &pr->samples[i], "pid"), "100"))
			s100 = &pr->samples[i];
		if (!strcmp(label(pr, &pr->samples[i], "pid"), "200"))
			s200 = &pr->samples[i];
		if (!strcmp(label(pr, &pr->samples[i], "pid"), "300"))
			s300 = &pr->samples[i];
	}
	if (!CHECK(s100 && s200 && s300, "a sample of each process"))
		goto out;
	CHECK_STREQ(label(pr, s100, "process"), "app", "tid 101 of pid 100: process app");
	CHECK_STREQ(label(pr, s300, "process"), "later",
		    "tid 101 reused by pid 300: the process of that pid's thread");
	CHECK_STREQ(mapping_of(pr, 1), "/srv/app@aa01",
		    "mapping 1: the program's file, with its build id, also for frames of no file");
	CHECK_STREQ(mapping_at(pr, s100, "main"), "/srv/app@aa01", "main of 100: the app's mapping");
	CHECK_STREQ(mapping_at(pr, s200, "main"), "/bin/tool@",
		    "main of 200: the tool's mapping (no build-id)");
	CHECK_STREQ(mapping_at(pr, s100, "leaf"), "/lib/libc.so.6@cc03", "leaf: libc's mapping");
	CHECK(s100->locs[s100->nr_locs - 2] == s200->locs[s200->nr_locs - 2],
	      "leaf of both processes: one location");
	CHECK(s100->locs[s100->nr_locs - 1] != s200->locs[s200->nr_locs - 1],
	      "main of the two processes: two locations");
	CHECK_STREQ(mapping_at(pr, s100, "twice"), "", "a name of two files: no mapping");
	CHECK_STREQ(mapping_at(pr, s200, "unknown"), "", "a name of no file: no mapping");
	CHECK_STREQ(mapping_at(pr, s100, "schedule_[k]"), "[kernel.kallsyms]@dd04",
		    "a kernel frame: the kernel's mapping");
	CHECK_EQ_U64(pr->nr_mappings, 4,
		     "mapping 1 (the app's) and one a file used: the app's file is not twice");
	/* libc named again without its build id (read once, not another time): one file */
	origins__clear(&o);
	free(raw);
	raw = NULL;
	memset(pr, 0, sizeof(*pr));
	app = origins__add(&o, "/srv/app", "");
	libc = origins__add(&o, "/lib/libc.so.6", "cc03");
	tool = origins__add(&o, "/srv/app", "aa01");
	CHECK(app == 0 && libc == 1 && tool == 2, "the app twice, once without its build id");
	err = origins__note(&o, 100, "main", 4, app) | origins__note(&o, 200, "main", 4, tool) |
	      origins__note(&o, ORIGIN_ANY_PID, "leaf", 4, libc);
	CHECK_EQ_S64(err, 0, "frames noted");
	if (roundtrip_with(lines, ARRAY_SIZE(lines), false, &o, pr, &raw)) {
		CHECK(false, "write and read back a profile with the app twice");
		goto out;
	}
	for (size_t i = 0; i < pr->nr_samples; i++) {
		if (!strcmp(label(pr, &pr->samples[i], "pid"), "100"))
			s100 = &pr->samples[i];
		if (!strcmp(label(pr, &pr->samples[i], "pid"), "200"))
			s200 = &pr->samples[i];
	}
	CHECK_STREQ(mapping_at(pr, s100, "main"), "/srv/app@aa01",
		    "main noted with the app without its build id: the app's one mapping");
	CHECK_STREQ(mapping_at(pr, s200, "main"), "/srv/app@aa01", "and with it: the same");
	CHECK_EQ_U64(pr->nr_mappings, 2, "mapping 1, the app's, and libc's: one per file");
out:
	origins__clear(&o);
	free(raw);
	free(pr);
}

int main(void)
{
	test_profile();
	test_tag_leaf();
	test_mappings();
	return unit_done();
}
