// SPDX-License-Identifier: GPL-2.0-only
/*
 * ELF files as the unwind-table builder takes them: the input is a file,
 * opened with elf_begin() and turned into rows by build_file(), the very
 * function unwtab__add_pid() runs on each executable file a target maps
 * (src/unwtab.c is included here for it: it is static). Then what the BPF
 * walk relies on: the rows of the file sorted by pc, of known kinds, and
 * the page index in front of them pointing at its rows only.
 */
#include "../../src/unwtab.c"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	int fd = fuzz_memfd(data, size);
	struct unwtab *u = unwtab__new();
	struct tab_file *f;
	Elf *elf;

	FUZZ_ASSERT(u);
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf || elf_kind(elf) != ELF_K_ELF)
		goto out;
	/* as file_of() makes a file's entry */
	f = calloc(1, sizeof(*f));
	FUZZ_ASSERT(f);
	f->kfirst = WPROF_NO_ROW;
	f->err = -ENOENT;
	u->files = calloc(1, sizeof(*u->files));
	FUZZ_ASSERT(u->files);
	u->files[0] = f;
	u->nr_files = u->cap_files = 1;
	build_file(u, f, elf);
	FUZZ_ASSERT(f->err || f->row_nr > 0);
	if (!f->err) {
		const struct wprof_unwind_row *rows = &f->img[f->page_nr];

		FUZZ_ASSERT(f->img && f->page_nr > 0);
		for (__u32 i = 0; i < f->row_nr; i++) {
			FUZZ_ASSERT(!i || rows[i - 1].pc <= rows[i].pc);
			/* a kind the walks know (WPROF_CFA_ENTRY is the last) */
			FUZZ_ASSERT(rows[i].kind <= WPROF_CFA_ENTRY);
		}
		/* the page index points at the file's rows only (counted from the first) */
		for (__u32 p = 0; p < f->page_nr; p++) {
			__u32 r = f->img[p].pc;

			FUZZ_ASSERT(r == WPROF_NO_ROW || r < f->row_nr);
		}
	}
out:
	if (elf)
		elf_end(elf);
	unwtab__free(u);
	return 0;
}
