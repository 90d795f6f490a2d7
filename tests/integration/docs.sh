#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Every option `wprof record --help` lists is documented in the man page and
# the README, and the man page and README document no option wprof lacks.
# Needs no root: it only reads --help.
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"
[ -x "$WPROF" ] || fatal "no wprof binary at $WPROF"
top=$(cd "$(dirname "$0")/../.." && pwd)
help=$("$WPROF" record --help) || fatal "wprof record --help failed"
opts=$(printf '%s\n' "$help" | grep -oE -- '--[a-z][a-z-]+' | sort -u)
[ -n "$opts" ] || fatal "no options found in --help"
# the man page escapes '-' as '\-'
man=$(sed 's/\\-/-/g' "$top/man/wprof.8")
for o in $opts; do
	check "man page documents $o" grep -qF -- "$o" <<<"$man"
	check "README documents $o" grep -qF -- "$o" "$top/README.md"
done
for o in $(printf '%s\n' "$man" | grep -oE -- '--[a-z][a-z-]+' | sort -u); do
	case $o in --colors) continue ;; esac # flamegraph.pl's, not ours
	check "--help lists $o (from the man page)" grep -qF -- "$o" <<<"$help"
done
finish
