#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Decompression bombs for ELF files, built in a second or two without
writing what they inflate to (tests/integration/hostile_bombs.sh adds them
to copies of a workload). SIZE is a multiple of 16 MiB.

  elfbomb.py chdr OUT SIZE        an SHF_COMPRESSED section's bytes: an
                                  Elf64_Chdr (ELFCOMPRESS_ZLIB, ch_size SIZE)
                                  and a zlib stream of SIZE zero bytes
  elfbomb.py zdebug OUT SIZE      a .zdebug_* section's bytes: "ZLIB", SIZE
                                  (8 bytes, big-endian) and that zlib stream
  elfbomb.py xz OUT SIZE          an xz stream of SIZE zero bytes
  elfbomb.py compress ELF NAME    set SHF_COMPRESSED on section NAME of ELF
                                  (64-bit, little-endian), in place
  elfbomb.py names ELF SIZE       make ELF's section names an SHF_COMPRESSED
                                  table of SIZE bytes: the names, then zeros
  elfbomb.py padded ELF SIZE      make ELF's .debug_str an SHF_COMPRESSED
                                  section of SIZE bytes: its strings, 8 MiB
                                  of random bytes (so that the file's own
                                  bound is 256 MiB), then zeros
  elfbomb.py altform ELF -        subprograms' names in ELF's DWARF read from
                                  a dwz alt file (DW_FORM_strp_sup)
  elfbomb.py altlink OUT PATH:ALT a .gnu_debugaltlink naming PATH, with the
                                  build-id of ELF file ALT

