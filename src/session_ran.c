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
	return errno == ENOENT ? 0 : -errno;
}

bool session__ran_instead(const struct session *s)
{
	return s->skel && s->skel->rodata->ran_instead;
}
