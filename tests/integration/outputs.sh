#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# The svg and pprof outputs and `wprof diff`, on one recording of
# `sleepburn -n 3` written at once as folded, svg and pprof (-o three times:
# two recordings never weigh the same, one recording in three files must):
# - the svg is well-formed XML, and its totals (the whole graph, and each
#   kind's in the legend) are the folded file's, to the us;
# - go tool pprof reads the pprof file without a word on stderr, and its
#   samples (-raw) add up to the folded total, in ns, exactly; so do those of
#   each state (-tagfocus=state=...) and the oncpu sample type;
# - `wprof diff` of the folded file against itself prints nothing and
#   --fail-if-grown 1 passes;
# - against a recording of the burner with its sleep doubled (-s 340), the
#   burner's sleep stack (under sleep_phase) grew: --fail-if-grown 1 exits 1
#   and names it; the diff svg is well-formed too.
# The doubled run is compared with the burner's lines of the first one: the
# main thread, blocked in pthread_join from its first instruction, is left
# out of both (the stack it blocked in may be walked before its code is
# loaded, one run and not the other).
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"
require_bpf
require_workload sleepburn
command -v go >/dev/null || skip "no go tool (Debian package golang-go) to read pprof files"
command -v "$PYTHON" >/dev/null || skip "no $PYTHON to parse the svg"
export HOME=${HOME:-$TMP} GOCACHE=$TMP/gocache

run_wprof rec record -d 20 -o "$TMP/a.folded" -o "$TMP/a.svg" -o "$TMP/a.pb.gz" -- \
	"$WORKLOADS/sleepburn" -n 3 -q
check_wprof_ok rec
for f in a.folded a.svg a.pb.gz; do
	[ -s "$TMP/$f" ] || fatal "no $f written"
done
check_folded "$TMP/a.folded"
total=$(fold_sum "$TMP/a.folded" '.*' '.*')
log "folded total: $total us"
check "the recording weighs something ($total us)" test "$total" -gt 0

# --- svg ---
# svg_totals FILE: "total kind:us ..." from the document's data attributes.
svg_totals()
{
	"$PYTHON" - "$1" <<'EOF'
import sys, xml.dom.minidom as m
d = m.parse(sys.argv[1]).documentElement
kinds = [g for g in d.getElementsByTagName("g") if g.getAttribute("data-kind")]
print(d.getAttribute("data-total-us"), " ".join("%s:%s" % (g.getAttribute("data-kind"),
      g.getAttribute("data-us")) for g in kinds))
EOF
}
if out=$(svg_totals "$TMP/a.svg" 2>&1); then
	ok "a.svg is well-formed XML"
else
	not_ok "a.svg is not well-formed XML: $out"
