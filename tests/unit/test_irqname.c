// SPDX-License-Identifier: GPL-2.0-only
/* Unit tests of src/irqname.c: an interrupt's waking named by its kernel frames. */
#include <stddef.h>

#include "irqname.h"
#include "unit.h"

/* The name irqname__make() gives frames @f[0..@n), leaf first. */
static const char *name_of(const char *const *f, size_t n, char *buf, size_t size)
{
	struct irq_seen s = {};

	for (size_t i = 0; i < n; i++)
		irqname__see(&s, f[i]);
	return irqname__make(&s, buf, size) ? buf : "(a task's)";
}

static void test_kinds(void)
{
	const char *timer[] = { "try_to_wake_up_[k]", "hrtimer_wakeup_[k]",
				"__hrtimer_run_queues_[k]", "hrtimer_interrupt_[k]",
				"__sysvec_apic_timer_interrupt_[k]",
				"asm_sysvec_apic_timer_interrupt_[k]" };
	const char *disk[] = { "try_to_wake_up_[k]", "folio_wake_bit_[k]",
			       "blk_mq_end_request_[k]", "handle_irq_event_[k]",
			       "common_interrupt_[k]" };
	const char *net[] = { "try_to_wake_up_[k]", "sock_def_readable_[k]",
			      "__napi_poll_[k]", "net_rx_action_[k]", "handle_softirqs_[k]",
			      "irq_exit_rcu_[k]" };
	const char *none[] = { "try_to_wake_up_[k]", "some_driver_fn_[k]",
			       "asm_sysvec_some_vector_[k]" };
	const char *near[] = { "hrtimer_wakeup_extra_[k]", "xhrtimer_wakeup",
			       "asm_sysvec_apic_timer_interrupt_[k]" };
	const char *task[] = { "try_to_wake_up_[k]", "hrtimer_wakeup_[k]", "anon_pipe_write_[k]",
			       "do_syscall_64_[k]" };
	struct irq_seen s = {};
	char buf[32];

	CHECK_STREQ(name_of(timer, 6, buf, sizeof(buf)), "[irq: timer]", "a sleep's timer");
	CHECK_STREQ(name_of(disk, 5, buf, sizeof(buf)), "[irq: block]",
		    "the leafmost kind wins over the device handler under it");
	CHECK_STREQ(name_of(net, 6, buf, sizeof(buf)), "[softirq: net]", "the softirqs' loop");
	CHECK_STREQ(name_of(none, 3, buf, sizeof(buf)), "[irq]", "nothing known: the interrupt");
	CHECK_STREQ(name_of(near, 3, buf, sizeof(buf)), "[irq]", "a name must be the function's");
	for (size_t i = 0; i < 4; i++)
		irqname__see(&s, task[i]);
	CHECK(!irqname__make(&s, buf, sizeof(buf)), "no interrupt's frame: a task's waking");
	CHECK_STREQ(name_of(timer, 6, buf, 8), "[irq: t", "cut to the buffer");
}

int main(void)
{
	test_kinds();
	return unit_done();
}
