// SPDX-License-Identifier: GPL-2.0-only
/*
 * Unit tests of src/zsects.c, the bound on what compressed sections may
 * inflate to, on ELF images built here in memory: each kind of compressed
 * section (SHF_COMPRESSED, GNU .zdebug_*, .gnu_debugdata in xz), at a
 * size within the bound and as a bomb of zeros; the fixed cap; an ELF file
 * inside .gnu_debugdata with a bomb of its own; compressed section names
 * and symbol names (libelf inflates a string table on its first lookup).
 * Ground truth is libelf itself: a section left readable inflates to the
 * size counted; a hidden one is no longer there for any reader.
 */
#include <endian.h>
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <gelf.h>
#include <lzma.h>
#include <zlib.h>

#include "zsects.h"
#include "unit.h"

#define MIB (1ULL << 20)

struct sect {
	const char *name;
	__u32 type;
	__u64 flags;
	const void *data;
	size_t size;
};

struct blob {
	unsigned char *p;
	size_t len;
};

/* Bytes that deflate a few times over, as DWARF does: a small alphabet, no long repeats. */
static unsigned char *texty(size_t n)
{
	unsigned char *p = malloc(n);
	__u32 x = 12345;

	for (size_t i = 0; p && i < n; i++) {
		x = x * 1103515245 + 12345;
		p[i] = 'a' + (x >> 16) % 16;
	}
	return p;
}

static struct blob deflated(const void *in, size_t n)
{
	uLongf len = compressBound(n);
	struct blob b = { malloc(len), 0 };

	if (b.p && compress2(b.p, &len, in, n, 9) == Z_OK)
		b.len = len;
	return b;
}

/* An SHF_COMPRESSED section's bytes: Elf64_Chdr (zlib, @n) and @in deflated. */
static struct blob chdr_of(const void *in, size_t n)
{
	struct blob z = deflated(in, n), b = { malloc(sizeof(Elf64_Chdr) + z.len), 0 };
	Elf64_Chdr ch = { .ch_type = ELFCOMPRESS_ZLIB, .ch_size = n, .ch_addralign = 1 };

	if (b.p && z.p) {
		memcpy(b.p, &ch, sizeof(ch));
		memcpy(b.p + sizeof(ch), z.p, z.len);
		b.len = sizeof(ch) + z.len;
	}
	free(z.p);
	return b;
}

/* A .zdebug_* section's bytes: "ZLIB", @n big-endian and @in deflated. */
static struct blob gnu_of(const void *in, size_t n)
{
	struct blob z = deflated(in, n), b = { malloc(12 + z.len), 0 };
	__u64 be = htobe64(n);

	if (b.p && z.p) {
		memcpy(b.p, "ZLIB", 4);
		memcpy(b.p + 4, &be, 8);
		memcpy(b.p + 12, z.p, z.len);
		b.len = 12 + z.len;
	}
	free(z.p);
	return b;
}

static struct blob xz_of(const void *in, size_t n)
{
	struct blob b = { malloc(n + 4096), 0 };

	if (b.p && lzma_easy_buffer_encode(6, LZMA_CHECK_CRC64, NULL, in, n, b.p, &b.len,
					   n + 4096) != LZMA_OK)
		b.len = 0;
	return b;
}

/*
 * A 64-bit ELF image of @sects after a null section, then its names
 * (.shstrtab): deflated as an SHF_COMPRESSED section padded with zeros to
 * @names_size bytes when that is not 0.
 */
static struct blob image(const struct sect *s, int n, size_t names_size)
{
	size_t names_len = 1 + strlen(".shstrtab") + 1, off = sizeof(Elf64_Ehdr), name_off = 1;
	struct blob b = {}, names_z = {};
	unsigned char *names;
	Elf64_Ehdr *eh;
	Elf64_Shdr *sh;

