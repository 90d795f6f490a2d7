#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Files that are not recordings, and large once inflated, given to wprof
# report and wprof diff: refused from their first bytes, before the rest
# is inflated or read (needs neither root nor BPF):
# - a gzip of 1 GiB of zeros (1 MB): report exits 1 with one line, "not a
#   wprof recording", in less than 0.5 s and 50 MiB (it inflated the whole
#   GiB first: 2 s, 1 GiB); diff exits 2 with one line saying it is gzip
#   data, from the file and from standard input;
# - a gzip of the magic, a version from the future, then 1 GiB of zeros:
#   "newer than this wprof", as fast;
# - a 1 GiB file that is not gzip (sparse): "not a wprof recording, nor folded text", as fast
#   (it was read whole first, then refused as too large).
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"
[ -x "$WPROF" ] || fatal "wprof binary $WPROF not built (run make)"

# zeros_gz MIB [HEAD]: a gzip of HEAD (python escapes) and MIB MiB of zeros, on stdout,
# made fast: a MiB of zeros deflated after a full flush gives the same bytes each time
zeros_gz()
{
	python3 -c '
import struct, sys, zlib
mib, head = int(sys.argv[1]), sys.argv[2].encode().decode("unicode_escape").encode("latin1")
out, zero = sys.stdout.buffer, bytes(1 << 20)
c = zlib.compressobj(9, zlib.DEFLATED, -15)
out.write(b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\xff" + c.compress(head) + c.flush(zlib.Z_FULL_FLUSH))
block = c.compress(zero) + c.flush(zlib.Z_FULL_FLUSH)
crc = zlib.crc32(head)
for _ in range(mib):
	out.write(block)
	crc = zlib.crc32(zero, crc)
out.write(c.flush() + struct.pack("<II", crc, (len(head) + (mib << 20)) & 0xffffffff))' "$1" "${2:-}"
}

# refused NAME RC ERE: exit RC, one line on stderr matching ERE, fast and small
refused()
{
	check "$1: exit $2 (got $RC)" test "$RC" -eq "$2"
	check "$1: one line on stderr matching /$3/ ($(head -c 300 "$TMP/$1.err"))" \
		test "$(wc -l <"$TMP/$1.err")" -eq 1 -a -n "$(grep -E "$3" "$TMP/$1.err")"
	check_le "$1: time (ms)" "$ELAPSED_MS" 500
	check_le "$1: peak RSS (KiB)" "$RSS_KB" 51200
}

t0=$(now_ms)
zeros_gz 1024 >"$TMP/zeros.gz" || fatal "cannot make zeros.gz"
zeros_gz 1024 'WPROFREC\x63\x00\x00\x00' >"$TMP/newer.gz" || fatal "cannot make newer.gz"
log "two gzip files of 1 GiB made in $(($(now_ms) - t0)) ms"
check "zeros.gz is a gzip of 1 GiB" \
	test "$(gzip -l "$TMP/zeros.gz" | awk 'NR == 2 { print $2 }')" -eq $((1 << 30))
truncate -s 1G "$TMP/big.txt"

run_wprof_rss zeros report "$TMP/zeros.gz"
refused zeros 1 "^wprof: .*/zeros.gz: not a wprof recording$"
run_wprof_rss newer report "$TMP/newer.gz"
refused newer 1 "recording version 99 is newer than this wprof"
run_wprof_rss big report "$TMP/big.txt"
refused big 1 "big.txt: not a wprof recording, nor folded text \(its first line is no .frame;frame;... WEIGHT.\)$"

# a histogram section of 2 million entries of no slot: 8 bytes each in the
# file, 264 in memory; every writer writes all the slots, so it is corrupt
python3 -c '
import gzip, struct, sys
def sec(tag, body): return struct.pack("<IQ", tag, len(body)) + body
n = 2000000
hists = struct.pack("<I", n) + struct.pack("<II", 7, 0) * n
sys.stdout.buffer.write(gzip.compress(b"WPROFREC" + struct.pack("<I", 2) + sec(8, hists) +
				       sec(0, b""), 9))' >"$TMP/hists.wprof" || fatal "cannot make hists.wprof"
run_wprof_rss hists report "$TMP/hists.wprof"
refused hists 1 "corrupt recording \(histograms"

printf 'a;b 1\n' >"$TMP/x.folded"
run_wprof_rss diff_zeros diff "$TMP/zeros.gz" "$TMP/x.folded"
refused diff_zeros 2 "zeros.gz:1: not a folded line .*gzip data"
run_wprof_rss diff_stdin diff - "$TMP/x.folded" <"$TMP/zeros.gz"
refused diff_stdin 2 "standard input:1: not a folded line .*gzip data"
run_wprof_rss diff_newer diff "$TMP/x.folded" "$TMP/newer.gz"
refused diff_newer 2 "newer.gz: recording version 99 is newer than this wprof"
finish
