#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Run the fuzz harnesses ($OUT/fuzz/fuzz_*, built by tests/fuzz.mk) for
# FUZZ_SECONDS each. Each starts from seeds made now from this machine and
# the test build (real kallsyms, maps, ELF files with and without symbols,
# DWARF and debug links, the vDSO; no binary is kept in the repository),
# in a scratch directory removed afterwards unless something was found.
# Prints one line a harness:
#	fuzz_NAME: N execs in S s (R/s), corpus C inputs, no crash
#	fuzz_NAME: CRASH ... (the input, and how to run it again)
# and ends with `N passed, N failed` (a harness passes when libFuzzer
# found nothing). Exits non-zero when one did.
#
# Environment:
#	OUT=build          build directory
#	FUZZ_SECONDS=20    how long each harness runs
#	FUZZ=ERE           only the harnesses whose name (folded, elfsyms...) matches
# A crashing input is copied to $OUT/fuzz/crashes/; run it again with
#	$OUT/fuzz/fuzz_NAME FILE

set -u
cd "$(dirname "$0")/../.." || exit 1

: "${OUT:=build}"
: "${FUZZ_SECONDS:=20}"
: "${FUZZ:=}"
FUZZ_BIN=$OUT/fuzz
WORK=$(mktemp -d /tmp/wprof-fuzz.XXXXXX) || exit 1
passed=0
failed=0

# seed_file DIR NAME: stdin into DIR/NAME
seed_file()
{
	cat >"$1/$2"
}

# seed_copy DIR FILE...: each existing FILE (an ELF seed) into DIR
seed_copy()
{
	local dir=$1 f

	shift
	for f in "$@"; do
		[ -r "$f" ] && cp "$f" "$dir/$(echo "$f" | tr / _)"
	done
	return 0
}

seeds_folded()
{
	printf 'on-cpu;sleepburn;main;burn_cpu 42\n' | seed_file "$1" line
	printf 'off-cpu:sleep;worker;start_thread;do_nanosleep_[k] 18446744073709551615\n' |
		seed_file "$1" max
	printf 'a frame with spaces;b 7' | seed_file "$1" spaces
	printf 'x;[unsampled] 0\n' | seed_file "$1" unsampled
	printf 'on-cpu;a;;b 1\n' | seed_file "$1" empty_frame
	printf 'a;b\tc 1\n' | seed_file "$1" control
	printf '\xe2\x82\xac;\xf0\x9f\x94\xa5 12\n' | seed_file "$1" utf8
}

# folded text, the first three bytes the limits (frames, leaf, bytes: small)
seeds_foldread()
{
	printf '\001\004\010on-cpu;sleepburn;main;burn_cpu 42\n\na;b 7' | seed_file "$1" lines
	printf '\005\011\077%s;leaf 3\n' "$(printf 'f;%.0s' $(seq 40))" | seed_file "$1" deep
	printf '\000\000\000%s 5\nx 1\n' "$(printf 'long frame%.0s' $(seq 20))" |
		seed_file "$1" long
	printf '\000\000\000%s;a 00000000000000000000000000000000000000001\n' \
		"$(printf 'f;%.0s' $(seq 30))" | seed_file "$1" zeros
	printf '\002\002\002%s;b\001c 1\n' "$(printf 'f;%.0s' $(seq 30))" | seed_file "$1" control
}

# recordings: one of the test build's sleepburn, saved by record, as
# the file (gzip) and as its content; both are what the harness takes
seeds_recfile()
{
	local w=$OUT/tests/workloads/sleepburn

	[ -x "$w" ] && "$OUT/wprof" record -o "$1/rec.wprof" -- "$w" -n 1 -q 2>/dev/null &&
		gzip -dc <"$1/rec.wprof" >"$1/rec.raw"
	printf 'WPROFREC\001\000\000\000' | seed_file "$1" header
	return 0
}

seeds_perfmap()
{
	printf '7f3c2a001000 1a0 LazyCompile:~handler /srv/app.js:12:5\n' | seed_file "$1" node
	printf '0x1000 0x100 py::f:/srv/x.py\n1080 10 inner\n1000 200 later wins\n' |
		seed_file "$1" overlap
	printf '2000 10 crlf\r\nnot a line\n3000 0 zero size\nffffffffffffff00 1000 wraps\n3000 10 half' |
		seed_file "$1" odd
}