	for (int i = 0; i < n; i++)
		names_len += strlen(s[i].name) + 1;
	names = calloc(1, names_len > names_size ? names_len : names_size);
	if (!names)
		return b;
	for (int i = 0; i < n; i++) {
		strcpy((char *)names + name_off, s[i].name);
		name_off += strlen(s[i].name) + 1;
	}
	strcpy((char *)names + name_off, ".shstrtab");
	if (names_size)
		names_z = chdr_of(names, names_size);
	for (int i = 0; i < n; i++)
		off = (off + s[i].size + 7) & ~7UL;
	b.len = off + (names_size ? names_z.len : names_len);
	b.len = ((b.len + 7) & ~7UL) + (n + 2) * sizeof(Elf64_Shdr);
	b.p = calloc(1, b.len);
	if (!b.p || (names_size && !names_z.len)) {
		free(names);
		free(names_z.p);
		free(b.p);
		return (struct blob){};
	}
	eh = (Elf64_Ehdr *)b.p;
	memcpy(eh->e_ident, ELFMAG, SELFMAG);
	eh->e_ident[EI_CLASS] = ELFCLASS64;
	eh->e_ident[EI_DATA] = ELFDATA2LSB;
	eh->e_ident[EI_VERSION] = EV_CURRENT;
	eh->e_type = ET_DYN;
	eh->e_machine = EM_X86_64;
	eh->e_version = EV_CURRENT;
	eh->e_ehsize = sizeof(*eh);
	eh->e_shentsize = sizeof(*sh);
	eh->e_shnum = n + 2;
	eh->e_shstrndx = n + 1;
	eh->e_shoff = b.len - (n + 2) * sizeof(*sh);
	sh = (Elf64_Shdr *)(b.p + eh->e_shoff);
	off = sizeof(*eh);
	name_off = 1;
	for (int i = 0; i < n; i++) {
		sh[i + 1] = (Elf64_Shdr){ .sh_name = name_off, .sh_type = s[i].type,
					  .sh_flags = s[i].flags, .sh_offset = off,
					  .sh_size = s[i].size, .sh_addralign = 1 };
		memcpy(b.p + off, s[i].data, s[i].size);
		name_off += strlen(s[i].name) + 1;
		off = (off + s[i].size + 7) & ~7UL;
	}
	sh[n + 1] = (Elf64_Shdr){ .sh_name = name_off, .sh_type = SHT_STRTAB, .sh_offset = off,
				  .sh_size = names_size ? names_z.len : names_len,
				  .sh_flags = names_size ? SHF_COMPRESSED : 0, .sh_addralign = 1 };
	memcpy(b.p + off, names_size ? names_z.p : names, sh[n + 1].sh_size);
	free(names);
	free(names_z.p);
	return b;
}

static Elf *open_image(struct blob *b)
{
	Elf *elf = b->len ? elf_memory((char *)b->p, b->len) : NULL;

	return elf && elf_kind(elf) == ELF_K_ELF ? elf : NULL;
}

/* Section @ndx's header. */
static GElf_Shdr shdr(Elf *elf, size_t ndx)
{
	GElf_Shdr sh = {};

	gelf_getshdr(elf_getscn(elf, ndx), &sh);
	return sh;
}

static bool hidden(Elf *elf, size_t ndx)
{
	GElf_Shdr sh = shdr(elf, ndx);

	return sh.sh_type == SHT_NOBITS && !sh.sh_size && !sh.sh_name &&
	       !(sh.sh_flags & SHF_COMPRESSED);
}

/* What zsects__check() says of @b for @use, its count in *@bytes. */
static int check(struct blob *b, enum zsects_use use, __u64 *bytes)
{
	Elf *elf = open_image(b);
	int err = elf ? zsects__check(elf, use, bytes) : -EINVAL;

	if (elf)
		elf_end(elf);
	return err;
}

static void test_plain(void)
{
	unsigned char *text = texty(4096);
	struct sect s[] = { { ".debug_info", SHT_PROGBITS, 0, text, 4096 } };
	struct blob b = image(s, 1, 0);
	Elf *elf = open_image(&b);
	__u64 bytes = 1;

	CHECK(elf, "an image without compressed sections opens");
	if (elf) {
		CHECK_EQ_S64(zsects__check(elf, ZSECTS_DWARF, &bytes), 0, "within the bound");
		CHECK_EQ_U64(bytes, 0, "nothing inflates");
		CHECK_EQ_S64(zsects__guard(elf, ZSECTS_DWARF), 0, "nothing hidden");
		CHECK_EQ_U64(shdr(elf, 1).sh_type, SHT_PROGBITS, "the section is as it was");
		elf_end(elf);
	}
	free(b.p);
	free(text);
}