A stream of zeros repeats: one chunk is compressed once and its bytes
repeated (deflate after a full flush, xz as one block per chunk).
"""
import lzma
import struct
import sys
import zlib

CHUNK = 16 << 20
SHF_COMPRESSED = 0x800
ELFCOMPRESS_ZLIB = 1
ADLER_MOD = 65521


def zlib_zeros(size, prefix=b""):
    """A zlib stream inflating to @prefix and zeros, @size bytes in all."""
    assert size % CHUNK == 0 and size and len(prefix) < CHUNK
    c = zlib.compressobj(9)
    first = prefix + bytes(CHUNK - len(prefix))
    out = c.compress(first) + c.flush(zlib.Z_FULL_FLUSH)
    zeros = bytes(CHUNK)
    again = c.compress(zeros) + c.flush(zlib.Z_FULL_FLUSH)
    # after a full flush the compressor starts afresh: a chunk's bytes repeat
    assert again == c.compress(zeros) + c.flush(zlib.Z_FULL_FLUSH)
    out += again * (size // CHUNK - 1)
    adler = zlib.adler32(first)
    a, b = adler & 0xFFFF, adler >> 16
    b = (b + (size - CHUNK) * a) % ADLER_MOD  # zeros leave a, add a to b each
    # an empty final fixed-Huffman block, then the Adler-32
    return out + b"\x03\x00" + struct.pack(">I", b << 16 | a)


def chdr(size, prefix=b""):
    return struct.pack("<IIQQ", ELFCOMPRESS_ZLIB, 0, size, 1) + zlib_zeros(size, prefix)


def varint(v):
    out = bytearray()
    while v >= 0x80:
        out.append((v & 0x7F) | 0x80)
        v >>= 7
    out.append(v)
    return bytes(out)


def read_varint(b, i):
    v = shift = 0
    while True:
        v |= (b[i] & 0x7F) << shift
        shift += 7
        i += 1
        if not b[i - 1] & 0x80:
            return v, i


def xz_zeros(size):
    """An xz stream of @size zero bytes: one block of CHUNK zeros, repeated."""
    assert size % CHUNK == 0 and size
    one = lzma.compress(bytes(CHUNK), format=lzma.FORMAT_XZ, check=lzma.CHECK_CRC32)
    header, footer = one[:12], one[-12:]
    index_size = (struct.unpack("<I", footer[4:8])[0] + 1) * 4
    index = one[-12 - index_size:-12]
    block = one[12:-12 - index_size]
    nrec, i = read_varint(index, 1)
    unpadded, i = read_varint(index, i)
    uncompressed, i = read_varint(index, i)
    assert index[0] == 0 and nrec == 1 and uncompressed == CHUNK
    n = size // CHUNK
    idx = bytearray(b"\x00" + varint(n) + (varint(unpadded) + varint(uncompressed)) * n)
    idx += bytes(-len(idx) % 4)
    idx += struct.pack("<I", zlib.crc32(idx))
    back = struct.pack("<I", len(idx) // 4 - 1) + header[6:8]
    return header + block * n + bytes(idx) + struct.pack("<I", zlib.crc32(back)) + back + b"YZ"


class Elf:
    def __init__(self, path):
        self.path = path
        with open(path, "rb") as f:
            self.b = bytearray(f.read())
        assert self.b[:4] == b"\x7fELF" and self.b[4] == 2 and self.b[5] == 1
        self.shoff, = struct.unpack_from("<Q", self.b, 0x28)
        self.shentsize, self.shnum, self.shstrndx = struct.unpack_from("<HHH", self.b, 0x3A)

    def sh(self, k):
        return self.shoff + k * self.shentsize

    def field(self, k, off, v=None):
        if v is None:
            return struct.unpack_from("<Q", self.b, self.sh(k) + off)[0]
        struct.pack_into("<Q", self.b, self.sh(k) + off, v)

    def find(self, name):
        strs = self.field(self.shstrndx, 0x18)
        for k in range(self.shnum):
            nm, = struct.unpack_from("<I", self.b, self.sh(k))
            end = self.b.index(b"\0", strs + nm)
            if self.b[strs + nm:end].decode() == name:
                return k
        sys.exit("elfbomb.py: no section %s in %s" % (name, self.path))

    def save(self):
        with open(self.path, "wb") as f:
            f.write(self.b)


def set_compressed(path, name):
    elf = Elf(path)
    k = elf.find(name)
    elf.field(k, 0x08, elf.field(k, 0x08) | SHF_COMPRESSED)
    elf.save()


def compress_names(path, size):
    """The names moved to the end of the file, as a compressed table."""
    elf = Elf(path)
    k = elf.shstrndx
    off, n = elf.field(k, 0x18), elf.field(k, 0x20)
    data = chdr(size, bytes(elf.b[off:off + n]))
    elf.b += bytes(-len(elf.b) % 8)
    elf.field(k, 0x18, len(elf.b))
    elf.field(k, 0x20, len(data))
    elf.field(k, 0x08, elf.field(k, 0x08) | SHF_COMPRESSED)
    elf.field(k, 0x30, 8)
    elf.b += data
    elf.save()


def padded(path, size):
    """.debug_str moved to the end of the file, compressed, padded."""
    import os
    elf = Elf(path)
    k = elf.find(".debug_str")
    off, n = elf.field(k, 0x18), elf.field(k, 0x20)
    data = chdr(size, bytes(elf.b[off:off + n]) + os.urandom(8 << 20))
    elf.b += bytes(-len(elf.b) % 8)
    elf.field(k, 0x18, len(elf.b))
    elf.field(k, 0x20, len(data))
    elf.field(k, 0x08, elf.field(k, 0x08) | SHF_COMPRESSED)
    elf.field(k, 0x30, 8)
    elf.b += data
    elf.save()


def read_uleb(b, i):
    v, i = read_varint(b, i)
    return v, i


def altform(path):
    """DW_AT_name of DW_TAG_subprogram: DW_FORM_strp to DW_FORM_strp_sup (one byte each)."""
    elf = Elf(path)
    k = elf.find(".debug_abbrev")
    i, end = elf.field(k, 0x18), elf.field(k, 0x18) + elf.field(k, 0x20)
    changed = 0
    while i < end:
        code, i = read_uleb(elf.b, i)
        if not code:
            continue
        tag, i = read_uleb(elf.b, i)
        i += 1  # children
        while True:
            attr, i = read_uleb(elf.b, i)
            at_form = i
            form, i = read_uleb(elf.b, i)
            if form == 0x21:  # implicit_const: a signed LEB128 follows
                _, i = read_uleb(elf.b, i)
            if not attr and not form:
                break
            if tag == 0x2E and attr == 0x03 and form == 0x0E:
                elf.b[at_form] = 0x1D
                changed += 1
    assert changed, "no subprogram name to change"
    elf.save()


def altlink(out, arg):
    path, alt = arg.split(":", 1)
    elf = Elf(alt)
    k = elf.find(".note.gnu.build-id")
    off = elf.field(k, 0x18)
    namesz, descsz = struct.unpack_from("<II", elf.b, off)
    desc = off + 12 + (namesz + 3) // 4 * 4
    with open(out, "wb") as f:
        f.write(path.encode() + b"\0" + bytes(elf.b[desc:desc + descsz]))


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    what, a, b = sys.argv[1:]
    if what == "compress":
        set_compressed(a, b)
    elif what == "names":
        compress_names(a, int(b))
    elif what == "padded":
        padded(a, int(b))
    elif what == "altform":
        altform(a)
    elif what == "altlink":
        altlink(a, b)
    elif what in ("chdr", "zdebug", "xz"):
        size = int(b)
        if what == "chdr":
            data = chdr(size)
        elif what == "zdebug":
            data = b"ZLIB" + struct.pack(">Q", size) + zlib_zeros(size)
        else:
            data = xz_zeros(size)
        with open(a, "wb") as f:
            f.write(data)
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
