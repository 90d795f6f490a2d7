#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# -o FILE where another user (nobody) can write, with `wprof diff` of two
# small folded files (no BPF: the output path is the same for every command):
# - a race: FILE, root's own file in nobody's directory, swapped with nobody's
#   symbolic link to a root-only file (renameat2 RENAME_EXCHANGE, as fast as
#   nobody can) while root writes FILE, 1,000 times or for 15 s: the
#   root-only file keeps its contents, mode and owner, some runs still write
#   FILE, and no temporary file is left anywhere;
# - a symbolic link to a root-owned directory, made by nobody in a sticky
#   world-writable directory: -o LINK/out.folded is refused with one line,
#   nothing is written in the directory; root's own link there is followed;
# - a root-owned link is not followed either when nobody could have put it
#   there: moved into nobody's own directory, or hard-linked (a second name);
#   a hard link of the root-only file is replaced, the file itself untouched;
# - a FIFO of nobody's is not written to; root's own FIFO and /dev/stdout are.
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"
[ "$(id -u)" -eq 0 ] || skip "needs root to set another user's traps (uid $(id -u))"
[ -x "$WPROF" ] || fatal "wprof binary $WPROF not built (run make)"
EXCHANGE=$OUT/tests/tools/exchange
[ -x "$EXCHANGE" ] || fatal "$EXCHANGE not built (run make test-bins)"

as_nobody() { setpriv --reuid=65534 --regid=65534 --clear-groups "$@"; }

printf 'main;a 10\nmain;b 5\n' >"$TMP/a.folded"
printf 'main;a 5\nmain;b 10\n' >"$TMP/b.folded"
"$WPROF" diff -f folded -o "$TMP/want.folded" "$TMP/a.folded" "$TMP/b.folded" 2>/dev/null ||
	fatal "wprof diff -o does not write a plain file"

# out_diff NAME FILE: wprof diff a b -o FILE, its output in $TMP/NAME.{out,err}
out_diff() { run_wprof "$1" diff -f folded -o "$2" "$TMP/a.folded" "$TMP/b.folded"; }

# refused NAME ERE: the run failed with one line matching ERE
refused()
{
	check "$1: refused (exit $RC)" test "$RC" -ne 0
	check "$1: with one line saying why" \
		sh -c "[ \$(wc -l <'$TMP/$1.err') -eq 1 ] && grep -Eq '^wprof: .*$2' '$TMP/$1.err'"
}

# --- the race ---
# wprof diff -o of the race's runs writes FILE in place of whatever is there,
# the link too: nobody makes it again
secret=$TMP/secret
echo "root only" >"$secret"
chmod 600 "$secret"
want_secret="$(stat -c '%u %a %s %Y' "$secret") $(md5sum <"$secret")"
nd=$(mktemp -d "$TMP/nobody.XXXXXX") || fatal "no directory for nobody"
chown 65534:65534 "$nd" || fatal "cannot give $nd to nobody"
"$WPROF" diff -o "$nd/out.folded" "$TMP/a.folded" "$TMP/b.folded" 2>/dev/null
[ "$(stat -c %u "$nd/out.folded" 2>/dev/null)" = 0 ] || fatal "root's first out.folded not written"
as_nobody ln -s "$secret" "$nd/link" || fatal "cannot make a symbolic link as nobody"
start_bg "$TMP/exchange.log" setpriv --reuid=65534 --regid=65534 --clear-groups \
	"$EXCHANGE" "$nd/out.folded" "$nd/link" "$secret" 60
racer=$BG_PID
tries=0 wrote=0 hit=0
# wprof's runs are slow while nobody spins (~20 ms here): 15 s at most
deadline=$((SECONDS + 15))
while [ "$tries" -lt 1000 ] && [ "$SECONDS" -lt "$deadline" ]; do
	tries=$((tries + 1))
	"$WPROF" diff -o "$nd/out.folded" "$TMP/a.folded" "$TMP/b.folded" 2>"$TMP/race.err" &&
		wrote=$((wrote + 1))
	if [ "$(stat -c '%u %a %s %Y' "$secret") $(md5sum <"$secret")" != "$want_secret" ]; then
		hit=$tries
		break
	fi