/* DWARF as compilers compress it: counted at its size, left for libelf to inflate. */
static void test_chdr_within(void)
{
	size_t n = 256 << 10;
	unsigned char *text = texty(n);
	struct blob z = chdr_of(text, n);
	struct sect s[] = { { ".debug_info", SHT_PROGBITS, SHF_COMPRESSED, z.p, z.len } };
	struct blob b = image(s, 1, 0);
	Elf *elf = open_image(&b);
	__u64 bytes = 0;

	CHECK_EQ_S64(check(&b, ZSECTS_DWARF, &bytes), 0, "DWARF deflated %zu to %zu: within",
		     n, z.len);
	CHECK_EQ_U64(bytes, n, "counted at its declared size");
	if (elf) {
		Elf_Data *d;

		CHECK_EQ_S64(zsects__guard(elf, ZSECTS_DWARF), 0, "nothing refused");
		CHECK(shdr(elf, 1).sh_flags & SHF_COMPRESSED, "the section is left compressed");
		CHECK(elf_compress(elf_getscn(elf, 1), 0, 0) == 1, "libelf inflates it");
		d = elf_getdata(elf_getscn(elf, 1), NULL);
		CHECK(d && d->d_size == n && !memcmp(d->d_buf, text, n), "to the bytes counted");
		elf_end(elf);
	}
	free(b.p);
	free(z.p);
	free(text);
}

/* zeros: 8 MiB from 8 KiB of zlib, as SHF_COMPRESSED and as .zdebug_* */
static void test_zlib_bombs(void)
{
	unsigned char *zeros = calloc(1, 8 * MIB);
	struct blob c = chdr_of(zeros, 8 * MIB), g = gnu_of(zeros, 8 * MIB);
	const char *text = "not compressed";
	struct sect s[] = {
		{ ".debug_info", SHT_PROGBITS, SHF_COMPRESSED, c.p, c.len },
		{ ".text", SHT_PROGBITS, SHF_ALLOC | SHF_EXECINSTR, text, strlen(text) },
		{ ".zdebug_frame", SHT_PROGBITS, 0, g.p, g.len },
	};
	struct blob b = image(s, 3, 0), bg = image(&s[2], 1, 0);
	__u64 bytes = 0;
	Elf *elf;

	CHECK_EQ_S64(check(&b, ZSECTS_DWARF, &bytes), -EFBIG, "8 MiB of zeros from %zu bytes",
		     c.len + g.len);
	CHECK_EQ_U64(bytes, 16 * MIB, "both counted at their declared sizes");
	CHECK_EQ_S64(check(&bg, ZSECTS_CFI, &bytes), -EFBIG, "a .zdebug_frame bomb: refused");
	CHECK_EQ_S64(check(&b, ZSECTS_SYMBOLS, &bytes), 0, "symbols need neither");
	elf = open_image(&b);
	if (elf) {
		CHECK_EQ_S64(zsects__guard(elf, ZSECTS_DWARF), 1, "DWARF: refused");
		CHECK(hidden(elf, 1) && hidden(elf, 3), "both bombs hidden");
		CHECK_EQ_U64(shdr(elf, 2).sh_type, SHT_PROGBITS, "the code section is untouched");
		CHECK(elf_compress(elf_getscn(elf, 1), 0, 0) < 0, "libelf finds nothing to inflate");
		elf_end(elf);
	}
	free(b.p);
	b = image(s, 3, 0); /* elf_memory() reads the headers in place: hidden there */
	elf = open_image(&b);
	if (elf) {
		/* libdw's DWARF reader would inflate .debug_info for the unwind tables too */
		CHECK_EQ_S64(zsects__guard(elf, ZSECTS_CFI), 1, "CFI: .zdebug_frame refused");
		CHECK(hidden(elf, 1), "CFI: .debug_info, which it does not read, hidden too");
		elf_end(elf);
	}
	free(b.p);
	free(bg.p);
	free(c.p);
	free(g.p);
	free(zeros);
}

