// SPDX-License-Identifier: GPL-2.0-only
/*
 * The bound on compressed sections (see zsects.h), by the sizes the
 * libraries go by: libelf allocates the size a section's header declares
 * and inflates up to it, no further; libdw decodes .gnu_debugdata with
 * liblzma's auto decoder until the stream ends, growing its buffer as it
 * goes, so that stream is decoded here first, into no more than what is
 * left of the bound.
 *
 * libelf also inflates a compressed string table the first time a string
 * is looked up in it (elf_strptr()): section names are read here only once
 * the table that holds them is known to be within the bound.
 */
#include <endian.h>
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <lzma.h>

#include "zsects.h"

/* libdw's decoder's memory limit: what it cannot decode is not decoded here either */
#define XZ_MEMLIMIT (1ULL << 30)
#define XZ_FIRST_BYTES (64 << 10)
/* "ZLIB" and the size, big-endian */
#define GNU_HEADER_BYTES 12

enum zkind { Z_NONE, Z_CHDR, Z_GNU, Z_XZ };

/* One file's compressed sections, added up. */
struct tally {
	Elf *elf;
	size_t shstrndx;
	bool names;	    /* section names may be read */
	bool names_refused; /* ... not: they would inflate past the bound */
	__u64 packed;	    /* bytes of the sections counted, in the file */
	__u64 inflated;	    /* what they declare, or decode to */
};

/* DWARF inflated so far in the run: one profiler, one budget */
static __u64 run_debited;

static __u64 limit_of(__u64 packed)
{
	if (packed > ZSECTS_MAX_BYTES / ZSECTS_RATIO)
		return ZSECTS_MAX_BYTES;
	return packed * ZSECTS_RATIO;
}

static const char *name_of(const struct tally *t, const GElf_Shdr *sh)
{
	return t->names ? elf_strptr(t->elf, t->shstrndx, sh->sh_name) : NULL;
}

static enum zkind kind_of(const GElf_Shdr *sh, const char *name)
{
	if (sh->sh_type == SHT_NOBITS || sh->sh_type == SHT_NULL)
		return Z_NONE;
	if (sh->sh_flags & SHF_COMPRESSED)
		return Z_CHDR;
	if (name && !strncmp(name, ".zdebug", 7))
		return Z_GNU;
	if (name && !strcmp(name, ".gnu_debugdata"))
		return Z_XZ;
	return Z_NONE;
}

/* Whether @use reads (and so inflates) section @ndx. */
static bool needed(const struct tally *t, enum zsects_use use, size_t ndx, const GElf_Shdr *sh,
		   const char *name, enum zkind k)
{
	/* any string may be looked up, inflating its table */
	if (ndx == t->shstrndx || (sh->sh_type == SHT_STRTAB && use != ZSECTS_NAMES))
		return true;
	switch (use) {
	case ZSECTS_NAMES:
		return false;
	case ZSECTS_SYMBOLS:
		/* libdw looks for .symtab, else .dynsym, and their indexes */
		return k == Z_XZ || sh->sh_type == SHT_SYMTAB || sh->sh_type == SHT_DYNSYM ||
		       sh->sh_type == SHT_SYMTAB_SHNDX;
	case ZSECTS_CFI:
		return name && (!strcmp(name, ".debug_frame") || !strcmp(name, ".zdebug_frame"));
	case ZSECTS_DWARF:
	default:
		return true;
	}
}

/* The size a header declares (0: libelf would not inflate it), and the section's bytes. */
static __u64 declared(Elf_Scn *scn, enum zkind k, __u64 *packed)
{
	Elf_Data *d;
	GElf_Chdr ch;
	__u64 size;

	*packed = 0;
	if (k == Z_CHDR) {
		if (!gelf_getchdr(scn, &ch) || !(d = elf_getdata(scn, NULL)))
			return 0;
		*packed = d->d_size;
		return ch.ch_size;
	}
	d = elf_rawdata(scn, NULL);
	if (!d || !d->d_buf || d->d_size < GNU_HEADER_BYTES || memcmp(d->d_buf, "ZLIB", 4))
		return 0;
	memcpy(&size, (const char *)d->d_buf + 4, sizeof(size));
	*packed = d->d_size;
	return be64toh(size);
}

