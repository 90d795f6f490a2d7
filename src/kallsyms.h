/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Kernel function names from /proc/kallsyms (vmlinux, modules, BPF programs).
 */
#ifndef WPROF_KALLSYMS_H
#define WPROF_KALLSYMS_H

#include <stdbool.h>
#include <linux/types.h>

struct kallsyms;

/*
 * Load text symbols from @path (NULL: /proc/kallsyms). Returns NULL and sets
 * errno on failure; errno is EPERM when every address reads as 0
 * (kernel.kptr_restrict, or not root).
 */
struct kallsyms *kallsyms__load(const char *path);
/*
 * The function that contains @addr, or NULL. A symbol extends to the next
 * symbol of any type. *@offset (if not NULL) gets @addr minus its start.
 */
const char *kallsyms__find(const struct kallsyms *ks, __u64 addr, __u64 *offset);
/*
 * Whether @addr is in the scheduler's or the lock code (.sched.text,
 * .lock.text): the frames the kernel leaves out of a sleeping task's stack.
 */
bool kallsyms__is_sched(const struct kallsyms *ks, __u64 addr);
/* Number of text symbols loaded. */
__u64 kallsyms__count(const struct kallsyms *ks);
/* NULL is ok. */
void kallsyms__free(struct kallsyms *ks);

#endif /* WPROF_KALLSYMS_H */
