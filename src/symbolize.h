/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Names for stack addresses: user frames through the ELF files a process
 * maps (see elfsyms.h: .symtab, .dynsym, separate debug files found by
 * build-id, .gnu_debuglink or debuginfod when DEBUGINFOD_URLS is set;
 * C++ and Rust demangled), JIT code through the process's perf map (see
 * perfmap.h), kernel frames through /proc/kallsyms.
 *
 * Processes are captured while alive (symbolizer__add_pid()) and can be
 * symbolized after they exited. ELF files are indexed once per build-id
 * (per file when they have none), not per process or path: a library that
 * 300 processes map, or a copy of it elsewhere, is read once.
 *
 * Not thread-safe: one thread owns a symbolizer.
 */
#ifndef WPROF_SYMBOLIZE_H
#define WPROF_SYMBOLIZE_H

#include <stdbool.h>
#include <stddef.h>
#include <elfutils/libdw.h>
#include <linux/types.h>

struct proc_maps;
struct proclive;

/* Size of a name of symbolizer__user_frames(). */
#define SYMBOLIZER_NAME_LEN 256

struct symbolizer;

/* Returns NULL and sets errno on failure. */
struct symbolizer *symbolizer__new(void);
/* NULL is ok. */
void symbolizer__free(struct symbolizer *s);

/*
 * Directories searched for separate debug files before /usr/lib/debug: a
 * ':'-separated list of absolute paths, each laid out like /usr/lib/debug
 * (DIR/.build-id/ab/cdef....debug; DIR/usr/lib/... for .gnu_debuglink
 * names). NULL or "" restores the default. Applies to files indexed later:
 * call it before the first symbolizer__user(). 0, -EINVAL for a relative
 * path, -ENOMEM.
 */
int symbolizer__set_debug_dirs(struct symbolizer *s, const char *dirs);

/*
 * Capture what is needed to symbolize @pid later: a snapshot of its maps and
 * an open fd of every executable file it maps (through /proc/PID/map_files or
 * /proc/PID/root, so deleted files and other mount namespaces work; the vDSO
 * is copied from /proc/PID/mem), and its perf map if it has one. Call again
 * to refresh (dlopen()ed libraries, JIT code added to the perf map): cheap
 * when nothing changed, and mappings gone since stay usable for addresses
 * that only they contain. 0 or -errno; -ESRCH if @pid is gone.
 * A process without user mappings (kernel thread, zombie) is not an error.
 */
int symbolizer__add_pid(struct symbolizer *s, int pid);
/*
 * The same from @pid's mappings read already (their read done at @read_ns,
 * now_ns(): a fork before it may not have had them), @start_time its start
 * (as symbolizer__add_pid() reads them): takes them over, and leaves *@maps
 * empty.
 */
int symbolizer__add_maps(struct symbolizer *s, int pid, __u64 start_time, __u64 read_ns,
			 struct proc_maps *maps);

/*
 * @pid, started at @start_time (/proc/PID/stat's field 22), was forked at
 * @fork_ns (CLOCK_MONOTONIC) by @ppid, started at @pstart: until it execs
 * it runs its parent's code, at its parent's addresses. So the parent's
 * code mappings, if read before the fork and not changed since, become the
 * oldest snapshot of @pid, for the addresses its own snapshots do not map
 * (as for an exec, older snapshots only name what newer ones do not): the
 * frames of a child gone before its maps were read, and those it had before
 * an exec, are named. Nothing when @ppid was not captured as the process
 * that started at @pstart, when its code mappings were read again after the
 * fork (an exec may have replaced them), or when @pid is now a later
 * process's. 0 or -errno.
 */
int symbolizer__inherit(struct symbolizer *s, int pid, __u64 start_time, int ppid,
			__u64 pstart, __u64 fork_ns);

/*
 * Read the perf map of @pid's JIT again (what symbolizer__add_maps() does
 * besides the mappings), for a process whose mappings are known unchanged.
 * Nothing if @pid is not known as the process that started at @start_time.
 */
void symbolizer__refresh_jit(struct symbolizer *s, int pid, __u64 start_time);