fi
read -r svg_total kinds <<<"$out"
check "svg total = folded total ($svg_total vs $total us)" test "$svg_total" = "$total"
for kv in $kinds; do
	tag=${kv%:*} us=${kv##*:}
	want=$(fold_sum "$TMP/a.folded" "$tag" '.*')
	check "svg legend $tag = the folded $tag lines ($us vs $want us)" test "$us" = "$want"
done
# -p: the title gives the target's command line, which its name alone does not
start_bg "$TMP/sb.log" "$WORKLOADS/sleepburn" -n 30 -b 5
wait_line "$TMP/sb.log" '^ready [0-9]+$' 10 || fatal "sleepburn did not start"
sb=$BG_PID
run_wprof ptitle record -d 0.5 -p "$sb" -o "$TMP/p.svg"
check "svg of -p PID: the title gives the target's command line" \
	grep -Eq "<text id=\"title\"[^>]*>wprof: wall-clock time of pid $sb \(sleepburn\): [^<]*sleepburn -n 30 -b 5<" \
	"$TMP/p.svg"
kill "$sb"
check "svg embeds its script and loads nothing" \
	bash -c "grep -q 'window.wprof' '$TMP/a.svg' && ! grep -Eq '(src|href)=\"https?:' '$TMP/a.svg'"

# --- pprof ---
# pprof_sum [PPROF OPTIONS]: the sum of each sample type over go tool pprof -raw's samples.
pprof_sum()
{
	go tool pprof -raw "$@" "$TMP/a.pb.gz" 2>"$TMP/pprof.err" | "$PYTHON" -c '
import re, sys
sums, on = None, False
for line in sys.stdin:
	if line.startswith("Samples:"):
		on = True
		continue
	if on and re.match(r"^[A-Z]", line) and not line.startswith("wall"):
		break
	m = re.match(r"^\s*(\d+(?:\s+\d+)*):", line)
	if on and m:
		v = [int(x) for x in m.group(1).split()]
		sums = [a + b for a, b in zip(sums, v)] if sums else v
print(" ".join(map(str, sums or [0, 0, 0, 0])))'
}
read -r wall oncpu offcpu steal <<<"$(pprof_sum)"
check "go tool pprof -raw says nothing on stderr ($(head -c 200 "$TMP/pprof.err"))" \
	test ! -s "$TMP/pprof.err"
check "pprof wall samples = folded total in ns ($wall vs $((total * 1000)))" \
	test "$wall" = "$((total * 1000))"
on=$(fold_sum "$TMP/a.folded" on-cpu '.*')
check "pprof oncpu samples = folded on-cpu lines in ns ($oncpu vs $((on * 1000)))" \
	test "$oncpu" = "$((on * 1000))"
sl=$(fold_sum "$TMP/a.folded" steal '.*')
check "pprof steal samples = folded steal lines in ns ($steal vs $((sl * 1000)))" \
	test "$steal" = "$((sl * 1000))"
check "pprof wall = oncpu + offcpu + steal ($wall vs $oncpu + $offcpu + $steal)" \
	test "$wall" = "$((oncpu + offcpu + steal))"
for st in on-cpu steal sleep disk runqueue; do
	tag=off-cpu:$st
	[ "$st" = on-cpu ] || [ "$st" = steal ] && tag=$st
	want=$(fold_sum "$TMP/a.folded" "$tag" '.*')
	read -r got _ <<<"$(pprof_sum -tagfocus="state=^$st\$")"
	check "pprof -tagfocus=state=$st = the folded $tag lines ($got vs $((want * 1000)) ns)" \
		test "$got" = "$((want * 1000))"
done
go tool pprof -top -unit=ns "$TMP/a.pb.gz" >"$TMP/top.out" 2>"$TMP/top.err"
check "go tool pprof -top: exit 0, nothing on stderr ($(head -c 200 "$TMP/top.err"))" \
	test $? -eq 0 -a ! -s "$TMP/top.err"
check "go tool pprof -top names burn_cpu" grep -q ' burn_cpu$' "$TMP/top.out"
check "go tool pprof -top says what was recorded" grep -q 'wall-clock time of .*sleepburn' "$TMP/top.out"
# mappings: each location's file and build-id are those the process mapped
# (readelf's, the kernel's notes), checked against go tool pprof -raw
sb_path=$(realpath "$WORKLOADS/sleepburn")
libc=$(awk '$NF ~ /\/libc[.]so[.]6$/ { print $NF; exit }' /proc/self/maps)
elf_build_id() { readelf -n "$1" 2>/dev/null | awk '/Build ID:/ { print $3 }'; }
go tool pprof -raw "$TMP/a.pb.gz" 2>/dev/null | "$PYTHON" -c '
import re, sys, struct
locs, maps, part = {}, {}, None
for line in sys.stdin:
	if re.match(r"^[A-Z]", line):
		part = line.split()[0]
		continue
	# a location of no mapping has no M=
	m = re.match(r"^\s*(\d+): 0x[0-9a-f]+(?: M=(\d+))? (.*?) :\d+ s=\d+$", line)
	if part == "Locations" and m:
		locs[int(m.group(1))] = (int(m.group(2) or 0), m.group(3))
	m = re.match(r"^(\d+): \S+ (.*) \[FN\]$", line)
	if part == "Mappings" and m:
		path, _, bid = m.group(2).rpartition(" ")
		maps[int(m.group(1))] = (path, bid)
notes, kid = open("/sys/kernel/notes", "rb").read(), ""
off = 0
while off + 12 <= len(notes):
	nsz, dsz, typ = struct.unpack_from("<III", notes, off)
	name_at = off + 12
	desc_at = name_at + (nsz + 3) // 4 * 4
	if typ == 3 and notes[name_at:name_at + 4] == b"GNU\0":
		kid = notes[desc_at:desc_at + dsz].hex()
	off = desc_at + (dsz + 3) // 4 * 4
for mid, fn in locs.values():
	path, bid = maps.get(mid, ("?", ""))
	if fn.endswith("_[k]"):
		path, bid = (path, bid) if (path, bid) == ("[kernel.kallsyms]", kid) else ("?", "")
		fn = "[kernel frame]"
	print("%s\t%d\t%s\t%s" % (fn, mid, path, bid))
print("[kernel build-id]\t0\t\t%s" % kid)' | sort -u >"$TMP/maps.out"
want="burn_cpu	[0-9]+	$sb_path	$(elf_build_id "$sb_path")"
check "pprof mapping of burn_cpu: $sb_path and its build-id ($(grep '^burn_cpu' "$TMP/maps.out"))" \
	grep -Eq "^$want\$" "$TMP/maps.out"
check "pprof: some locations in $libc's mapping, with its build-id $(elf_build_id "$libc")" \
	grep -Eq "	[0-9]+	$libc	$(elf_build_id "$libc")\$" "$TMP/maps.out"
check "pprof: no location of libc.so.6 with another build-id ($(grep -c 'libc[.]so[.]6' "$TMP/maps.out"))" \
	sh -c "! grep 'libc[.]so[.]6' '$TMP/maps.out' | grep -qv '	$(elf_build_id "$libc")\$'"
check "pprof: every kernel frame in the mapping [kernel.kallsyms] with the kernel's build-id" \
	sh -c "grep -q '^\[kernel frame\]	' '$TMP/maps.out' && ! grep -q '^\[kernel frame\]	.*	?	' '$TMP/maps.out' && grep -Eq '^\[kernel build-id\]	0		[0-9a-f]{40}\$' '$TMP/maps.out'"
# no mapping (0) for bracketed frames ([unsampled], [no stack]) and the names two
# files of the process have (libc's clock_gettime calls the vDSO's), which a
# comment of the profile counts; mapping 1 is the program's file, once
ambiguous=$(go tool pprof -comments "$TMP/a.pb.gz" 2>/dev/null |
	sed -n 's/^\([0-9]*\) locations have a function name that two files.*/\1/p')
in0=$(grep -Ev '^\[' "$TMP/maps.out" | grep -c '^[^	]*	0	')
check "pprof: symbols of no mapping, of no known file: $in0, as many as the comment says (${ambiguous:-none})" \
	test "$in0" = "${ambiguous:-0}"
check "pprof: the workload's own functions are not among them" \
	sh -c "! grep -Eq '^(burn_cpu|sleep_phase|burner_main|main)	0	' '$TMP/maps.out'"
n=$(go tool pprof -raw "$TMP/a.pb.gz" 2>/dev/null | sed -n '/^Mappings/,$p' | grep -c " $sb_path ")
check "pprof: the program's file is one mapping ($n), with its build-id" test "$n" -eq 1

# --- diff ---
run_wprof self diff "$TMP/a.folded" "$TMP/a.folded"
check "diff of a file against itself: exit 0 (got $RC)" test "$RC" -eq 0
check "diff of a file against itself: nothing on stdout" test ! -s "$TMP/self.out"
run_wprof selfgate diff --fail-if-grown 1 "$TMP/a.folded" "$TMP/a.folded"
check "diff --fail-if-grown 1 of a file against itself: exit 0 (got $RC)" test "$RC" -eq 0

grep -E '^[^;]*;burner;' "$TMP/a.folded" >"$TMP/base.folded"
run_wprof slow record -d 20 --thread-name burner -o "$TMP/slow.folded" -- \
	"$WORKLOADS/sleepburn" -n 3 -q -s 340
check_wprof_ok slow
[ -s "$TMP/slow.folded" ] || fatal "no slow.folded written"
run_wprof gate diff --fail-if-grown 1 "$TMP/base.folded" "$TMP/slow.folded"
check "diff --fail-if-grown 1 against a doubled sleep: exit 1 (got $RC)" test "$RC" -eq 1
check "it names the burner's sleep stack" \
	grep -Eq '^wprof: grew: off-CPU sleep in .*sleep_phase.*: [0-9.]+% -> [0-9.]+% \(\+[0-9.]+ points of share, more than 1\)' \
	"$TMP/gate.err"
check "the table shows it grew" grep -Eq '^grew .*off-cpu:sleep;.*sleep_phase' "$TMP/gate.out"
run_wprof dsvg diff -o "$TMP/d.svg" "$TMP/base.folded" "$TMP/slow.folded"
check "diff -o d.svg: exit 0 (got $RC)" test "$RC" -eq 0
if out=$(svg_totals "$TMP/d.svg" 2>&1); then
	ok "d.svg is well-formed XML"
else
	not_ok "d.svg is not well-formed XML: $out"
fi
slow_total=$(fold_sum "$TMP/slow.folded" '.*' '.*')
check "the diff svg's total is AFTER's (${out%% *} vs $slow_total us)" test "${out%% *}" = "$slow_total"
finish
