#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Programs that come and go outgrow the kernel's unwind-row array, and
# must not lose their callers for it: the rows of code no live process maps
# are given back and reused. 24 programs, each a file of its own (one object
# linked 24 times with a build id of its own; ~4,500 rows each, built -O1
# without frame pointers, so that a walk without their rows loses the
# callers), run one after the other under `sh -c`, 0.3 s each burning CPU
# in main -> room_outer -> room_mid -> room_burn, recorded with the row
# array cut to 65,536 rows (WPROF_UNWIND_ROWS=few): libc, ld.so and sh
# take half of it, so that five of the programs fill the rest.
#
# Expected: no file refused for room (lost.unwind_files_no_room 0); the
# summary says files' room was given to others; and the last four programs'
# on-CPU stacks are whole: >= 80% of each one's on-CPU time in stacks that
# reach main and __libc_start_main with no [cut: ...] or [frame pointers
# only: ...] frame (a program's first milliseconds, before its maps are
# read, may be walked by frame pointers alone).
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"
require_bpf
command -v gcc >/dev/null || fatal "gcc not installed (make deps)"
NR=24

{
	cat <<'EOF'
#include <stdlib.h>
#include <time.h>
volatile unsigned long sink_v;
__attribute__((noinline)) int sink(int x) { sink_v += x; return (int)sink_v; }
static double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}
__attribute__((noinline)) void room_burn(double until) { while (now_s() < until) sink_v++; }
__attribute__((noinline)) void room_mid(double until) { room_burn(until); sink(1); }
__attribute__((noinline)) void room_outer(double until) { room_mid(until); sink(2); }
EOF
	# code with CFI of its own: values live across calls keep callee-saved registers busy
	for i in $(seq 1 400); do
		echo "__attribute__((noinline, used)) int fill_$i(int a, int b, int c) { int x = sink(a)," \
			"y = sink(b + x), z = sink(c + y), w = sink(x + z), v = sink(y + w)," \
			"u = sink(v + $i); return sink(x + y + z + w + v + u); }"
	done
	cat <<'EOF'
int main(int argc, char **argv)
{
	room_outer(now_s() + atof(argv[1]));
	return 0;
}
EOF
} >"$TMP/room.c"
gcc -O1 -g -fomit-frame-pointer -c "$TMP/room.c" -o "$TMP/room.o" || fatal "cannot compile room.c"
for i in $(seq -w 1 $NR); do
	gcc "$TMP/room.o" -o "$TMP/w$i" -Wl,--build-id=0x5e5e5e5e5e5e5e5e$i ||
		fatal "cannot link w$i"
done
cmd="cd $TMP && for i in $(seq -s ' ' -w 1 $NR); do ./w\$i 0.3; done"

WPROF_UNWIND_ROWS=few run_wprof rec record --stats -F 199 -o "$TMP/out.json" -- sh -c "$cmd"
check_wprof_ok rec
check_json "$TMP/out.json"
check "no file found no room (lost.unwind_files_no_room)" \
	test "$(json_eval "$TMP/out.json" 'j["lost"]["unwind_files_no_room"]')" = 0
given=$(sed -n 's/.*the room of \([0-9]*\) files no process mapped given to others.*/\1/p' \
	"$TMP/rec.err")
check_ge "files' room given back to others" "${given:-0}" 10

# the share of a program's on-CPU time in whole stacks, in %
whole='
ss = stacks("on-cpu", sys.argv[2])
ok = [s for s in ss if "main" in s["frames"] and
      any(f.startswith("__libc_start_main") for f in s["frames"]) and
      not any(f.startswith("[cut") or f.startswith("[frame pointers only") for f in s["frames"])]
print(int(100 * total(ok) / max(total(ss), 1)) if total(ss) else -1)'
for i in $(seq -w $((NR - 3)) $NR); do
	pct=$("$PYTHON" -c "$JSON_PY$whole" "$TMP/out.json" "w$i")
	check_ge "w$i: % of its on-CPU time in stacks whole from __libc_start_main" "$pct" 80
done
finish
