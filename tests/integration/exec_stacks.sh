#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Whole stacks from the first block of a program exec'd while recording, as
# the programs of a build or a CI command are: `wprof record --exact-above 0
# -- sh -c 'sleep 0.3; sym_libc -s -S 200000 -n 1; exit 0'`. Its napper thread
# naps 200 ms at a time in nap_here -> nanosleep from a few ms after the
# exec, before wprof can have read the new program's maps and made its
# tables; its main thread waits in pthread_join from then on. nanosleep and
# pthread_join are libc's, built without frame pointers: a frame-pointer walk
# from them skips their caller. Truth is the workload's source: napper's
# sleeps are under napper_main;nap_here, the main thread's under main;
# pthread_join, and each thread's first frame is clone3 (a thread) or _start.
# Checks, over each thread's off-cpu:sleep weight (every interval walked,
# the first nap a fifth of napper's):
# - napper slept >= 0.8 s, the main thread >= 0.9 s;
# - >= 99% of it under those callers, adjacent, and from that first frame (the
#   rest: a new thread's first wait for a CPU, tens of us, has no stack);
# - no line of either thread with that caller is cut or walked by frame
#   pointers only (a block of the loader, before main, can be: it resumes
#   within microseconds, before wprof has read the program's maps).
# Before a switch-out whose walk waits for the resume asked for the maps, the
# first nap was walked by frame pointers only: nothing else had asked.
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"
require_bpf
require_workload sym_libc

F=$TMP/out.folded
run_wprof rec record --exact-above 0 -o "$F" -- \
	sh -c "sleep 0.3; '$WORKLOADS/sym_libc' -s -S 200000 -n 1; exit 0"
check_wprof_ok rec
check_folded "$F"

# share NAME COMM FIRST CALLER CALLEE MIN: the sleep weight of thread COMM
# (>= MIN us), and the part of it whose first frame matches the ERE FIRST and
# that has CALLER, then a frame matching the ERE CALLEE
share()
{
	local name=$1 comm=$2 first=$3 caller=$4 callee=$5 all whole cut

	all=$(fold_sum "$F" off-cpu:sleep "$comm")
	whole=$(awk -v c="$comm" -v f="$first" -v a="$caller" -v b="$callee" '
	{
		sp = match($0, / [0-9]+$/)
		n = split(substr($0, 1, sp - 1), fr, ";")
		if (fr[1] != "off-cpu:sleep" || fr[2] != c || fr[3] !~ f)
			next
		for (i = 4; i < n; i++)
			if (fr[i] == a && fr[i + 1] ~ b) {
				s += substr($0, sp + 1)
				break
			}
	}
	END { print s + 0 }' "$F")
	cut=$(grep -E "^off-cpu:[a-z]+;$comm;" "$F" | grep -E '\[(cut|frame pointers only)' |
		grep -cE ";$caller;")
	log "$name: sleep $all us, $whole us of it from $first under $caller;$callee; $cut lines" \
		"with $caller cut"
	grep -E "^off-cpu:[a-z]+;$comm;" "$F" | grep -E '\[(cut|frame pointers only)' |
		cut -c1-200 | sed 's/^/#   cut: /'
	check_ge "$name slept (us)" "$all" "$6"
	check_ge "share of $name's sleep from $first under $caller;$callee (%)" \
		"$(calc "100 * $whole / ($all ? $all : 1)")" 99
	check "no line of $name with $caller is cut or walked by frame pointers only ($cut are)" \
		test "$cut" -eq 0
}

# clone3 is libc's local symbol: named only with libc's symbol table
share napper napper '^(clone3|libc[.]so.*)$' napper_main '^nap_here$' 800000
# pthread_join tail-calls libc's __pthread_clockjoin_ex, named only with libc's symbol table
share "the main thread" sym_libc '^_start$' main 'join|^libc[.]so' 900000
finish
