/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * A bound on what the compressed sections of one ELF file may inflate to,
 * checked before libelf or libdw inflates them. A few hundred KiB of zlib
 * or xz can inflate to GiBs of zeros: a file another user maps (or names
 * as its debug file) must not make root's wprof allocate that.
 *
 * Compressed are: sections with SHF_COMPRESSED (an Elf*_Chdr then zlib or
 * zstd; libelf allocates the ch_size it declares), GNU's older .zdebug_*
 * sections ("ZLIB" and a big-endian 8-byte size) and .gnu_debugdata
 * (MiniDebugInfo: an ELF file in one xz stream, whose size only decoding
 * tells; its own compressed sections count too).
 */
#ifndef WPROF_ZSECTS_H
#define WPROF_ZSECTS_H

#include <gelf.h>
#include <linux/types.h>

/*
 * The compressed sections a reader needs may inflate to this many times
 * their own size, and to ZSECTS_MAX_BYTES at most, together. DWARF and
 * symbol tables compress 2 to 10 times; zeros 1000 (zlib) to 7000 (xz).
 */
#define ZSECTS_RATIO 32
#define ZSECTS_MAX_BYTES (512ULL << 20)

/*
 * DWARF read for inlined calls stays open to the end of the run, file after
 * file: what all of it may inflate to, together (ZSECTS_DWARF's share).
 */
#define ZSECTS_RUN_MAX_BYTES (384ULL << 20)

/* What reads the file: each inflates its own sections, and string tables (names). */
enum zsects_use {
	/* the section names alone (libelf inflates their table on the first lookup) */
	ZSECTS_NAMES,
	/* libdw's symbol table: .symtab or .dynsym, their strings, .gnu_debugdata */
	ZSECTS_SYMBOLS,
	/* the unwind tables: .debug_frame (libdw's DWARF reader would inflate all) */
	ZSECTS_CFI,
	/* libdw's DWARF: every compressed section */
	ZSECTS_DWARF,
};

/*
 * What the compressed sections @use needs of @elf inflate to, in *@bytes
 * (counting stops past the bound). 0 when within the bound, -EFBIG past
 * it (or when memory to decode .gnu_debugdata ran out).
 */
int zsects__check(Elf *elf, enum zsects_use use, __u64 *bytes);

/*
 * Take @bytes of DWARF from the run's budget: 0, or -EFBIG (nothing taken)
 * when that would pass ZSECTS_RUN_MAX_BYTES. zsects__guard() takes what it
 * lets ZSECTS_DWARF inflate; a debug file checked with zsects__check() is
 * debited by its reader.
 */
int zsects__debit(__u64 bytes);

/* The whole budget again (for tests). */
void zsects__budget_reset(void);

/*
 * Make @elf safe for @use to read: its compressed sections that @use does
 * not need are hidden, and so are those it needs when they would inflate
 * past the bound (or cannot be checked). A hidden section is left without
 * name, type (SHT_NOBITS), flags or size in @elf's section headers (not in
 * the file), so no library reader finds it to inflate. For ZSECTS_DWARF,
 * sections past what is left of the run's budget are hidden too. Returns 1 when
 * sections @use needs were hidden, 0 when none were, -errno when @elf
 * could not be changed (it must not be read then).
 */
int zsects__guard(Elf *elf, enum zsects_use use);

#endif /* WPROF_ZSECTS_H */