seeds_procmaps()
{
	seed_file "$1" self </proc/self/maps
	cat /proc/1/maps 2>/dev/null | seed_file "$1" init
	printf '%s\n' '55d0c0a00000-55d0c0a21000 r-xp 00001000 fd:01 1234 /usr/bin/x (deleted)' \
		'7ffd1000-7ffd3000 rw-p 00000000 00:00 0 [anon:name with spaces]' \
		'1000-2000 r-xp 00000000 00:00 0' | seed_file "$1" odd
}

seeds_kallsyms()
{
	head -200 /proc/kallsyms | seed_file "$1" head
	grep -E ' (__sched_text_(start|end)|__lock_text_(start|end)|schedule|do_nanosleep)$' \
		/proc/kallsyms | seed_file "$1" sched
	printf '%s\n' 'ffffffff81000000 T _stext' 'ffffffff81a3c2b0 T do_nanosleep' \
		'ffffffff81a3c400 t __schedule' 'ffffffff81a3c000 T __sched_text_start' \
		'ffffffff81a3d000 T __sched_text_end' 'ffffffff81b00000 D some_data' \
		'ffffffffc06f1010 t xfs_iread	[xfs]' 'ffffffffc0700000 t bpf_prog_1234_f	[bpf]' |
		seed_file "$1" synthetic
}

seeds_demangle()
{
	local n=0 s

	for s in _ZN2ns5Klass6methodEv _ZNSt6vectorIiSaIiEE9push_backERKi _Z3fooi.constprop.0 \
		_ZN3foo3barE.llvm.123456 _ZN4core3ptr13drop_in_place17h0123456789abcdefE \
		'_ZN5hyper6client4pool17PoolInner$LT$T$GT$3put17h2f5a8a7d0c4f3e1bE' \
		_RNvCs1234_7mycrate4main _RNvNtCs1234_7mycrate6module8function \
		'_RINvNtC3std3mem8align_ofjEB2_' _RNvMs_Cs4Cv8Wi1oAIB_7mycrateNtB4_3Foo3bar; do
		n=$((n + 1))
		printf '%s' "$s" >"$1/name$n"
	done
	while read -r s; do
		n=$((n + 1))
		printf '%s' "$s" >"$1/cxx$n"
	done < <(nm -D --defined-only /usr/lib/x86_64-linux-gnu/libstdc++.so.6 2>/dev/null |
		awk '$3 ~ /^_Z/ { print $3 }' | head -50)
}

# ELF files: with symbols and DWARF (inlined calls), stripped, a debug file,
# a shared library and its debug link, a system library, the vDSO; DWARF
# compressed (SHF_COMPRESSED, and GNU's .zdebug_*), and a MiniDebugInfo.
seeds_elf()
{
	local sb=$OUT/tests/workloads/sleepburn

	seed_copy "$1" "$sb" "$OUT/tests/workloads/sym_inline" \
		"$OUT/tests/sym/stripped/sleepburn" "$OUT/tests/sym/debuglink/libsymcall.so" \
		"$OUT/tests/sym/debuglink/sym_call.debug" "$OUT/tests/sym/call/libsymcall.so" \
		/usr/lib/x86_64-linux-gnu/libattr.so.1
	objcopy --compress-debug-sections=zlib "$sb" "$1/zlib" 2>/dev/null
	objcopy --compress-debug-sections=zlib-gnu "$sb" "$1/zlib-gnu" 2>/dev/null
	objcopy --only-keep-debug --strip-debug "$sb" "$1/mini.elf" 2>/dev/null &&
		xz -c "$1/mini.elf" >"$1/mini.xz" && strip --strip-all -o "$1/mini.s" "$sb" &&
		objcopy --add-section .gnu_debugdata="$1/mini.xz" "$1/mini.s" "$1/minidebuginfo"
	rm -f "$1/mini.elf" "$1/mini.xz" "$1/mini.s"
	python3 -c '
import sys
for l in open("/proc/self/maps"):
	if l.rstrip().endswith("[vdso]"):
		a, b = (int(x, 16) for x in l.split()[0].split("-"))
		with open("/proc/self/mem", "rb") as m:
			m.seek(a)
			open(sys.argv[1], "wb").write(m.read(b - a))' "$1/vdso" 2>/dev/null
	return 0
}