/*
 * Keep of the processes that ended only what names their code (their
 * executable mappings), so that memory does not grow with the processes
 * seen. Which ended: as @live tells (NULL: /proc/PID/stat of each process
 * not known to have ended).
 */
void symbolizer__prune(struct symbolizer *s, struct proclive *live);

/*
 * Forget the processes seen ended (symbolizer__prune()) that nothing names
 * any more, at the second call in a row that finds them so: their maps,
 * perf map and cached names go, and later names of their addresses fall
 * back to "[unknown-pid-N]". @busy holds the pids still named (keys
 * (pid, 0), see session__retire()). How many were forgotten.
 */
struct hmap;
size_t symbolizer__forget(struct symbolizer *s, const struct hmap *busy);

/*
 * Name the user address @ip of @pid. @ip is exact: the caller has already
 * subtracted 1 from return addresses. Writes into @buf (truncated to
 * @size - 1 bytes):
 *   - the function name: as in the symbol table ("main", "burn.constprop.0")
 *     without symbol version ("clock_nanosleep", not "...@@GLIBC_2.17"),
 *     demangled without parameter list ("ns::Klass::method",
 *     "<mycrate::Foo as core::fmt::Debug>::fmt");
 *   - for JIT code, the name in the process's perf map with the suffix
 *     "_[j]" ("LazyCompile:~handler /srv/app.js:12_[j]"), checked for
 *     anonymous and unmapped addresses and whenever the ELF has no symbol;
 *   - else "libfoo.so+0x1a2b": basename of the mapped file, offset in the file;
 *     "[vdso]+0x..." for the vDSO;
 *   - "[anon]+0x7f12..." (absolute) for anonymous memory, "[heap]+0x..." and
 *     the like for other kernel-named mappings;
 *   - "[unmapped]" for an address in no mapping of @pid (its address names
 *     nothing that can be looked up: without it, such frames of processes
 *     that differ only in their randomized addresses are one line), and
 *     "[unknown-pid-N]+0x..." for a pid that was never added.
 * A name truncated to fit keeps its suffix.
 * Returns 0 when named by a symbol, 1 for a fallback, -errno on error.
 */
int symbolizer__user(struct symbolizer *s, int pid, __u64 ip, char *buf, size_t size);

/*
 * The frames of the user address @ip of @pid, root-most first: the function
 * that contains @ip (named as by symbolizer__user()), then when @inlines is
 * set, each function inlined there from DWARF, the innermost last, with the
 * suffix "_[i]" ("burn", "mix_[i]", "rotl_[i]"). Without DWARF, or with
 * @inlines false, exactly one name. Fills up to @max_names names (the
 * innermost inlined ones are dropped when they do not fit) and returns how
 * many, or -errno. symbolizer__user() on the same @ip tells whether the
 * first name is a symbol or a fallback (a cache hit).
 */
int symbolizer__user_frames(struct symbolizer *s, int pid, __u64 ip, bool inlines,
			    char (*names)[SYMBOLIZER_NAME_LEN], int max_names);

/* Where a frame's code came from: what pprof calls a mapping. */
struct sym_origin {
	/*
	 * The file as the process mapped it ("/usr/lib/x86_64-linux-gnu/libc.so.6"),
	 * or a kernel name: "[vdso]", "[heap]", "[jit]" for names from a perf
	 * map, "[kernel.kallsyms]".
	 */
	const char *path;
	const char *build_id; /* lowercase hex; "" when there is none */
};

/*
 * The origin of the user address @ip of @pid, as symbolizer__user() named it,
 * or NULL: anonymous or unmapped memory, a pid never added, out of memory.
 * Valid while the symbolizer lives.
 */
const struct sym_origin *symbolizer__user_origin(struct symbolizer *s, int pid, __u64 ip);

/* The kernel's origin, with its build-id from /sys/kernel/notes when readable. NULL on ENOMEM. */
const struct sym_origin *symbolizer__kernel_origin(struct symbolizer *s);

/*
 * Name the kernel address @ip via /proc/kallsyms (loaded once, on first use),
 * e.g. "do_nanosleep"; "[kernel]+0xffffffff81234567" when it cannot be named
 * (also when kallsyms hides addresses). Same return convention.
 */
