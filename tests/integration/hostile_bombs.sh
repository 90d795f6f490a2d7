#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Decompression bombs in files an unprivileged user's processes map: about a
# MiB of zlib or xz that libelf or libdw would inflate to GiBs of zeros, added
# to copies of sleepburn that nobody runs (tests/tools/elfbomb.py builds them
# in seconds):
# - frame:     an SHF_COMPRESSED .debug_frame that declares (and inflates to)
#              1 GiB: the unwind tables read it when wprof starts, the DWARF
#              reader for --inline;
# - zdebug:    the same as GNU's .zdebug_frame ("ZLIB" and the size);
# - names:     the section names, in a compressed table of 1 GiB (libelf
#              inflates it at the first name looked up);
# - debugdata: a stripped copy whose .gnu_debugdata (MiniDebugInfo, read for
#              want of a symbol table) is an xz stream of 8 GiB.
# Root's wprof records each with --inline (so that DWARF is read too) and
# must end with exit 0 and a peak RSS under 512 MiB, count the file as
# refused ([compressed_files_refused], 1 in the JSON report) and name it;
# frames of copies whose .symtab is intact stay named (burn_cpu). wprof runs
# with its address space limited to 1.5 GiB: a build without the bound then
# fails on its RSS (or is stopped) instead of taking the machine's memory.
# Files libdw would open on its own, and DWARF kept open to the end:
# - altfifo:   a copy of sym_inline whose DWARF names its functions in a dwz
#              alt file (.gnu_debugaltlink) that is a FIFO nobody owns: wprof
#              must end within its -d and a few seconds, exit 0, and count it
#              ([alt_files_refused]);
# - altbomb:   the same, the alt file of the linked build-id but a .debug_str
#              of 1 GiB: RSS under 512 MiB, the alt file refused;
# - budget:    three copies of sleepburn, each with a .debug_str of 240 MiB
#              (within each file's own bound), recorded at once with
#              --inline: RSS stays under 512 MiB.
# Controls, where nothing is refused: a stripped copy with a real
# MiniDebugInfo, named from it, and a copy of sym_inline whose DWARF is
# compressed as objcopy does it, its inlined calls named (hot_helper_[i]).
# test-timeout: 300
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"
require_bpf
require_workload sleepburn sym_inline

BOMB=$(dirname "$0")/../tools/elfbomb.py
GIB=$((1 << 30))
SB=$WORKLOADS/sleepburn
RSS_MAX_KIB=$((512 * 1024))

# copy NAME: a directory of nobody's with sleepburn's copy NAME/sb.
copy()
{
	mkdir -p "$TMP/$1"
	cp "$SB" "$TMP/$1/sb"
}

copy frame
python3 "$BOMB" chdr "$TMP/frame.bin" "$GIB" || fatal "cannot build the zlib bomb"
objcopy --add-section .debug_frame="$TMP/frame.bin" "$SB" "$TMP/frame/sb" &&
	python3 "$BOMB" compress "$TMP/frame/sb" .debug_frame || fatal "cannot add .debug_frame"

copy zdebug
python3 "$BOMB" zdebug "$TMP/zdebug.bin" "$GIB" || fatal "cannot build the .zdebug bomb"
objcopy --add-section .zdebug_frame="$TMP/zdebug.bin" "$SB" "$TMP/zdebug/sb" ||
	fatal "cannot add .zdebug_frame"

copy names
python3 "$BOMB" names "$TMP/names/sb" "$GIB" || fatal "cannot compress the section names"

mkdir -p "$TMP/debugdata" "$TMP/mini"
strip --strip-all -o "$TMP/sb.stripped" "$SB"
python3 "$BOMB" xz "$TMP/debugdata.xz" $((8 * GIB)) || fatal "cannot build the xz bomb"
objcopy --add-section .gnu_debugdata="$TMP/debugdata.xz" "$TMP/sb.stripped" "$TMP/debugdata/sb" ||
	fatal "cannot add .gnu_debugdata"
# MiniDebugInfo as distributions make it: the symbol table alone, in xz
objcopy --only-keep-debug --strip-debug "$SB" "$TMP/mini.elf" && xz -c "$TMP/mini.elf" >"$TMP/mini.xz" &&
	objcopy --add-section .gnu_debugdata="$TMP/mini.xz" "$TMP/sb.stripped" "$TMP/mini/sb" ||
	fatal "cannot add a MiniDebugInfo"
mkdir -p "$TMP/zlib"
objcopy --compress-debug-sections=zlib "$WORKLOADS/sym_inline" "$TMP/zlib/sym_inline" ||
	fatal "cannot compress DWARF"
mkdir -p "$TMP/altfifo" "$TMP/altbomb"
echo 'int main(void) { return 0; }' | cc -g -Wl,--build-id=sha1 -x c - -o "$TMP/altbomb/alt.debug" &&
	python3 "$BOMB" padded "$TMP/altbomb/alt.debug" "$GIB" || fatal "cannot build the alt file"
mkfifo "$TMP/altfifo/fifo"
for name in altfifo altbomb; do
	alt=$TMP/altbomb/alt.debug
	[ "$name" = altfifo ] && alt=$TMP/altfifo/fifo
	cp "$WORKLOADS/sym_inline" "$TMP/$name/sb" &&
		python3 "$BOMB" altform "$TMP/$name/sb" - &&
		python3 "$BOMB" altlink "$TMP/$name.bin" "$alt:$TMP/altbomb/alt.debug" &&
		objcopy --add-section .gnu_debugaltlink="$TMP/$name.bin" "$TMP/$name/sb" ||
		fatal "cannot link $name/sb to an alt file"