seeds_elfsyms()
{
	seeds_elf "$@"
}

# and a copy of sleepburn whose .eh_frame is NOBITS: a size, no bytes (it
# once had libdw read through a NULL buffer)
seeds_unwtab()
{
	seeds_elf "$@"
	python3 -c '
import struct, sys
d = bytearray(open(sys.argv[1], "rb").read())
shoff, = struct.unpack_from("<Q", d, 0x28)
shentsize, shnum, shstrndx = struct.unpack_from("<HHH", d, 0x3a)
stroff, = struct.unpack_from("<Q", d, shoff + shstrndx * shentsize + 0x18)
for i in range(shnum):
	h = shoff + i * shentsize
	name, = struct.unpack_from("<I", d, h)
	if d[stroff + name:stroff + name + 10] == b".eh_frame\0":
		struct.pack_into("<I", d, h + 4, 8)  # SHT_NOBITS
open(sys.argv[2], "wb").write(d)' "$OUT/tests/workloads/sleepburn" "$1/nobits_eh_frame" 2>/dev/null
	return 0
}

# run_one NAME: fuzz $FUZZ_BIN/fuzz_NAME for FUZZ_SECONDS from fresh seeds
run_one()
{
	local name=$1 bin=$FUZZ_BIN/fuzz_$1 dir=$WORK/$1 rc execs secs corpus art

	mkdir -p "$dir/seeds" "$dir/corpus"
	"seeds_$name" "$dir/seeds"
	# -timeout: one input taking longer is a hang, reported as a crash;
	# -rss_limit_mb: so is a parser that takes more than this
	"$bin" -max_total_time="$FUZZ_SECONDS" -timeout=10 -rss_limit_mb=2048 \
		-print_final_stats=1 -artifact_prefix="$dir/" "$dir/corpus" "$dir/seeds" \
		>"$dir/log" 2>&1
	rc=$?
	execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$dir/log")
	secs=$(sed -n 's/^Done [0-9]* runs in \([0-9]*\) second.*/\1/p' "$dir/log")
	corpus=$(find "$dir/corpus" -type f | wc -l)
	art=$(find "$dir" -maxdepth 1 -type f \( -name 'crash-*' -o -name 'leak-*' -o \
		-name 'timeout-*' -o -name 'oom-*' -o -name 'slow-unit-*' \) | head -1)
	if [ "$rc" -eq 0 ] && [ -z "$art" ] && [ -n "$execs" ]; then
		[ "${secs:-0}" -gt 0 ] || secs=1
		echo "fuzz_$name: $execs execs in $secs s ($((execs / secs))/s)," \
			"corpus $corpus inputs, $(find "$dir/seeds" -type f | wc -l) seeds, no crash"
		passed=$((passed + 1))
		rm -rf "$dir"
		return
	fi
	failed=$((failed + 1))
	if [ -n "$art" ]; then
		mkdir -p "$FUZZ_BIN/crashes"
		cp "$art" "$FUZZ_BIN/crashes/fuzz_${name}-$(basename "$art")"
		echo "fuzz_$name: CRASH after ${execs:-?} execs (exit $rc); input" \
			"$FUZZ_BIN/crashes/fuzz_${name}-$(basename "$art"); run it again with:" \
			"$bin $FUZZ_BIN/crashes/fuzz_${name}-$(basename "$art")"
	else
		echo "fuzz_$name: FAIL: exit $rc, ${execs:-no} execs; log in $dir/log"
	fi
	grep -E 'ERROR|SUMMARY|broken promise|^ *#[0-9]+ ' "$dir/log" | head -25 | sed 's/^/    /'
}

nr=0
for bin in "$FUZZ_BIN"/fuzz_*; do
	[ -f "$bin" ] && [ -x "$bin" ] || continue
	name=${bin##*/fuzz_}
	[ -z "$FUZZ" ] || echo "$name" | grep -Eq -- "$FUZZ" || continue
	nr=$((nr + 1))
	run_one "$name"
done
if [ "$nr" -eq 0 ]; then
	echo "FAIL fuzz: no harness in $FUZZ_BIN${FUZZ:+ matching '$FUZZ'} (make test-bins)"
	failed=$((failed + 1))
fi
[ "$failed" -eq 0 ] && rm -rf "$WORK"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
