// SPDX-License-Identifier: GPL-2.0-only
/* Which file each frame came from, for pprof's mappings: see origins.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "origins.h"
#include "strmap.h"
#include "util.h"

void origins__clear(struct origins *o)
{
	for (size_t i = 0; i < o->nr; i++) {
		free(o->list[i].path);
		free(o->list[i].build_id);
	}
	for (size_t i = 0; i < o->nr_frames; i++)
		free(o->frames[i].name);
	free(o->list);
	free(o->frames);
	strmap__free(o->origin_ids);
	strmap__free(o->frame_ids);
	memset(o, 0, sizeof(*o));
}

/* Big enough for most keys: those longer are malloc'd. */
#define KEY_BUF 1024

/*
 * @a, then a NUL, then @b (@blen bytes): a key of *@len bytes, in @buf
 * (KEY_BUF bytes) when it fits, else malloc'd (free it when it is not @buf).
 * NULL on ENOMEM.
 */
static char *join_key(char *buf, const void *a, size_t alen, const void *b, size_t blen,
		      size_t *len)
{
	char *k = alen + 1 + blen <= KEY_BUF ? buf : malloc(alen + 1 + blen);

	if (!k)
		return NULL;
	memcpy(k, a, alen);
	k[alen] = '\0';
	memcpy(k + alen + 1, b, blen);
	*len = alen + 1 + blen;
	return k;
}

static void free_key(char *key, const char *buf)
{
	if (key != buf)
		free(key);
}

long origins__add(struct origins *o, const char *path, const char *build_id)
{
	char buf[KEY_BUF];
	size_t len;
	char *key = join_key(buf, path, strlen(path), build_id, strlen(build_id), &len);
	__u64 idx = o->nr;
	int ret = -ENOMEM;

	if (!key)
		return -ENOMEM;
	if (!o->origin_ids && !(o->origin_ids = strmap__new()))
		goto out;
	if (array_reserve(&o->list, &o->cap, o->nr, sizeof(*o->list), 16))
		goto out;
	ret = strmap__get(o->origin_ids, key, len, &idx);
	if (!ret)
		goto out;
	o->list[o->nr].path = strdup(path);
	o->list[o->nr].build_id = strdup(build_id);
	if (!o->list[o->nr].path || !o->list[o->nr].build_id) {
		free(o->list[o->nr].path);
		free(o->list[o->nr].build_id);
		ret = -ENOMEM;
		goto out;
	}
	idx = o->nr;
	ret = strmap__intern(o->origin_ids, key, len, idx, &idx);
	if (ret == 1) {
		o->nr++;
		ret = 0;
	} else {
		free(o->list[o->nr].path);
		free(o->list[o->nr].build_id);
		ret = -ENOMEM;
	}
out:
	free_key(key, buf);
	return ret < 0 ? ret : (long)idx;
}

/* The entry of (@pid, @name), or NULL. */
static struct origin_frame *find_frame(const struct origins *o, __u32 pid, const char *name,
				       size_t len)
{
	char buf[KEY_BUF], *key;
	size_t klen;
	__u64 idx;
	int ret;

	if (!o->frame_ids || !(key = join_key(buf, &pid, sizeof(pid), name, len, &klen)))
		return NULL;
	ret = strmap__get(o->frame_ids, key, klen, &idx);
	free_key(key, buf);
	return ret ? NULL : &o->frames[idx];
}

/* A new entry for (@pid, @name): -EEXIST when there is one already. */
static int add_frame(struct origins *o, __u32 pid, const char *name, size_t len, __u32 idx)
{
	char buf[KEY_BUF], *key;
	size_t klen;
	__u64 at = o->nr_frames;
	int ret = -ENOMEM;

	if (!o->frame_ids && !(o->frame_ids = strmap__new()))
		return -ENOMEM;
	if (array_reserve(&o->frames, &o->cap_frames, o->nr_frames, sizeof(*o->frames), 256))
		return -ENOMEM;
	key = join_key(buf, &pid, sizeof(pid), name, len, &klen);
	if (!key)
		return -ENOMEM;
	o->frames[at].name = strndup(name, len);
	if (o->frames[at].name)
		ret = strmap__intern(o->frame_ids, key, klen, at, &at);
	free_key(key, buf);
	if (ret != 1) {
		free(o->frames[o->nr_frames].name);
		return ret < 0 ? ret : -EEXIST;
	}
	o->frames[at].pid = pid;
	o->frames[at].origin = idx;
	o->nr_frames++;
	return 0;
}

static int note_one(struct origins *o, __u32 pid, const char *name, size_t len, __u32 idx)
{
	struct origin_frame *f = find_frame(o, pid, name, len);

	if (f) {
		if (f->origin != idx)
			f->origin = ORIGIN_AMBIGUOUS;
		return 0;
	}
	return add_frame(o, pid, name, len, idx);
}

int origins__note(struct origins *o, __u32 pid, const char *name, size_t len, __u32 idx)
{
	int err = 0;

	if (pid != ORIGIN_ANY_PID)
		err = note_one(o, pid, name, len, idx);
	return err ? err : note_one(o, ORIGIN_ANY_PID, name, len, idx);
}

int origins__put(struct origins *o, __u32 pid, const char *name, size_t len, __u32 origin)
{
	if (origin != ORIGIN_AMBIGUOUS && origin >= o->nr)
		return -EINVAL;
	if (find_frame(o, pid, name, len))
		return -EINVAL;
	return add_frame(o, pid, name, len, origin);
}

long origins__find(const struct origins *o, __u32 pid, const char *name, size_t len)
{
	const struct origin_frame *f = find_frame(o, pid, name, len);

	if (!f && pid != ORIGIN_ANY_PID)
		f = find_frame(o, ORIGIN_ANY_PID, name, len);
	if (!f)
		return -ENOENT;
	return f->origin == ORIGIN_AMBIGUOUS ? -EEXIST : (long)f->origin;
}
