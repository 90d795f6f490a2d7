#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Every option `wprof record --help`, `wprof report --help` and `wprof diff
# --help` list is documented in the man page and the README, and the man page and README
# document no option wprof lacks; every command `wprof --help` names is
# documented in both. The README is at most 300 lines, links every file of
# docs/, and its links and the docs' links to each other lead to files that
# are there. Needs no root: it only reads --help.
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"
[ -x "$WPROF" ] || fatal "no wprof binary at $WPROF"
top=$(cd "$(dirname "$0")/../.." && pwd)
help=$("$WPROF" record --help) || fatal "wprof record --help failed"
diff_help=$("$WPROF" diff --help) || fatal "wprof diff --help failed"
report_help=$("$WPROF" report --help) || fatal "wprof report --help failed"
help="$help
$diff_help
$report_help"
opts=$(printf '%s\n' "$help" | grep -oE -- '--[a-z][a-z-]+' | sort -u)
[ -n "$opts" ] || fatal "no options found in --help"
# the man page escapes '-' as '\-'
man=$(sed 's/\\-/-/g' "$top/man/wprof.8")
# a whole option name: --pid must not be satisfied by --pidfile
has() { grep -qE -- "$1([^a-z-]|\$)"; }
for o in $opts; do
	check "man page documents $o" has "$o" <<<"$man"
	check "README documents $o" has "$o" <"$top/README.md"
done
for c in $("$WPROF" --help | sed -n 's/^ *\(Usage:\)\{0,1\} *wprof \([a-z]\{1,\}\) .*/\2/p' | sort -u); do
	check "man page documents wprof $c" grep -q "^\.B wprof $c\$" <<<"$man"
	check "README documents wprof $c" grep -q "^wprof $c \[OPTIONS\]" "$top/README.md"
done
for o in $( (printf '%s\n' "$man"; cat "$top/README.md") | grep -oE -- '--[a-z][a-z-]+' | sort -u); do
	case $o in --colors | --perf-basic-prof) continue ;; esac # other tools' options
	check "--help lists $o (from the man page or README)" has "$o" <<<"$help"
done
# the README is the front door: short, its links and picture there
lines=$(wc -l <"$top/README.md")
check "README is at most 300 lines ($lines)" test "$lines" -le 300
for l in $(grep -oE '\]\((docs/[^)#]+)' "$top/README.md" | sed 's/^](//' | sort -u); do
	check "README's link $l is there" test -s "$top/$l"
done
for d in "$top"/docs/*.md; do
	for l in $(grep -oE '\]\([a-z_]+\.md' "$d" | sed 's/^](//' | sort -u); do
		check "$(basename "$d")'s link $l is there" test -s "$top/docs/$l"
	done
	check "README links to docs/$(basename "$d")" grep -q "(docs/$(basename "$d"))" "$top/README.md"
done
finish