/* Bytes that do compress to what they declare, yet the cap holds. */
static void test_cap(void)
{
	size_t packed = 17 * MIB; /* 32 times is 544 MiB */
	unsigned char *p = calloc(1, packed);
	struct sect s[] = { { ".debug_info", SHT_PROGBITS, SHF_COMPRESSED, p, packed } };
	Elf64_Chdr ch = { .ch_type = ELFCOMPRESS_ZLIB, .ch_addralign = 1 };
	struct blob b;
	__u64 bytes;

	if (!CHECK(p, "17 MiB"))
		return;
	ch.ch_size = 500 * MIB;
	memcpy(p, &ch, sizeof(ch));
	b = image(s, 1, 0);
	CHECK_EQ_S64(check(&b, ZSECTS_DWARF, &bytes), 0, "500 MiB from 17 MiB: within");
	free(b.p);
	ch.ch_size = ZSECTS_MAX_BYTES + 1;
	memcpy(p, &ch, sizeof(ch));
	b = image(s, 1, 0);
	CHECK_EQ_S64(check(&b, ZSECTS_DWARF, &bytes), -EFBIG, "past 512 MiB: refused");
	free(b.p);
	free(p);
}

/*
 * DWARF stays open for the run: files each within their own bound add up
 * to no more than the run's budget.
 */
static void test_budget(void)
{
	size_t packed = 8 * MIB; /* 32 times is 256 MiB */
	unsigned char *p = calloc(1, packed);
	struct sect s[] = { { ".debug_info", SHT_PROGBITS, SHF_COMPRESSED, p, packed } };
	Elf64_Chdr ch = { .ch_type = ELFCOMPRESS_ZLIB, .ch_size = 200 * MIB, .ch_addralign = 1 };
	struct blob b;
	Elf *elf;
	int i;

	if (!CHECK(p, "8 MiB"))
		return;
	memcpy(p, &ch, sizeof(ch));
	zsects__budget_reset();
	/* a new image each time: hiding a section writes in the image */
	for (i = 0; i < 3; i++) {
		b = image(s, 1, 0);
		elf = open_image(&b);
		if (!CHECK(elf, "file %d opened", i))
			continue;
		/* 200 MiB each: the first fits in 384, the second would not */
		CHECK_EQ_S64(zsects__guard(elf, ZSECTS_DWARF), i ? 1 : 0,
			     "file %d: %s", i, i ? "past the run's budget, refused" : "within");
		CHECK(i ? hidden(elf, 1) : !hidden(elf, 1), "file %d: %s", i,
		      i ? "hidden" : "left to read");
		elf_end(elf);
		free(b.p);
	}
	b = image(s, 1, 0);
	elf = open_image(&b);
	if (elf) {
		CHECK_EQ_S64(zsects__guard(elf, ZSECTS_CFI), 0, "a reader that lets go: no budget");
		elf_end(elf);
	}
	CHECK_EQ_S64(zsects__debit(ZSECTS_RUN_MAX_BYTES - 200 * MIB), 0, "the rest: taken");
	CHECK_EQ_S64(zsects__debit(1), -EFBIG, "then nothing more");
	zsects__budget_reset();
	CHECK_EQ_S64(zsects__debit(ZSECTS_RUN_MAX_BYTES), 0, "reset: all of it again");
	zsects__budget_reset();
	free(b.p);
	free(p);
}

/* MiniDebugInfo: an ELF file with a symbol table, in xz. */
static void test_xz_within(void)
{
	size_t n = 64 << 10;
	unsigned char *text = texty(n);
	struct sect in[] = { { ".strtab", SHT_STRTAB, 0, text, n } };
	struct blob inner = image(in, 1, 0), x = xz_of(inner.p, inner.len);
	struct sect s[] = { { ".gnu_debugdata", SHT_PROGBITS, 0, x.p, x.len } };
	struct blob b = image(s, 1, 0);
	Elf *elf = open_image(&b);
	__u64 bytes = 0;

	CHECK_EQ_S64(check(&b, ZSECTS_SYMBOLS, &bytes), 0, "%zu bytes of xz: within", x.len);
	CHECK_EQ_U64(bytes, inner.len, "counted at what it decodes to");
	if (elf) {
		CHECK_EQ_S64(zsects__guard(elf, ZSECTS_SYMBOLS), 0, "symbols: nothing refused");
		CHECK_EQ_U64(shdr(elf, 1).sh_type, SHT_PROGBITS, "left for libdw");
		elf_end(elf);
	}
	free(b.p);
	free(x.p);
	free(inner.p);
	free(text);
}

