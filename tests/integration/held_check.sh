#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Stacks held while a new program's tables are not ready are walked in user
# space (src/held.c), by a port of the kernel's walk (bpf/unwind.bpf.h, whose
# stacks the real_* tests compare with gdb's): both must give the same
# frames from the same stack. WPROF_HELD=check has every walk made with the
# tables send a copy of its stack too, and user space walks the copy and
# compares. Checked on a C++ compile (cc1plus: deep stacks, libstdc++, PLT
# stubs), a C workload whose threads burn, nap, and block in pipes and
# fsync (mixed), and 20 short programs started one after the other
# (spawner, startburn: the loader's code too). Checks: >= 2000 walks
# compared (-F 999: most are samples), none differed.
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"
require_bpf
require_workload mixed
require_workload spawner
require_workload startburn
SRC=$(cd "$(dirname "$0")/../.." && pwd)
command -v g++ >/dev/null || fatal "g++ is not installed (apt-get install g++)"

export WPROF_HELD=check
run_wprof rec record -F 999 -o "$TMP/out.json" -- sh -c "
	g++ -O2 -c '$SRC/tests/workloads/sym_cxx.cpp' -o '$TMP/sym_cxx.o' &&
	'$WORKLOADS/mixed' -n 2 -f '$TMP/sync' >/dev/null &&
	'$WORKLOADS/spawner' -n 20 -p '$WORKLOADS/startburn'"
check_wprof_ok rec
read -r checked differed < <(python3 -c 'import json, sys
c = json.load(open(sys.argv[1]))["counters"]
print(c["held_checked"], c["held_check_differed"])' "$TMP/out.json")
log "walks of a copy compared with the kernel's: $checked, differed: $differed"
is_num "$checked" && is_num "$differed" || fatal "no held_checked counters in the JSON"
check_ge "walks compared" "$checked" 2000
check "no walk of a copy differed from the kernel's (got $differed of $checked)" \
	test "$differed" -eq 0
finish