/*
 * Decode the xz (or legacy lzma) stream @in as libdw does, into at most
 * @max bytes. Returns the bytes decoded, or @max + 1 when there were more;
 * *@out holds them (malloc'd) when the stream ended within @max, else NULL.
 */
static __u64 unxz(const unsigned char *in, size_t len, __u64 max, unsigned char **out)
{
	lzma_stream z = LZMA_STREAM_INIT;
	unsigned char *buf = NULL, *grown;
	size_t cap = 0, n = 0;
	lzma_ret ret = LZMA_OK;

	*out = NULL;
	/* libdw decodes what starts with either magic, and nothing else */
	if (!(len > 7 && !memcmp(in, "\xfd" "7zXZ\0", 6)) && !(len > 3 && !memcmp(in, "\x5d\0", 2)))
		return 0;
	if (lzma_auto_decoder(&z, XZ_MEMLIMIT, 0) != LZMA_OK)
		return 0;
	z.next_in = in;
	z.avail_in = len;
	while (ret == LZMA_OK && n <= max) {
		if (n == cap) {
			size_t want = cap ? cap * 2 : XZ_FIRST_BYTES;

			if (want > max + 1)
				want = max + 1;
			grown = realloc(buf, want);
			if (!grown) {
				n = max + 1; /* unknown: as if too much */
				break;
			}
			buf = grown;
			cap = want;
		}
		z.next_out = buf + n;
		z.avail_out = cap - n;
		ret = lzma_code(&z, LZMA_RUN);
		n = cap - z.avail_out;
	}
	lzma_end(&z);
	if (ret == LZMA_STREAM_END && n <= max)
		*out = buf;
	else
		free(buf);
	return n;
}

static void tally(Elf *elf, enum zsects_use use, bool nested, struct tally *t);

/*
 * What .gnu_debugdata decodes to, and what the ELF file it holds would
 * inflate to in turn, within @t's bound.
 */
static void tally_xz(Elf_Scn *scn, struct tally *t)
{
	Elf_Data *d = elf_rawdata(scn, NULL);
	__u64 limit = limit_of(t->packed), n;
	struct tally in = {};
	unsigned char *img;
	Elf *inner;

	if (!d || !d->d_buf || !d->d_size)
		return;
	n = unxz(d->d_buf, d->d_size, t->inflated < limit ? limit - t->inflated : 0, &img);
	t->inflated += n;
	if (!img)
		return;
	/* libdw reads its symbol table, inflating what is compressed in it */
	inner = elf_memory((char *)img, n);
	in.inflated = t->inflated;
	if (inner && elf_kind(inner) == ELF_K_ELF)
		tally(inner, ZSECTS_DWARF, true, &in);
	t->inflated = in.inflated;
	if (inner)
		elf_end(inner);
	free(img);
}

/*
 * Whether @t's section names may be read: their table, when compressed,
 * would inflate within the bound on its own. It counts in @t either way.
 */
static void check_names(struct tally *t, bool nested)
{
	Elf_Scn *scn;
	GElf_Shdr sh;
	__u64 size, packed;

	t->names = false;
	if (elf_getshdrstrndx(t->elf, &t->shstrndx))
		t->shstrndx = 0;
	if (!t->shstrndx || !(scn = elf_getscn(t->elf, t->shstrndx)) || !gelf_getshdr(scn, &sh))
		return; /* libdw finds no section by name either */
	if (kind_of(&sh, NULL) != Z_CHDR) {
		t->names = true;
		return;
	}
	size = declared(scn, Z_CHDR, &packed);
	t->inflated += size;
	if (!nested)
		t->packed += packed;
	t->names = size <= limit_of(packed);
	t->names_refused = !t->names;
}

