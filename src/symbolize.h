/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Names for stack addresses: user frames through the ELF files a process
 * maps (symbols found by libdw: .symtab, .dynsym, separate debug files),
 * kernel frames through /proc/kallsyms.
 *
 * Processes are captured while alive (symbolizer__add_pid()) and can be
 * symbolized after they exited. ELF files are cached per file, not per
 * process: a library that 300 processes map is read once.
 *
 * Not thread-safe: one thread owns a symbolizer.
 */
#ifndef WPROF_SYMBOLIZE_H
#define WPROF_SYMBOLIZE_H

#include <stddef.h>
#include <linux/types.h>

struct symbolizer;

/* Returns NULL and sets errno on failure. */
struct symbolizer *symbolizer__new(void);
/* NULL is ok. */
void symbolizer__free(struct symbolizer *s);

/*
 * Capture what is needed to symbolize @pid later: a snapshot of its maps and
 * an open fd of every executable file it maps (through /proc/PID/map_files or
 * /proc/PID/root, so deleted files and other mount namespaces work; the vDSO
 * is copied from /proc/PID/mem). Call again to refresh (dlopen()ed libraries):
 * cheap when nothing changed, and mappings gone since stay usable for
 * addresses that only they contain. 0 or -errno; -ESRCH if @pid is gone.
 * A process without user mappings (kernel thread, zombie) is not an error.
 */
int symbolizer__add_pid(struct symbolizer *s, int pid);

/*
 * Name the user address @ip of @pid. @ip is exact: the caller has already
 * subtracted 1 from return addresses. Writes into @buf (truncated to
 * @size - 1 bytes):
 *   - the function name, as in the symbol table ("main", "burn.constprop.0");
 *   - else "libfoo.so+0x1a2b": basename of the mapped file, offset in the file;
 *     "[vdso]+0x..." for the vDSO;
 *   - "[anon]+0x7f12..." (absolute) for anonymous memory, "[heap]+0x..." and
 *     the like for other kernel-named mappings;
 *   - "[unmapped]+0x..." for an address in no mapping of @pid, and
 *     "[unknown-pid-N]+0x..." for a pid that was never added.
 * Returns 0 when named by a symbol, 1 for a fallback, -errno on error.
 */
int symbolizer__user(struct symbolizer *s, int pid, __u64 ip, char *buf, size_t size);

/*
 * Name the kernel address @ip via /proc/kallsyms (loaded once, on first use),
 * e.g. "do_nanosleep"; "[kernel]+0xffffffff81234567" when it cannot be named
 * (also when kallsyms hides addresses). Same return convention.
 */
int symbolizer__kernel(struct symbolizer *s, __u64 ip, char *buf, size_t size);

struct symbolizer_stats {
	/* Calls of symbolizer__user()/__kernel() by outcome, cache hits included. */
	__u64 user_named, user_fallback, kernel_named, kernel_fallback;
	__u64 files;	    /* distinct ELF files (and vDSO images) held */
	__u64 files_failed; /* executable mappings whose file could not be opened */
};
void symbolizer__stats(const struct symbolizer *s, struct symbolizer_stats *st);

#endif /* WPROF_SYMBOLIZE_H */
