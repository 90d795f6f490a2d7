#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Stacks no wprof writes (it writes at most 514 frames of 255 bytes), in
# the files wprof diff and wprof report read (needs neither root nor BPF):
# - folded text with a stack of 40000 frames (a flame graph drawn by
#   recursion overflowed at some 35000: SIGSEGV), to diff as svg, folded
#   and table: exit 0, the stack cut to 2048 frames (its first ones, the
#   marker, its leaf), the cut counted on stderr (stacks_cut_on_read);
# - a line of 5 million frames (10 MB), and the same on standard input:
#   each run in less than 200 MiB (the line was held whole and each of its
#   frames made a node of the tree: 13 GB for 50 million);
# - a saved recording with that line (written here, as recfile.h
#   describes the format) to report -o x.svg and -f json, and to diff: the
#   same, and report's summary and JSON count the cut stack.
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"
[ -x "$WPROF" ] || fatal "wprof binary $WPROF not built (run make)"
MARK='[cut: too long to read]'

# cut_counted NAME FILE: exit 0, in less than 200 MiB, and one stack of FILE said cut
cut_counted()
{
	check "$1: exit 0 (got $RC)" test "$RC" -eq 0
	check_le "$1: peak RSS (KiB)" "$RSS_KB" 204800
	check "$1: the cut stack counted on stderr" grep -Fq "wprof: lost: 1 stacks of $2 cut to 2048 frames and 1 MiB when read, the frame $MARK in place of the rest [stacks_cut_on_read]" "$TMP/$1.err"
}

# frames FILE: the frames of FILE's deepest line (a space ends the stack)
frames()
{
	awk -F';' '{ sub(/ [0-9 ]+$/, ""); if (NF > max) max = NF } END { print max + 0 }' "$1"
}

python3 -c '
import sys
d = sys.argv[1]
with open(d + "/deep.folded", "w") as f:
	f.write("on-cpu;deep;" + ";".join("f%d" % i for i in range(40000)) + " 100\non-cpu;deep;f0 50\n")
with open(d + "/huge.folded", "w") as f:
	f.write("on-cpu;huge;" + "fr;" * 5000000 + "leaf 70\non-cpu;huge;x 30\n")' "$TMP" ||
	fatal "cannot write the folded files"
printf 'on-cpu;deep;f0 60\non-cpu;huge;x 40\n' >"$TMP/base.folded"

# --- 40000 frames, every format ---
run_wprof_rss svg diff --group thread -o "$TMP/deep.svg" "$TMP/base.folded" "$TMP/deep.folded"
cut_counted svg "$TMP/deep.folded"
check "svg: the marker and the leaf drawn, 2048 frames under the root" \
	python3 -c '
import re, sys, xml.dom.minidom
s = open(sys.argv[1]).read()
xml.dom.minidom.parseString(s)
depth = max(int(d) for d in re.findall(r"data-d=\"(\d+)\"", s))
sys.exit(not ("data-n=\"" + sys.argv[2] + "\"" in s and "data-n=\"f39999\"" in s and depth == 2048))' \
	"$TMP/deep.svg" "$MARK"
run_wprof_rss folded diff --group thread -f folded -o "$TMP/deep.out" "$TMP/base.folded" "$TMP/deep.folded"
cut_counted folded "$TMP/deep.folded"
check "folded: the stack of 2048 frames, its first 2046, the marker, its leaf" \
	grep -Fq "on-cpu;deep;f0;f1;f2;" "$TMP/deep.out"
check "folded: ... ending ;f2043;$MARK;f39999" grep -Fq ";f2043;$MARK;f39999 0 100" "$TMP/deep.out"
check "folded: no deeper line ($(frames "$TMP/deep.out"))" test "$(frames "$TMP/deep.out")" -eq 2048
run_wprof_rss table diff "$TMP/deep.folded" "$TMP/base.folded"
cut_counted table "$TMP/deep.folded"

# --- 5 million frames: bounded memory, from the file and from stdin ---
run_wprof_rss huge diff -o "$TMP/huge.svg" "$TMP/base.folded" "$TMP/huge.folded"
cut_counted huge "$TMP/huge.folded"
check "huge: the flame graph ends with the leaf above the marker" \
	grep -Fq "data-n=\"leaf\"" "$TMP/huge.svg"
run_wprof_rss huge_stdin diff --group thread -f folded "$TMP/base.folded" - <"$TMP/huge.folded"
cut_counted huge_stdin -
check "huge on stdin: the line cut, its weight kept" \
	grep -Eq "^on-cpu;huge;fr;(fr;)+\[cut: too long to read\];leaf 0 70$" "$TMP/huge_stdin.out"

