#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# A saved recording (-o x.wprof) and `wprof report`, on one recording of
# `sleepburn -n 2` written at once in every format (-o given seven times:
# one recording, so every file must agree exactly):
# - report x.wprof -f FORMAT is byte for byte what record wrote, for folded,
#   json, threads, svg and pprof, and report -o y.wprof rewrites the same
#   file; report's stderr summary is record's (less its first two lines,
#   which say how the run started and stopped);
# - report works as an unprivileged user (nobody), with no BPF; wprof diff
#   reads x.wprof as x.folded;
# - selection after the fact, against the ground truth of the same file:
#   --thread-name burner gives exactly the burner's folded lines and its
#   threads row; -t of the main thread its lines; -p of the process and
#   --no-idle-threads everything (both threads ran); --comm of another
#   name nothing;
# - a truncated file (at many lengths), a gzip of something else, a file
#   that is not gzip, an empty one: exit 1 and one line on stderr saying
#   so; an option that only recording can apply: exit 2, one line.
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"
require_bpf
require_workload sleepburn

run_wprof rec record -d 20 -f threads -o "$TMP/x.wprof" -o "$TMP/x.folded" -o "$TMP/x.json" \
	-o "$TMP/x.svg" -o "$TMP/x.pb.gz" -o "$TMP/x.threads" -- "$WORKLOADS/sleepburn" -n 2 -q
check_wprof_ok rec
for f in x.wprof x.folded x.json x.svg x.pb.gz x.threads; do
	[ -s "$TMP/$f" ] || fatal "no $f written"
done
check "x.wprof is gzip" bash -c "head -c 2 '$TMP/x.wprof' | od -An -tx1 | grep -q '1f 8b'"

for fmt in folded json threads svg; do
	run_wprof "r_$fmt" report -q -f "$fmt" "$TMP/x.wprof"
	check "report -f $fmt: exit 0, nothing on stderr (got $RC)" \
		test "$RC" -eq 0 -a ! -s "$TMP/r_$fmt.err"
	check "report -f $fmt is what record wrote, byte for byte" \
		cmp "$TMP/x.$fmt" "$TMP/r_$fmt.out"
done
run_wprof r_pprof report -q -o "$TMP/r.pb.gz" "$TMP/x.wprof"
check "report -o r.pb.gz is what record wrote" cmp "$TMP/x.pb.gz" "$TMP/r.pb.gz"
run_wprof r_wprof report -q -o "$TMP/r.wprof" "$TMP/x.wprof"
check "report -o r.wprof rewrites the same recording" cmp "$TMP/x.wprof" "$TMP/r.wprof"
run_wprof r_sum report -o /dev/null "$TMP/x.wprof"
grep -v -e '^wprof: recording with ' -e '^wprof: stopped: ' "$TMP/rec.err" >"$TMP/rec.sum"
check "report's summary is record's" cmp "$TMP/rec.sum" "$TMP/r_sum.err"

# --- --tag-leaf: record's lines with the first frame moved last (awk, not wprof) ---
run_wprof r_leaf report -q --tag-leaf -f folded "$TMP/x.wprof"
awk '{ w = $NF; sub(/ [0-9]+$/, ""); n = split($0, f, ";"); s = ""
	for (i = 2; i <= n; i++) s = s f[i] ";"; print s f[1] " " w }' "$TMP/x.folded" | sort >"$TMP/leaf.want"
sort "$TMP/r_leaf.out" >"$TMP/leaf.got"
check "report --tag-leaf: x.folded's lines with the tag moved to the leaf ($(wc -l <"$TMP/leaf.got") lines)" \
	cmp -s "$TMP/leaf.want" "$TMP/leaf.got"
run_wprof r_leafsvg report -q --tag-leaf -o "$TMP/leaf.svg" "$TMP/x.wprof"
check "report --tag-leaf -o leaf.svg: exit 0 (got $RC)" test "$RC" -eq 0 -a -s "$TMP/leaf.svg"

# --- diff reads a saved recording as its folded lines ---
run_wprof d_self diff --fail-if-grown 1 "$TMP/x.wprof" "$TMP/x.folded"
check "diff x.wprof x.folded: exit 0, nothing on stdout (got $RC)" \
	test "$RC" -eq 0 -a ! -s "$TMP/d_self.out"
check "diff x.wprof x.folded: the same stacks on both sides" \
	grep -Eq "BEFORE .*x.wprof: ([0-9]+) stacks.*AFTER .*x.folded: \1 stacks" "$TMP/d_self.err"
# a saved recording on standard input (a pipe: read once), and folded text
cat "$TMP/x.wprof" | "$WPROF" diff --fail-if-grown 1 - "$TMP/x.folded" \
	>"$TMP/d_pipe.out" 2>"$TMP/d_pipe.err"