static void test_xz_bombs(void)
{
	unsigned char *zeros = calloc(1, 16 * MIB);
	struct blob x = xz_of(zeros, 16 * MIB), zc = chdr_of(zeros, 16 * MIB);
	struct sect s[] = { { ".gnu_debugdata", SHT_PROGBITS, 0, x.p, x.len } };
	struct sect in[] = { { ".symtab", SHT_SYMTAB, SHF_COMPRESSED, zc.p, zc.len } };
	struct blob b = image(s, 1, 0), inner = image(in, 1, 0), xi = xz_of(inner.p, inner.len);
	struct sect s2[] = { { ".gnu_debugdata", SHT_PROGBITS, 0, xi.p, xi.len } };
	struct blob b2 = image(s2, 1, 0);
	__u64 bytes = 0;
	Elf *elf;

	CHECK_EQ_S64(check(&b, ZSECTS_SYMBOLS, &bytes), -EFBIG, "16 MiB of zeros from %zu bytes",
		     x.len);
	CHECK(bytes <= ZSECTS_RATIO * x.len + 1, "decoding stopped at the bound (%llu bytes)",
	      (unsigned long long)bytes);
	CHECK_EQ_S64(check(&b, ZSECTS_CFI, &bytes), 0, "the unwind tables do not read it");
	CHECK_EQ_S64(check(&b2, ZSECTS_SYMBOLS, &bytes), -EFBIG,
		     "an ELF file in %zu bytes of xz whose own .symtab is a bomb", xi.len);
	elf = open_image(&b);
	if (elf) {
		CHECK_EQ_S64(zsects__guard(elf, ZSECTS_SYMBOLS), 1, "refused");
		CHECK(hidden(elf, 1), "hidden: libdw looks for it by name");
		elf_end(elf);
	}
	free(b.p);
	free(b2.p);
	free(inner.p);
	free(xi.p);
	free(x.p);
	free(zc.p);
	free(zeros);
}

/* Names and symbol names are inflated on the first lookup, by whatever reads them. */
static void test_strings(void)
{
	unsigned char *zeros = calloc(1, 8 * MIB);
	struct blob zc = chdr_of(zeros, 8 * MIB);
	const char *text = "not compressed";
	struct sect code[] = { { ".text", SHT_PROGBITS, SHF_ALLOC, text, strlen(text) } };
	struct sect strs[] = { { ".strtab", SHT_STRTAB, SHF_COMPRESSED, zc.p, zc.len } };
	struct blob small = image(code, 1, 64), bomb = image(code, 1, 8 * MIB);
	struct blob sb = image(strs, 1, 0);
	__u64 bytes;
	Elf *elf;

	CHECK_EQ_S64(check(&small, ZSECTS_NAMES, &bytes), 0, "names compressed a little: read");
	elf = open_image(&small);
	if (elf) {
		CHECK_EQ_S64(zsects__guard(elf, ZSECTS_NAMES), 0, "nothing refused");
		CHECK_STREQ(elf_strptr(elf, 2, shdr(elf, 1).sh_name), ".text", "names read");
		elf_end(elf);
	}
	CHECK_EQ_S64(check(&bomb, ZSECTS_NAMES, &bytes), -EFBIG, "names that are a bomb");
	CHECK_EQ_S64(check(&bomb, ZSECTS_CFI, &bytes), -EFBIG, "refused for every reader");
	elf = open_image(&bomb);
	if (elf) {
		CHECK_EQ_S64(zsects__guard(elf, ZSECTS_NAMES), 1, "refused");
		CHECK(hidden(elf, 2), "hidden");
		CHECK(!elf_strptr(elf, 2, 1), "no name inflates them");
		elf_end(elf);
	}
	CHECK_EQ_S64(check(&sb, ZSECTS_CFI, &bytes), -EFBIG, "a .strtab bomb: refused for CFI");
	CHECK_EQ_S64(check(&sb, ZSECTS_SYMBOLS, &bytes), -EFBIG, "and for symbols");
	CHECK_EQ_S64(check(&sb, ZSECTS_NAMES, &bytes), 0, "not for section names");
	free(small.p);
	free(bomb.p);
	free(sb.p);
	free(zc.p);
	free(zeros);
}

int main(void)
{
	elf_version(EV_CURRENT);
	test_plain();
	test_chdr_within();
	test_zlib_bombs();
	test_cap();
	test_budget();
	test_xz_within();
	test_xz_bombs();
	test_strings();
	return unit_done();
}
