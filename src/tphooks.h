/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * BPF programs that other tools have attached to a tracepoint: found through
 * the kernel's BPF links (tp_btf, raw_tp) and through the perf event file
 * descriptors processes hold (tracepoint programs attached the older way,
 * as bpftrace and bcc's tools do). A tracepoint runs its handlers in the
 * order they were attached, so every program found before wprof attaches
 * runs before wprof's own.
 */
#ifndef WPROF_TPHOOKS_H
#define WPROF_TPHOOKS_H

#include <stddef.h>
#include <linux/types.h>

struct tphooks {
	size_t nr;        /* distinct programs attached to the tracepoint */
	char first[96];   /* one of them, for messages: "NAME (pid N, COMM)" or "NAME" */
};

/*
 * Fill @out with the BPF programs attached to tracepoint @tp. Processes
 * and descriptors that vanish meanwhile are passed over. 0 or -errno (the
 * kernel's BPF id lists cannot be read: no privilege).
 */
int tphooks__find(const char *tp, struct tphooks *out);

#endif /* WPROF_TPHOOKS_H */
