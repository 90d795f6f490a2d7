/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The symbols of one ELF image (executable, shared library, vDSO), found by
 * libdw: .symtab of the file or of its separate debug file (by build-id
 * under the debug directories, by .gnu_debuglink, or from debuginfod when
 * DEBUGINFOD_URLS is set), else .dynsym and the MiniDebugInfo symtab.
 * Names come out as a reader wants them: symbol versions stripped
 * ("clock_nanosleep", not "clock_nanosleep@@GLIBC_2.17"), C++ and Rust
 * demangled (lazily, on first use of a symbol), compiler clone suffixes
 * kept ("burn.constprop.0"). DWARF gives the functions inlined at an
 * address.
 *
 * Addresses are module addresses: the ELF's virtual addresses (what
 * elfsyms__addr() returns for a file offset).
 */
#ifndef WPROF_ELFSYMS_H
#define WPROF_ELFSYMS_H

#include <stdbool.h>
#include <stddef.h>
#include <elfutils/libdw.h>
#include <linux/types.h>

struct elfsyms;

/*
 * Take @fd, an ELF file open read-only (closed by elfsyms__free(), or on
 * failure), and read its build-id. @path is where the mapping process saw
 * the file: libdw looks for .gnu_debuglink files next to it, and its
 * basename names the file in fallbacks. NULL with errno on failure
 * (EINVAL: not ELF).
 */
struct elfsyms *elfsyms__new(int fd, const char *path);

/* The GNU build-id: its length, 0 if the file has none. */
size_t elfsyms__build_id(const struct elfsyms *e, const unsigned char **id);

/*
 * How much the file itself tells: 2 with DWARF, 1 with .symtab, else 0.
 * Of two files with one build-id, the richer one is worth indexing.
 */
int elfsyms__richness(const struct elfsyms *e);

/* Basename of the path, "[vdso]" and the like as given. */
const char *elfsyms__basename(const struct elfsyms *e);

bool elfsyms__indexed(const struct elfsyms *e);
/*
 * Once indexed: were the symbols read from a full symbol table (.symtab of
 * the file or of a separate debug file)? False with .dynsym alone, where
 * only exported functions have names: a debug file would name the rest.
 */
bool elfsyms__has_symtab(const struct elfsyms *e);
/* True while @e holds a file descriptor: until indexed, and after if @keep_fd was set. */
bool elfsyms__holds_fd(const struct elfsyms *e);

/*
 * Debug files found for @e and refused as another build's: a build-id
 * other than @e's, a CRC other than its .gnu_debuglink's (checked when @e
 * has no build-id), or too big to check. A mask of ELFSYMS_REFUSED_*, and
 * the first refused file in @path (NULL if none); known once indexed.
 */
#define ELFSYMS_REFUSED_BUILD_ID 1u
#define ELFSYMS_REFUSED_CRC 2u
#define ELFSYMS_REFUSED_TOO_BIG 4u
unsigned int elfsyms__debug_refused(const struct elfsyms *e, const char **path);

/*
 * Whether compressed sections of @e's file, or a debug file found for it,
 * were not read because they would inflate past the bound (see zsects.h),
 * and the first such file in @path (NULL if none, or not known). Known once
 * indexed, and again once DWARF is read.
 */
bool elfsyms__inflate_refused(const struct elfsyms *e, const char **path);

/*
 * Whether @e's DWARF links to a dwz alt file (.gnu_debugaltlink) that was
 * not found or did not pass the debug file rules: its inlined calls are
 * not named. *@path: the name the link gives. Known once inlines were read.
 */
bool elfsyms__alt_refused(const struct elfsyms *e, const char **path);

/*
 * Read the segments and the symbol table; once. @debuginfo_path is libdw's
 * search path (see Dwfl_Callbacks), and must stay valid while @e lives.
 * @keep_fd: keep the file open for elfsyms__inlines(), else close it now.
 * Failure only leaves @e without symbols.
 */
void elfsyms__index(struct elfsyms *e, char **debuginfo_path, bool keep_fd);

/*
 * The module address of file offset @file_off, for a mapping that is
 * executable if @exec (segments may share a file page). False if no
 * segment holds @file_off, or @e is not indexed.
 */
bool elfsyms__addr(struct elfsyms *e, __u64 file_off, bool exec, __u64 *addr);

/* The name of the function at @addr, or NULL. Valid while @e lives. */
const char *elfsyms__find(struct elfsyms *e, __u64 addr);

/*
 * The functions inlined at @addr, from DWARF: the outermost call first,
 * the innermost last (the function that contains @addr is not among them).
 * Up to @max names go to @names, valid while @e lives. Returns how many;
 * 0 without DWARF (or when @e was indexed without keep_fd).
 */
int elfsyms__inlines(struct elfsyms *e, __u64 addr, const char **names, int max);

/*
 * The file's call frame information (.eh_frame, else .debug_frame) for
 * unwinding; a module address A is looked up in it as A - *bias. NULL if
 * none (or when @e was indexed without keep_fd).
 */
Dwarf_CFI *elfsyms__cfi(struct elfsyms *e, __u64 *bias);

/* NULL is ok. */
void elfsyms__free(struct elfsyms *e);

#endif /* WPROF_ELFSYMS_H */