int symbolizer__kernel(struct symbolizer *s, __u64 ip, char *buf, size_t size);

/*
 * The call frame information covering user address @ip of @pid, for the
 * unwinder, and @ip's address in its terms. NULL when there is none.
 */


/*
 * Whether kernel address @ip is in the scheduler's or the lock code, which
 * the kernel leaves out of a sleeping task's stack (bpf_get_task_stack()).
 */
bool symbolizer__kernel_is_sched(struct symbolizer *s, __u64 ip);

struct symbolizer_stats {
	/* Calls of symbolizer__user()/__user_frames()/__kernel() by outcome, cache hits included. */
	__u64 user_named, user_fallback, kernel_named, kernel_fallback;
	__u64 user_jit;	    /* of user_named: named by a perf map */
	__u64 user_inlined; /* inlined frames returned by symbolizer__user_frames() */
	__u64 files;	    /* distinct ELF images indexed (by build-id, else per file) */
	__u64 files_shared; /* files that had the build-id of another: indexed once */
	__u64 files_failed; /* executable mappings whose file could not be opened as ELF */
	/* files indexed at once and closed, to stay within RLIMIT_NOFILE: no inlined frames, no CFI */
	__u64 files_closed_early;
	/*
	 * ELF files whose debug file was of another build, refused (its names
	 * would be wrong): by build-id, by the .gnu_debuglink CRC, or too big
	 * to check. debug_refused_path: the first such debug file, valid while
	 * the symbolizer lives.
	 */
	__u64 debug_build_id_mismatch, debug_crc_mismatch, debug_too_big;
	const char *debug_refused_path;
	/*
	 * ELF files whose compressed sections (or whose debug file) were not
	 * read: they would inflate past the bound of zsects.h. The first one,
	 * valid while the symbolizer lives.
	 */
	__u64 inflate_refused;
	const char *inflate_refused_path;
	/*
	 * ELF files whose DWARF links to a dwz alt file that was not found or
	 * was refused by the debug file rules (no inlined calls named), and
	 * the name the first one's link gives, valid while the symbolizer lives.
	 */
	__u64 alt_refused;
	const char *alt_refused_path;
	__u64 jit_maps;	     /* processes whose perf map named something */
	__u64 jit_untrusted; /* perf maps ignored: a symlink, not a file, or another owner */
	__u64 jit_truncated; /* perf maps read only up to PERFMAP_MAX_BYTES */
};
void symbolizer__stats(const struct symbolizer *s, struct symbolizer_stats *st);

/* A file whose code was named by file offset ("libfoo.so+0x1a2b") in some frames. */
struct symbolizer_unnamed {
	const char *path; /* as the process mapped it; valid while the symbolizer lives */
	__u64 frames;     /* symbolizer__user() calls that gave such a name */
	bool has_symtab;  /* it has a full symbol table: the code is outside any function */
	bool unreadable;  /* the file could not be opened: no symbols were read at all */
	bool not_code;    /* addresses in a mapping of its data, not its code (a stray walk) */
	/* the executable of processes whose anonymous code (a JIT's) had no name */
	bool jit;
	bool jit_mapped; /* ... though they had a perf map (it lacked those addresses) */
};
/*
 * The files of symbolizer__user()'s fallback names, most frames first:
 * each call of symbolizer__user() counts one frame (symbolizer__user_frames()
 * counts none, so a caller that asks both for one frame counts it once).
 * [vdso] and unmapped memory are no file's; anonymous code is counted under
 * its process's executable, as JIT code (jit). A file's code and
 * its data (where only a stack walk gone astray leads) count apart, so a
 * file may be listed twice. *@out is malloc'd
 * (NULL when empty): the caller frees it. Returns how many, or -ENOMEM.
 */
int symbolizer__unnamed(const struct symbolizer *s, struct symbolizer_unnamed **out);

/*
 * While @quiet, names given are not counted (statistics, files of unnamed
 * frames): frames named again, that another line's names counted already.
 */
void symbolizer__quiet(struct symbolizer *s, bool quiet);

#endif /* WPROF_SYMBOLIZE_H */
