// SPDX-License-Identifier: GPL-2.0-only
/* The name of an interrupt's waking from its kernel frames: see irqname.h. */
#include <stdio.h>
#include <string.h>

#include "irqname.h"

/* A kernel function and the kind of work it marks. */
static const struct {
	const char *fn, *kind;
} kinds[] = {
	/* timers: sleeps with a timeout, nanosleep, timerfd, itimers, the tick */
	{ "hrtimer_wakeup", "timer" },
	{ "process_timeout", "timer" },
	{ "timerfd_tmrproc", "timer" },
	{ "posix_timer_fn", "timer" },
	{ "it_real_fn", "timer" },
	{ "call_timer_fn", "timer" },
	{ "tick_sched_timer", "timer" },
	/* a disk's completion */
	{ "blk_mq_end_request", "block" },
	{ "blk_mq_complete_request", "block" },
	{ "blk_complete_reqs", "block" },
	{ "bio_endio", "block" },
	/* the network */
	{ "net_rx_action", "net" },
	{ "net_tx_action", "net" },
	{ "__napi_poll", "net" },
	{ "rcu_core", "rcu" },
	{ "rcu_do_batch", "rcu" },
	{ "tasklet_action_common", "tasklet" },
	{ "irq_work_run", "irq_work" },
	{ "irq_work_single", "irq_work" },
	{ "__sysvec_irq_work", "irq_work" },
	/* another CPU's request */
	{ "__sysvec_call_function_single", "ipi" },
	{ "__sysvec_call_function", "ipi" },
	{ "generic_smp_call_function_single_interrupt", "ipi" },
	/* a device's handler */
	{ "handle_irq_event", "device" },
	{ "__handle_irq_event_percpu", "device" },
	{ "__common_interrupt", "device" },
};

/* The softirqs' loop, on an interrupt's way out, in ksoftirqd or as bottom halves are enabled. */
static const char *const softirq_fns[] = { "handle_softirqs", "__do_softirq", "do_softirq" };

/* An interrupt's way in or out (x86-64: asm_sysvec_*, asm_common_interrupt...). */
static const char *const irq_prefixes[] = { "asm_sysvec_", "sysvec_", "asm_common_interrupt",
					     "common_interrupt", "irq_exit_rcu", "__irq_exit_rcu",
					     "asm_exc_nmi", "exc_nmi" };

/* @name is function @fn, but for a "_[k]" tag. */
static bool is_fn(const char *name, const char *fn)
{
	size_t n = strlen(fn);

	return !strncmp(name, fn, n) && (!name[n] || !strcmp(name + n, "_[k]"));
}

void irqname__see(struct irq_seen *s, const char *name)
{
	for (size_t i = 0; !s->kind && i < sizeof(kinds) / sizeof(kinds[0]); i++)
		if (is_fn(name, kinds[i].fn))
			s->kind = kinds[i].kind;
	for (size_t i = 0; i < sizeof(softirq_fns) / sizeof(softirq_fns[0]); i++)
		if (is_fn(name, softirq_fns[i]))
			s->soft = true;
	for (size_t i = 0; i < sizeof(irq_prefixes) / sizeof(irq_prefixes[0]); i++)
		if (!strncmp(name, irq_prefixes[i], strlen(irq_prefixes[i])))
			s->irq = true;
}

bool irqname__make(const struct irq_seen *s, char *buf, size_t size)
{
	const char *what = s->soft ? "softirq" : "irq";

	if (!s->soft && !s->irq)
		return false;
	if (s->kind)
		snprintf(buf, size, "[%s: %s]", what, s->kind);
	else
		snprintf(buf, size, "[%s]", what);
	return true;
}
