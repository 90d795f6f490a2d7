/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Whether a named target's code is as its last read of all its mappings
 * found it. Such a target is read again at every tick, to catch dlopen();
 * where the kernel can list its code mappings alone (PROCMAP_QUERY, Linux
 * 6.11+), the read is skipped while they and its start time are unchanged:
 * its data mappings only name frames that strayed out of code. Beside 5000
 * mappings, reading them all at every tick took 3.2% of a CPU.
 */
#ifndef WPROF_CODEWATCH_H
#define WPROF_CODEWATCH_H

#include <stdbool.h>
#include <linux/types.h>

struct codewatch;

/*
 * @wait_while_same: check less often while a process's code stays the same
 * (where the unwinder asks at once for code it meets with no table).
 * NULL on failure.
 */
struct codewatch *codewatch__new(bool wait_while_same);
void codewatch__free(struct codewatch *w);
/*
 * Before a read of @pid's mappings: true if the read can be skipped (@again,
 * a tick's read, and @pid's code is as last kept, or a wait goes on), with
 * its start time in *@start. Else false, and what the kernel says of its
 * code now is held for codewatch__keep(): taken before the read, a change
 * in between is then found at the next check.
 */
bool codewatch__same(struct codewatch *w, __u32 pid, bool again, __u64 *start);
/*
 * The read that codewatch__same() did not skip is made: keep what it held
 * as @pid's code, @pid started at @start (@ok: the read and what was made
 * of it succeeded; else @pid is read in full at its next tick).
 */
void codewatch__keep(struct codewatch *w, __u32 pid, __u64 start, bool ok);

#endif /* WPROF_CODEWATCH_H */