/*
 * Add up @elf's compressed sections that @use needs: first what headers
 * declare, then what xz streams decode to (the bound known by then). An
 * ELF file decoded from .gnu_debugdata (@nested) adds only what it
 * declares: libdw looks for no .gnu_debugdata in it.
 */
static void tally(Elf *elf, enum zsects_use use, bool nested, struct tally *t)
{
	Elf_Scn *scn = NULL;
	bool xz = false;
	GElf_Shdr sh;

	t->elf = elf;
	check_names(t, nested);
	while ((scn = elf_nextscn(elf, scn))) {
		size_t ndx = elf_ndxscn(scn);
		const char *name;
		enum zkind k;
		__u64 packed = 0;
		Elf_Data *d;

		if (ndx == t->shstrndx || !gelf_getshdr(scn, &sh))
			continue; /* the names, counted already */
		name = name_of(t, &sh);
		k = kind_of(&sh, name);
		if (k == Z_NONE || !needed(t, use, ndx, &sh, name, k) || (k == Z_XZ && nested))
			continue;
		if (k == Z_XZ) {
			d = elf_rawdata(scn, NULL);
			packed = d ? d->d_size : 0;
			xz = true;
		} else {
			t->inflated += declared(scn, k, &packed);
		}
		if (!nested)
			t->packed += packed;
	}
	for (scn = NULL; xz && t->inflated <= limit_of(t->packed) && (scn = elf_nextscn(elf, scn));)
		if (gelf_getshdr(scn, &sh) && kind_of(&sh, name_of(t, &sh)) == Z_XZ)
			tally_xz(scn, t);
}

int zsects__check(Elf *elf, enum zsects_use use, __u64 *bytes)
{
	struct tally t = {};

	tally(elf, use, false, &t);
	*bytes = t.inflated;
	return t.inflated > limit_of(t.packed) || t.names_refused ? -EFBIG : 0;
}

int zsects__debit(__u64 bytes)
{
	if (bytes > ZSECTS_RUN_MAX_BYTES - run_debited)
		return -EFBIG;
	run_debited += bytes;
	return 0;
}

void zsects__budget_reset(void)
{
	run_debited = 0;
}

int zsects__guard(Elf *elf, enum zsects_use use)
{
	struct tally t = { .elf = elf };
	bool refuse, refused = false;
	Elf_Scn *scn = NULL;
	size_t nr = 0, i;
	Elf_Scn **hide;
	__u64 bytes;
	int err = 0;

	refuse = zsects__check(elf, use, &bytes) != 0;
	if (!refuse && use == ZSECTS_DWARF && bytes)
		refuse = zsects__debit(bytes) != 0;
	check_names(&t, false);
	if (elf_getshdrnum(elf, &nr))
		return 0; /* no sections */
	hide = calloc(nr ? nr : 1, sizeof(*hide));
	if (!hide)
		return -ENOMEM;
	/* all found first: once the names are hidden, no section has a name */
	for (nr = 0; (scn = elf_nextscn(elf, scn));) {
		GElf_Shdr sh;
		const char *name;
		enum zkind k;
		bool need;

		if (!gelf_getshdr(scn, &sh))
			continue;
		name = name_of(&t, &sh);
		k = kind_of(&sh, name);
		if (k == Z_NONE)
			continue;
		need = needed(&t, use, elf_ndxscn(scn), &sh, name, k);
		if (need && !refuse)
			continue;
		hide[nr++] = scn;
		refused |= need;
	}
	for (i = 0; i < nr && !err; i++) {
		GElf_Shdr sh;

		if (!gelf_getshdr(hide[i], &sh)) {
			err = -EINVAL;
			break;
		}
		sh.sh_name = 0;
		sh.sh_type = SHT_NOBITS;
		sh.sh_flags &= ~(GElf_Xword)SHF_COMPRESSED;
		sh.sh_size = 0;
		if (!gelf_update_shdr(hide[i], &sh))
			err = -EINVAL;
	}
	free(hide);
	return err ? err : refused;
}