# --- a saved recording with the 5-million-frame line ---
python3 -c '
import gzip, struct, sys
def s(b): return struct.pack("<I", len(b)) + b
def sec(tag, body): return struct.pack("<IQ", tag, len(body)) + body
info = s(b"pid 100 (huge)") + s(b"huge") + s(b"wprof record -p 100") + struct.pack("<QQQQI", 1, 1000000, 1000, 1000, 2)
thread = struct.pack("<III", 100, 101, 7) + s(b"huge") + s(b"huge") + struct.pack("<7Q", 1000000, 700000, 1000, 700, 70, 0, 0)
thread += struct.pack("<I", 4) + b"".join(struct.pack("<QQQI", 0, 0, 0, 0) for _ in range(4)) + struct.pack("<I", 4)
lines = [b"on-cpu;100;101;huge;" + b"fr;" * 5000000 + b"leaf", b"on-cpu;100;101;huge;x"]
body = struct.pack("<Q", len(lines)) + b"".join(s(l) + struct.pack("<QQQ", 700 - 400 * i, 1, 1) for i, l in enumerate(lines))
rec = b"WPROFREC" + struct.pack("<I", 1) + sec(1, info) + sec(7, struct.pack("<I", 1) + thread) + sec(9, body) + sec(0, b"")
open(sys.argv[1], "wb").write(gzip.compress(rec))' "$TMP/huge.wprof" || fatal "cannot write huge.wprof"
run_wprof_rss rec_svg report -o "$TMP/rec.svg" "$TMP/huge.wprof"
check "report -o rec.svg: exit 0 (got $RC)" test "$RC" -eq 0
check_le "report -o rec.svg: peak RSS (KiB)" "$RSS_KB" 204800
check "report: the summary counts the cut stack" grep -Fq "wprof: lost: 1 stacks of the file cut to 2048 frames and 1 MiB when read, the frame $MARK in place of the rest [stacks_cut_on_read]" "$TMP/rec_svg.err"
check "report -o rec.svg: the leaf drawn" grep -Fq "data-n=\"leaf\"" "$TMP/rec.svg"
run_wprof_rss rec_json report -q -f json "$TMP/huge.wprof"
check "report -f json: exit 0 (got $RC)" test "$RC" -eq 0
check "report -f json: lost.stacks_cut_on_read is 1" python3 -c '
import json, sys
sys.exit(json.load(open(sys.argv[1]))["lost"]["stacks_cut_on_read"] != 1)' "$TMP/rec_json.out"
run_wprof_rss rec_diff diff -f folded "$TMP/huge.wprof" "$TMP/huge.folded"
cut_counted rec_diff "$TMP/huge.wprof"
# (the recording's stack is cut with its pid and tid, which the folded lines leave out)
check "diff huge.wprof huge.folded: both cut, each 70% of its file" test "$(awk -v m=";$MARK;leaf" \
	'index($0, m) { b += $(NF - 1); a += $NF } END { print b + 0, a + 0 }' "$TMP/rec_diff.out")" = "70 70"
# --- stacks that share no frame: the flame graph stops at its cap, totals kept ---
python3 -c '
import gzip, struct, sys
def s(b): return struct.pack("<I", len(b)) + b
def sec(tag, body): return struct.pack("<IQ", tag, len(body)) + body
info = s(b"pid 100 (wide)") + s(b"wide") + s(b"wprof record -p 100") + struct.pack("<QQQQI", 1, 1000000, 1000, 1000, 2)
thread = struct.pack("<III", 100, 101, 7) + s(b"wide") + s(b"wide") + struct.pack("<7Q", 1000000, 700000, 1000, 700, 70, 0, 0)
thread += struct.pack("<I", 4) + b"".join(struct.pack("<QQQI", 0, 0, 0, 0) for _ in range(4)) + struct.pack("<I", 4)
tail = b";a" * 1998
lines = [b"on-cpu;100;101;wide;%x" % i + tail for i in range(1000)]
body = struct.pack("<Q", len(lines)) + b"".join(s(l) + struct.pack("<QQQ", 10, 1, 10) for l in lines)
rec = b"WPROFREC" + struct.pack("<I", 1) + sec(1, info) + sec(7, struct.pack("<I", 1) + thread) + sec(9, body) + sec(0, b"")
open(sys.argv[1], "wb").write(gzip.compress(rec, 9))
with open(sys.argv[2], "w") as f:
	f.write("".join("on-cpu;wide;%x%s 10\n" % (i, tail.decode()) for i in range(1000)))' \
	"$TMP/wide.wprof" "$TMP/wide.folded" || fatal "cannot write wide.wprof"
run_wprof_rss wide_svg report -o "$TMP/wide.svg" "$TMP/wide.wprof"
check "wide: report -o wide.svg: exit 0 (got $RC)" test "$RC" -eq 0
check_le "wide: report -o wide.svg: peak RSS (KiB)" "$RSS_KB" 204800
check_le "wide: report -o wide.svg: time (ms)" "$ELAPSED_MS" 20000
check_le "wide: the SVG's size (bytes)" "$(stat -c %s "$TMP/wide.svg")" 100000000
check "wide: the merged stacks counted in the summary" grep -Eq "wprof: lost: [0-9]+ stacks drawn in part as one \[truncated\] frame: the flame graph holds 262144 frames \[flame_stacks_merged\]" "$TMP/wide_svg.err"
check "wide: the root weighs every stack" grep -Fq "data-n=\"all\" data-x=\"0\" data-w=\"10000\"" "$TMP/wide.svg"
run_wprof_rss wide_json report -q -o "$TMP/wide.svg" -o "$TMP/wide.json" "$TMP/wide.wprof"
check "wide: report -f json: lost.flame_stacks_merged counted" python3 -c '
import json, sys
sys.exit(not json.load(open(sys.argv[1]))["lost"]["flame_stacks_merged"] > 0)' "$TMP/wide.json"
run_wprof_rss wide_diff diff -o "$TMP/wide_diff.svg" "$TMP/base.folded" "$TMP/wide.folded"
check "wide: diff -o x.svg: exit 0 (got $RC)" test "$RC" -eq 0
check_le "wide: diff -o x.svg: peak RSS (KiB)" "$RSS_KB" 204800
check_le "wide: diff -o x.svg: time (ms)" "$ELAPSED_MS" 20000
check "wide: diff counts the merged stacks on stderr" grep -Eq "wprof: lost: [0-9]+ stacks drawn in part as one \[truncated\] frame: .*\[flame_stacks_merged\]" "$TMP/wide_diff.err"
finish
