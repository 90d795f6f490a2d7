// SPDX-License-Identifier: GPL-2.0-only
/* Who ran instead (bpf/ran.bpf.h): the session's `ran` map, read once it is stopped. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "session.h"
#include "session_priv.h"
#include "wprof.skel.h"

/* What each CPU had added last, not yet in the map: the same keys may come again. */
static int for_each_pend(struct session *s, session_ran_fn fn, void *ctx)
{
	int ncpu = libbpf_num_possible_cpus(), err = 0;
	struct wprof_ran_ring *rings;
	__u32 zero = 0;

	if (ncpu <= 0)
		return ncpu ? ncpu : -EINVAL;
	/* a per-CPU value is rounded up to 8 bytes per CPU: the struct's size already is */
	rings = calloc(ncpu, sizeof(*rings));
	if (!rings)
		return -ENOMEM;
	if (bpf_map_lookup_elem(bpf_map__fd(s->skel->maps.ran_rings), &zero, rings))
		err = -errno;
	for (int c = 0; c < ncpu && !err; c++) {
		for (int i = 0; i < WPROF_RAN_PEND && !err; i++) {
			const struct wprof_ran_pend *p = &rings[c].pend[i];
			struct wprof_ran_val v = { .ns = p->ns };

			if (!p->ns)
				continue;
			memcpy(v.comm, p->comm, sizeof(v.comm));
			err = fn(&p->key, &v, ctx);
		}
	}
	free(rings);
	return err;
}

int session__for_each_ran(struct session *s, session_ran_fn fn, void *ctx)
{
	struct wprof_ran_key key, next, *prev = NULL;
	struct wprof_ran_val val;
	int fd, err;

	if (!session__ran_instead(s))
		return 0;
	fd = bpf_map__fd(s->skel->maps.ran);
	while (!bpf_map_get_next_key(fd, prev, &next)) {
		key = next;
		prev = &key;
		if (bpf_map_lookup_elem(fd, &key, &val))
			continue; /* nothing deletes: cannot be */
		err = fn(&key, &val, ctx);
		if (err)
			return err;
	}
	if (errno != ENOENT)
		return -errno;
	return for_each_pend(s, fn, ctx);
}

bool session__ran_instead(const struct session *s)
{
	return s->skel && s->skel->rodata->ran_instead;
}