RC=$?
check "cat x.wprof | diff - x.folded: exit 0, the same stacks on both sides (got $RC)" \
	grep -Eq "BEFORE -: ([0-9]+) stacks.*AFTER .*x.folded: \1 stacks" "$TMP/d_pipe.err"
"$WPROF" diff --fail-if-grown 1 "$TMP/x.wprof" - <"$TMP/x.folded" >/dev/null 2>"$TMP/d_fold.err"
RC=$?
check "diff x.wprof - < x.folded: exit 0 (got $RC)" test "$RC" -eq 0

# --- unprivileged ---
if command -v setpriv >/dev/null; then
	chmod 644 "$TMP/x.wprof"
	setpriv --reuid=nobody --regid=nogroup --clear-groups "$WPROF" report -q -f json \
		"$TMP/x.wprof" >"$TMP/nobody.out" 2>"$TMP/nobody.err"
	check "report as nobody: exit 0 ($(head -c 200 "$TMP/nobody.err"))" test $? -eq 0
	check "report as nobody: the same json" cmp "$TMP/x.json" "$TMP/nobody.out"
else
	log "no setpriv: the unprivileged report is not tried"
fi

# --- selection after the fact ---
pid=$(awk '$2 == "-" { print $1; exit }' "$TMP/x.threads")
main_tid=$pid
check "the threads table names the process ($pid)" is_num "$pid"
grep -E '^[^;]*;burner;' "$TMP/x.folded" >"$TMP/burner.want"
run_wprof f_burner report -q --thread-name burner "$TMP/x.wprof"
check "--thread-name burner: exit 0 (got $RC)" test "$RC" -eq 0
check "--thread-name burner: the burner's lines, exactly" cmp "$TMP/burner.want" "$TMP/f_burner.out"
check "--thread-name burner: some lines ($(wc -l <"$TMP/burner.want"))" test -s "$TMP/burner.want"
run_wprof f_burner_t report -q -f threads --thread-name burner "$TMP/x.wprof"
check "--thread-name burner -f threads: the burner's row, exactly" \
	bash -c "cmp <(awk '\$3 == \"burner\"' '$TMP/x.threads') <(awk '\$3 == \"burner\"' '$TMP/f_burner_t.out')"
check "--thread-name burner -f threads: header, process and one thread" \
	test "$(wc -l <"$TMP/f_burner_t.out")" -eq 3
grep -E '^[^;]*;sleepburn;' "$TMP/x.folded" >"$TMP/main.want"
run_wprof f_main report -q -t "$main_tid" "$TMP/x.wprof"
check "-t $main_tid: the main thread's lines, exactly" cmp "$TMP/main.want" "$TMP/f_main.out"
run_wprof f_pid report -q -p "$pid" "$TMP/x.wprof"
check "-p $pid: everything" cmp "$TMP/x.folded" "$TMP/f_pid.out"
run_wprof f_idle report -q --no-idle-threads -f json "$TMP/x.wprof"
check "--no-idle-threads: everything (both threads ran)" cmp "$TMP/x.json" "$TMP/f_idle.out"
run_wprof f_none report -q --comm 'no-such-*' -f threads "$TMP/x.wprof"
check "--comm no-such-*: exit 0, only the header" \
	test "$RC" -eq 0 -a "$(wc -l <"$TMP/f_none.out")" -eq 1
run_wprof f_rec report -q --min-block 1ms "$TMP/x.wprof"
check "--min-block: exit 2 (got $RC)" test "$RC" -eq 2
check "--min-block: one line saying to record again" \
	grep -qx "wprof: --min-block is chosen while recording: .*record again" "$TMP/f_rec.err"

# --- files that are not whole recordings ---
# bad NAME WHY_ERE: report of $TMP/NAME fails with exit 1 and exactly one stderr line
bad()
{
	"$WPROF" report -q "$TMP/$1" >"$TMP/bad.out" 2>"$TMP/bad.err"
	local rc=$?
	check "$1: exit 1 (got $rc)" test "$rc" -eq 1
	check "$1: one line on stderr matching '$2' ($(head -c 200 "$TMP/bad.err"))" \
		bash -c "[ \$(wc -l <'$TMP/bad.err') -eq 1 ] && grep -Eq '^wprof: .*$1: $2' '$TMP/bad.err'"
	check "$1: nothing on stdout" test ! -s "$TMP/bad.out"
}
size=$(stat -c %s "$TMP/x.wprof")
for n in 0 1 2 10 20 $((size / 2)) $((size - 8)) $((size - 1)); do
	head -c "$n" "$TMP/x.wprof" >"$TMP/cut$n.wprof"
	if [ "$n" -lt 2 ]; then
		bad "cut$n.wprof" 'not a wprof recording'
	else
		bad "cut$n.wprof" 'truncated recording \('
	fi
done
gzip -c /etc/passwd >"$TMP/passwd.gz"
bad passwd.gz 'not a wprof recording'
cp /etc/passwd "$TMP/passwd"
bad passwd 'not a wprof recording'
finish
