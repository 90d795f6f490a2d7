/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * --wakers: a waking done in an interrupt, told by its kernel frames, and
 * named by what they did: "[irq: timer]", "[softirq: net]"...
 */
#ifndef WPROF_IRQNAME_H
#define WPROF_IRQNAME_H

#include <stdbool.h>
#include <stddef.h>

struct irq_seen {
	const char *kind; /* the first kind a frame told, leaf first; NULL: none yet */
	bool soft;        /* a frame of the softirqs' loop */
	bool irq;         /* a frame of an interrupt's entry or exit */
};

/* Note kernel frame @name (its "_[k]" tag, if any, is ignored). Feed them leaf first. */
void irqname__see(struct irq_seen *s, const char *name);

/*
 * Whether the frames seen are an interrupt's or the softirqs' (the waking
 * is theirs, not the task's they ran on), and then its name in @buf (@size
 * bytes): "[irq: KIND]" or "[softirq: KIND]", KIND one of timer, block,
 * net, rcu, tasklet, irq_work, ipi, device; "[irq]" or "[softirq]" when no
 * frame told.
 */
bool irqname__make(const struct irq_seen *s, char *buf, size_t size);

#endif /* WPROF_IRQNAME_H */