done
kill "$racer"
wait "$racer"
swaps=$(sed -n 's/^swaps \([0-9]*\).*/\1/p' "$TMP/exchange.log")
log "$tries runs of wprof diff -o, $wrote wrote; nobody: $(head -c 200 "$TMP/exchange.log")"
check "nobody swapped FILE and the link (${swaps:-0} times)" test "${swaps:-0}" -gt 0
if [ "$hit" -eq 0 ]; then
	ok "the root-only file is untouched after $tries runs ($(stat -c '%U %a' "$secret"))"
	check_ge "runs of wprof in the race" "$tries" 100
else
	not_ok "the root-only file was replaced at run $hit: $(stat -c '%U %a %s bytes' "$secret")"
fi
check "runs with FILE in place still wrote it ($wrote of $tries)" test "$wrote" -gt 0
check "no temporary file is left" \
	test -z "$(find "$TMP" -name '.wprof-*' -print -quit)"

# --- a directory link of another user ---
rootdir=$TMP/rootdir
mkdir -m 755 "$rootdir"
sticky=$TMP/sticky
mkdir -m 1777 "$sticky"
as_nobody ln -s "$rootdir" "$sticky/dlink" || fatal "cannot make a symbolic link as nobody"
out_diff dlink "$sticky/dlink/out.folded"
refused dlink "dlink is a symbolic link of another user"
check "nothing was written in the directory it points to" test -z "$(ls -A "$rootdir")"
ln -s "$rootdir" "$sticky/rlink"
out_diff rlink "$sticky/rlink/out.folded"
check_wprof_ok rlink
check "root's own link to the directory is followed" cmp -s "$TMP/want.folded" "$rootdir/out.folded"
rm -f "$rootdir/out.folded"

# --- root's links that nobody could have moved or linked into place ---
ln -s "$rootdir" "$TMP/moved"
mv "$TMP/moved" "$nd/moved"
out_diff moved "$nd/moved/out.folded"
refused moved "moved is a symbolic link in a directory other users can change"
ln -s "$secret" "$TMP/linked"
ln -P "$TMP/linked" "$sticky/linked"
out_diff linked "$sticky/linked"
refused linked "symbolic link with more than one name"
check "nothing was written in the root directory" test -z "$(ls -A "$rootdir")"
# a hard link of the root-only file in nobody's directory is root's file: the
# name is replaced, the file behind it is not written
ln "$secret" "$nd/hard"
out_diff hard "$nd/hard"
check_wprof_ok hard
check "a hard link of a root-only file is replaced by the output" \
	cmp -s "$TMP/want.folded" "$nd/hard"
check "the root-only file is untouched" \
	test "$(stat -c '%u %a %s %Y' "$secret") $(md5sum <"$secret")" = "$want_secret"

# --- FIFOs and /dev/stdout ---
as_nobody mkfifo "$sticky/theirs.fifo" || fatal "cannot make a FIFO as nobody"
start_bg "$TMP/theirs.out" setpriv --reuid=65534 --regid=65534 --clear-groups \
	cat "$sticky/theirs.fifo"
reader=$BG_PID
out_diff theirfifo "$sticky/theirs.fifo"
refused theirfifo "FIFO of another user"
# the reader still waits for a writer: one that writes nothing ends it
[ -d "/proc/$reader" ] && : >"$sticky/theirs.fifo"
wait "$reader"
check "nobody's FIFO got nothing" test ! -s "$TMP/theirs.out"
mkfifo "$sticky/mine.fifo"
cat "$sticky/mine.fifo" >"$TMP/fifo.out" &
reader=$!
out_diff myfifo "$sticky/mine.fifo"
wait "$reader"
check_wprof_ok myfifo
check "root's own FIFO is written to" cmp -s "$TMP/want.folded" "$TMP/fifo.out"
log "wprof diff -o /dev/stdout | cat"
"$WPROF" diff -f folded -o /dev/stdout "$TMP/a.folded" "$TMP/b.folded" 2>/dev/null |
	cat >"$TMP/stdout.out"
RC=${PIPESTATUS[0]}
check "-o /dev/stdout writes to a pipe (exit $RC)" cmp -s "$TMP/want.folded" "$TMP/stdout.out"
out_diff devnull /dev/null
check_wprof_ok devnull
finish