done
for i in 1 2 3; do
	mkdir -p "$TMP/budget"
	cp "$SB" "$TMP/budget/sb$i" && python3 "$BOMB" padded "$TMP/budget/sb$i" $((240 << 20)) ||
		fatal "cannot build budget/sb$i"
done
rm -f "$TMP"/*.bin "$TMP"/*.xz "$TMP/mini.elf" "$TMP/sb.stripped"
chown -R 65534:65534 "$TMP"/frame "$TMP"/zdebug "$TMP"/names "$TMP"/debugdata "$TMP"/mini \
	"$TMP"/zlib "$TMP"/altfifo "$TMP"/altbomb "$TMP"/budget

ulimit -v $((1536 * 1024)) # KiB: for wprof, the workloads and the checks below

# record NAME: nobody runs $TMP/NAME/sb; wprof records it for 1 s into NAME.json.
record()
{
	local name=$1 pid rss

	start_bg "$TMP/$name.log" setpriv --reuid=65534 --regid=65534 --clear-groups \
		"$TMP/$name/sb" -n 30 -N victim
	pid=$BG_PID
	wait_line "$TMP/$name.log" '^ready [0-9]+$' 10 || fatal "$name: sleepburn did not start"
	run_wprof "$name" record -p "$pid" -d 1 --inline --stats -o "$TMP/$name.json"
	kill "$pid" 2>/dev/null
	check_wprof_ok "$name"
	rss=$(sed -n 's/^wprof: peak RSS \([0-9]*\) KiB$/\1/p' "$TMP/$name.err")
	check_le "$name: peak RSS (KiB)" "${rss:-999999999}" "$RSS_MAX_KIB"
}

# refused NAME: the summary and the JSON report count NAME's file, and name it.
refused()
{
	check "$1: refused, in the summary" \
		grep -q '^wprof: lost: 1 .*\[compressed_files_refused\]$' "$TMP/$1.err"
	check "$1: the file is named" \
		grep -q "^wprof: compressed sections not read.*e\.g\. $TMP/$1/sb " "$TMP/$1.err"
	check "$1: json: lost.compressed_files_refused is 1" python3 -c '
import json, sys
sys.exit(json.load(open(sys.argv[1]))["lost"]["compressed_files_refused"] != 1)' "$TMP/$1.json"
}

for name in frame zdebug; do
	record "$name"
	refused "$name"
	check "$name: the unwind tables did not read .debug_frame" \
		grep -q "unwind tables.*; 1 files' compressed sections not read" "$TMP/$name.err"
	check "$name: burn_cpu named from .symtab" grep -q burn_cpu "$TMP/$name.json"
done

record names
refused names

record debugdata
refused debugdata
check "debugdata: frames named by file and offset" grep -q 'sb+0x' "$TMP/debugdata.json"

record mini
check "mini: a real MiniDebugInfo names burn_cpu" grep -q burn_cpu "$TMP/mini.json"
run_wprof zlib record --inline -F 499 -d 20 -o "$TMP/zlib.json" -- \
	setpriv --reuid=65534 --regid=65534 --clear-groups "$TMP/zlib/sym_inline" 1
check_wprof_ok zlib
check "zlib: compressed DWARF names inlined calls" grep -q 'hot_helper_\[i\]' "$TMP/zlib.json"
# alt NAME: nobody runs NAME/sb (sym_inline), linked to an alt file wprof must refuse.
alt()
{
	local name=$1 rss

	run_wprof "$name" record --inline -F 499 -d 3 --stats -o "$TMP/$name.json" -- \
		setpriv --reuid=65534 --regid=65534 --clear-groups "$TMP/$name/sb" 2
	check_wprof_ok "$name"
	check_le "$name: done within -d and a few seconds (ms)" "$ELAPSED_MS" 60000
	rss=$(sed -n 's/^wprof: peak RSS \([0-9]*\) KiB$/\1/p' "$TMP/$name.err")
	check_le "$name: peak RSS (KiB)" "${rss:-999999999}" "$RSS_MAX_KIB"
	check "$name: the alt file refused, in the summary" \
		grep -q '^wprof: lost: 1 .*\[alt_files_refused\]$' "$TMP/$name.err"
	check "$name: json: lost.alt_files_refused is 1" python3 -c '
import json, sys
sys.exit(json.load(open(sys.argv[1]))["lost"]["alt_files_refused"] != 1)' "$TMP/$name.json"
}
alt altfifo
alt altbomb

pids=()
for i in 1 2 3; do
	start_bg "$TMP/budget$i.log" setpriv --reuid=65534 --regid=65534 --clear-groups \
		"$TMP/budget/sb$i" -n 30 -N victim
	wait_line "$TMP/budget$i.log" '^ready [0-9]+$' 10 || fatal "budget/sb$i did not start"
	pids+=("$BG_PID")
done
run_wprof budget record -p "$(IFS=,; echo "${pids[*]}")" -d 2 --inline --stats \
	-o "$TMP/budget.json"
kill "${pids[@]}" 2>/dev/null
check_wprof_ok budget
rss=$(sed -n 's/^wprof: peak RSS \([0-9]*\) KiB$/\1/p' "$TMP/budget.err")
check_le "budget: peak RSS (KiB)" "${rss:-999999999}" "$RSS_MAX_KIB"

for name in mini zlib; do
	check "$name: nothing refused" sh -c "! grep -q 'compressed sections not read' '$TMP/$name.err'"
done
finish
