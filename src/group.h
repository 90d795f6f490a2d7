/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * How the stacks of threads are grouped (--group): each line's first frame
 * after the tag names its thread; grouping puts another name there, or none.
 *
 *	thread   the thread's name, as recorded (worker-12)
 *	pool     the thread's name with each run of digits as '*' (worker-*,
 *	         pool-*-thread-*): the threads of one pool are one
 *	process  the name of the thread's process (needs a saved recording:
 *	         folded text does not say processes)
 *	none     no name: the threads that ran one code path are one tower
 */
#ifndef WPROF_GROUP_H
#define WPROF_GROUP_H

#include <stdbool.h>
#include <stddef.h>

enum group_by { GROUP_THREAD, GROUP_POOL, GROUP_PROCESS, GROUP_NONE };

/* --group WHAT: 0, or -EINVAL after one error line naming the choices. */
int group__parse(const char *s, enum group_by *g);
const char *group__name(enum group_by g);

/*
 * @name (@len bytes) with each run of digits as one '*', into @dst (NUL
 * ended, cut to @size); the length it needs.
 */
size_t group__pool_name(char *dst, size_t size, const char *name, size_t len);

/*
 * The folded line @line (@len bytes, no ids: TAG;NAME;frames, NAME;frames;TAG
 * or, untagged, NAME;frames) with its name frame as @g wants it: @pname the
 * process's name for GROUP_PROCESS (NULL: the thread's is kept). Written to
 * @dst (NUL ended, cut to @size); the length it needs. A line of one frame
 * keeps it.
 */
size_t group__line(char *dst, size_t size, const char *line, size_t len, enum group_by g,
		   const char *pname);

#endif /* WPROF_GROUP_H */
