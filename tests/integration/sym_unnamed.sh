#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# The summary names the files whose frames wprof could only name by offset
# (`file+0xOFF`), with how many frames each, and what would name them. On
# sym/stripped/sleepburn (sleepburn without any symbol, no debug file):
# - exactly one `wprof: frames without symbol names, by file:` line;
# - it names sleepburn, with at least as many frames as the output has
#   sleepburn+0x frames (lines merge; each frame symbolized is counted), and
#   says that no package owns it and how to build it;
# - it names exactly the files that have file+0xOFF frames in the output
#   ([vdso], [anon] and the like are no file's; a process's JIT code, [anon],
#   is listed under its executable, and not counted here);
# - libc is in it only when the output has libc.so.6+0x frames (without
#   libc6-dbg), and then as libc6's, to be named by libc6-dbg, with the
#   debuginfod alternative;
# - the frames it counts add up to at most those the summary says have no
#   symbol name.
# Then the unstripped sleepburn: no sleepburn in the line, if there is one.
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"
require_bpf
stripped=$OUT/tests/sym/stripped/sleepburn
[ -x "$stripped" ] || fatal "$stripped not built (run make test-bins)"
require_workload sleepburn

# hint_line NAME: the summary line of $TMP/NAME.err, without its prefix.
hint_line()
{
	sed -n 's/^wprof: frames without symbol names, by file: //p' "$TMP/$1.err"
}

# hinted LINE: "file frames" per file the line names, one a line.
hinted()
{
	printf '%s\n' "$1" | sed 's/; or, for packaged files.*//' |
		grep -oE '(^|\), )[^ ]+ [0-9]+ \((its JIT code)?' | grep -v 'JIT code$' |
		sed -E 's/^\), //; s/ \($//'
}

# unnamed_files FOLDED: the files with file+0xOFF frames, one a line.
unnamed_files()
{
	i4_unnamed "$1" '.*' | grep -v '^\[' | sed -E 's/[+]0x[0-9a-f]+$//' | sort -u
}

# occurrences FOLDED FILE: file+0x frames in the output's lines.
occurrences()
{
	grep -oF "$2+0x" "$1" | wc -l
}

# lacks ERE TEXT: no match of ERE in TEXT.
lacks()
{
	! grep -qE "$1" <<<"$2"
}

check_hint()
{
	local n=$1 line files want got f c occ sum lost

	line=$(hint_line "$n")
	log "$n: hint: ${line:-none}"
	check "$n: at most one line about missing symbols" \
		test "$(grep -c '^wprof: frames without symbol names' "$TMP/$n.err")" -le 1
	files=$(hinted "$line")
	want=$(unnamed_files "$TMP/$n.folded" | tr '\n' ' ')
	got=$(printf '%s\n' "$files" | awk 'NF { print $1 }' | sort -u | tr '\n' ' ')
	check "$n: the line names the files with file+0x frames (want: '$want', got: '$got')" \
		test "$want" = "$got"
	sum=0
	# a file's code and data are counted apart: sum them
	while read -r f c; do
		[ -n "$f" ] || continue
		occ=$(occurrences "$TMP/$n.folded" "$f")
		check_ge "$n: $f: frames counted vs its file+0x frames in the output" "$c" "$occ"
		sum=$((sum + c))
	done < <(awk 'NF { c[$1] += $2 } END { for (f in c) print f, c[f] }' <<<"$files")
	lost=$(sed -n 's/^wprof: \([0-9]*\) of [0-9]* frames have no symbol name .*/\1/p' "$TMP/$n.err")
	check_le "$n: frames named in the line vs frames_unnamed" "$sum" "${lost:-0}"
	if grep -q 'libc[.]so[.]6+0x' "$TMP/$n.folded"; then
		check "$n: libc.so.6 frames unnamed: the line says libc6-dbg would name them" \
			grep -q 'libc[.]so[.]6 [0-9]* (from libc6: install libc6-dbg)' <<<"$line"
		if [ -z "${DEBUGINFOD_URLS:-}" ]; then
			check "$n: and that debuginfod would" \
				grep -qF '; or, for packaged files, set DEBUGINFOD_URLS=https://debuginfod.debian.net' \
				<<<"$line"
		fi
	else
		check "$n: libc.so.6 frames all named: libc is not in the line" \
			lacks 'libc[.]so[.]6 ' "$line"
	fi
}

run_wprof stripped record -d 20 -o "$TMP/stripped.folded" -- "$stripped" -n 1 -q
check_wprof_ok stripped
[ -s "$TMP/stripped.folded" ] || fatal "no output"
check_folded "$TMP/stripped.folded"
occ=$(occurrences "$TMP/stripped.folded" sleepburn)
check "stripped: its code is named by offset (sleepburn+0x frames: $occ)" test "$occ" -gt 0
line=$(hint_line stripped)
check "stripped: the line names sleepburn, which no package owns" \
	grep -qE "(^|, )sleepburn [0-9]+ \($stripped is in no package: build it with -g, unstripped\)" \
	<<<"$line"
check_hint stripped

run_wprof plain record -d 20 -o "$TMP/plain.folded" -- "$WORKLOADS/sleepburn" -n 1 -q
check_wprof_ok plain
[ -s "$TMP/plain.folded" ] || fatal "no output"
check "plain: no sleepburn+0x frame" test "$(occurrences "$TMP/plain.folded" sleepburn)" -eq 0
check_hint plain
finish
