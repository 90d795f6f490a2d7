# SPDX-License-Identifier: GPL-2.0-only
# shellcheck shell=bash
#
# Helpers for tests/integration/*.sh. Each script is one test:
#	exit 0 = pass, 1 = fail, 2 = skip (only: not root / no BPF).
# A script sources this file, calls require_bpf, runs wprof, and states what
# it expects with check_* helpers, which print one `ok:`/`not ok:` line each
# (with the numbers), then ends with `finish`.
#
# The runner exports OUT (build dir) and WPROF (the binary); both default
# sensibly so a script can also be run by hand from the repo root:
#	OUT=build bash tests/integration/cmd.sh
# KEEP_TMP=1 keeps the scratch directory even when the test passes (it is
# always kept, and named, when the test fails).

set -u

: "${OUT:=build}"
if ! OUT=$(cd "$OUT" 2>/dev/null && pwd); then
	echo "not ok: build directory '$OUT' does not exist; run make" >&2
	exit 1
fi
: "${WPROF:=$OUT/wprof}"
WORKLOADS=$OUT/tests/workloads
FOLDCHECK=$OUT/tests/tools/foldcheck
TEST_NAME=$(basename "$0" .sh)

# 0755 so the unprivileged-user test can reach files in it.
TMP=$(mktemp -d "/tmp/wprof-$TEST_NAME.XXXXXX") || exit 1
chmod 755 "$TMP"

LIB_PIDS=()
LIB_FAILED=0

lib_cleanup()
{
	local rc=$? pid

	for pid in "${LIB_PIDS[@]}"; do
		kill -TERM "$pid" 2>/dev/null
	done
	for pid in "${LIB_PIDS[@]}"; do
		# A workload that ignores SIGTERM for 3 s gets SIGKILL.
		timeout 3 tail --pid="$pid" -f /dev/null 2>/dev/null || kill -KILL "$pid" 2>/dev/null
	done
	if [ "$rc" -eq 1 ] || [ "${KEEP_TMP:-0}" = 1 ]; then
		echo "# evidence kept in $TMP"
	else
		rm -rf "$TMP"
	fi
	exit "$rc"
}
trap lib_cleanup EXIT

log()
{
	echo "# $*"
}

ok()
{
	echo "ok: $*"
}

not_ok()
{
	echo "not ok: $*"
	LIB_FAILED=1
}

# Stop now: the rest of the test cannot run.
fatal()
{
	not_ok "$@"
	exit 1
}

skip()
{
	echo "SKIP: $*"
	exit 2
}

finish()
{
	[ "$LIB_FAILED" -eq 0 ] && exit 0
	exit 1
}

# Skip (exit 2) only when BPF cannot run here; a missing wprof or workload is
# a failure (the build is broken), not a skip.
require_bpf()
{
	[ "$(id -u)" -eq 0 ] || skip "needs root for BPF (uid $(id -u))"
	[ -r /sys/kernel/btf/vmlinux ] || skip "kernel has no BTF (/sys/kernel/btf/vmlinux)"
	[ -x "$WPROF" ] || fatal "wprof binary $WPROF not built (run make)"
	[ -x "$FOLDCHECK" ] || fatal "$FOLDCHECK not built (run make test-bins)"
}

require_workload()
{
	local w

	for w in "$@"; do
		[ -x "$WORKLOADS/$w" ] || fatal "workload $WORKLOADS/$w not built (run make test-bins)"
	done
}

# check DESC CMD... : ok when CMD succeeds.
check()
{
	local desc=$1

	shift
	if "$@"; then
		ok "$desc"
	else
		not_ok "$desc"
	fi
}

# check_near DESC VALUE EXPECTED TOLERANCE: |VALUE - EXPECTED| <= TOLERANCE.
check_near()
{
	if awk -v v="$2" -v e="$3" -v t="$4" 'BEGIN { d = v - e; if (d < 0) d = -d; exit !(d <= t) }'; then
		ok "$1: $2 (want $3 +/- $4)"
	else
		not_ok "$1: $2 (want $3 +/- $4)"
	fi
}

# check_ge DESC VALUE MIN / check_le DESC VALUE MAX
check_ge()
{
	if awk -v v="$2" -v m="$3" 'BEGIN { exit !(v >= m) }'; then
		ok "$1: $2 (want >= $3)"
	else
		not_ok "$1: $2 (want >= $3)"
	fi
}

check_le()
{
	if awk -v v="$2" -v m="$3" 'BEGIN { exit !(v <= m) }'; then
		ok "$1: $2 (want <= $3)"
	else
		not_ok "$1: $2 (want <= $3)"
	fi
}

# calc EXPR: floating-point arithmetic, printed with 4 decimals.
calc()
{
	awk "BEGIN { printf \"%.4f\\n\", $* }"
}

# ratio A B: A / B (0 when B is 0).
ratio()
{
	awk -v a="$1" -v b="$2" 'BEGIN { printf "%.4f\n", b ? a / b : 0 }'
}

# start_bg LOG CMD...: start CMD in the background, stdout+stderr to LOG;
# its pid is in BG_PID and it is killed at exit if still running.
start_bg()
{
	local logf=$1

	shift
	"$@" >"$logf" 2>&1 &
	BG_PID=$!
	LIB_PIDS+=("$BG_PID")
}

# wait_line FILE ERE SECONDS: wait until FILE has a line matching ERE.
wait_line()
{
	local i

	for ((i = 0; i < $3 * 10; i++)); do
		grep -Eq "$2" "$1" 2>/dev/null && return 0
		sleep 0.1
	done
	return 1
}

# wait_exit PID SECONDS: wait for our child PID to exit; its status is in
# WAIT_RC. Returns 1 if it is still running after SECONDS.
# shellcheck disable=SC2034 # WAIT_RC is read by the test scripts
wait_exit()
{
	local pid=$1 i state

	WAIT_RC=
	for ((i = 0; i < $2 * 20; i++)); do
		# A dead child stays a zombie (kill -0 succeeds) until waited for.
		state=$(awk '{ sub(/.*\) /, ""); print substr($0, 1, 1) }' "/proc/$pid/stat" 2>/dev/null)
		if [ -z "$state" ] || [ "$state" = Z ]; then
			wait "$pid"
			WAIT_RC=$?
			return 0
		fi
		sleep 0.05
	done
	return 1
}

now_ms()
{
	date +%s%3N
}

# run_wprof NAME ARGS...: run wprof (killed after 120 s) with stdout in
# $TMP/NAME.out, stderr in $TMP/NAME.err; sets RC and ELAPSED_MS.
run_wprof()
{
	local name=$1 t0

	shift
	log "wprof $*"
	t0=$(now_ms)
	timeout -k 5 120 "$WPROF" "$@" >"$TMP/$name.out" 2>"$TMP/$name.err"
	RC=$?
	ELAPSED_MS=$(($(now_ms) - t0))
	log "exit $RC after $ELAPSED_MS ms; stderr:"
	sed 's/^/#   /' "$TMP/$name.err" | head -40
}

# check_wprof_ok NAME: exit 0 and every stderr line is a `wprof: ` line.
check_wprof_ok()
{
	check "wprof exits 0 (got $RC)" test "$RC" -eq 0
	check "every stderr line starts with 'wprof: '" \
		awk '!/^wprof: /{ bad = 1 } END { exit bad }' "$TMP/$1.err"
}

# check_folded FILE: every line parses (strict), stacks unique and sorted.
check_folded()
{
	local out

	if out=$("$FOLDCHECK" "$1" 2>&1); then
		ok "$(basename "$1"): valid folded, $(wc -l <"$1") lines, all parse"
	else
		not_ok "$(basename "$1"): invalid folded output"
		echo "$out" | head -12 | sed 's/^/#   /'
	fi
}

# Folded-line fields. With FOLD_TAG_LEAF=1 the tag is the last frame and
# the comm the first; otherwise tag first, comm second. Frames passed to
# FRAME_ERE tests exclude tag and comm.
FOLD_TAG_LEAF=${FOLD_TAG_LEAF:-0}

# fold_sum FILE TAG_ERE COMM_ERE [FRAME_ERE]: sum of weights (us) of lines
# whose tag and comm match the anchored EREs and, if given, that have a frame
# matching FRAME_ERE (anchored too: use .* for substrings).
fold_sum()
{
	awk -v tre="^($2)\$" -v cre="^($3)\$" -v fre="${4:+^($4)\$}" -v leaf="$FOLD_TAG_LEAF" '
	{
		sp = match($0, / [0-9]+$/)
		if (!sp)
			next
		w = substr($0, sp + 1)
		n = split(substr($0, 1, sp - 1), f, ";")
		if (leaf) { tag = f[n]; comm = f[1]; lo = 2; hi = n - 1 }
		else { tag = f[1]; comm = f[2]; lo = 3; hi = n }
		if (tag !~ tre || comm !~ cre)
			next
		if (fre != "") {
			hit = 0
			for (i = lo; i <= hi; i++)
				if (f[i] ~ fre) { hit = 1; break }
			if (!hit)
				next
		}
		sum += w
	}
	END { printf "%.0f\n", sum }' "$1"
}

# fold_sum_ordered FILE TAG_ERE COMM_ERE ROOT_ERE LEAF_ERE: weight of lines
# where a frame matching ROOT_ERE comes before (rootward of) one matching
# LEAF_ERE.
fold_sum_ordered()
{
	awk -v tre="^($2)\$" -v cre="^($3)\$" -v rre="^($4)\$" -v lre="^($5)\$" \
		-v leaf="$FOLD_TAG_LEAF" '
	{
		sp = match($0, / [0-9]+$/)
		if (!sp)
			next
		w = substr($0, sp + 1)
		n = split(substr($0, 1, sp - 1), f, ";")
		if (leaf) { tag = f[n]; comm = f[1]; lo = 2; hi = n - 1 }
		else { tag = f[1]; comm = f[2]; lo = 3; hi = n }
		if (tag !~ tre || comm !~ cre)
			next
		r = 0
		for (i = lo; i <= hi; i++) {
			if (!r && f[i] ~ rre)
				r = i
			else if (r && f[i] ~ lre) { sum += w; break }
		}
	}
	END { printf "%.0f\n", sum }' "$1"
}

# fold_field FILE tag|comm: the distinct tags or comms, one per line.
fold_field()
{
	awk -v want="$2" -v leaf="$FOLD_TAG_LEAF" '
	{
		sp = match($0, / [0-9]+$/)
		if (!sp)
			next
		n = split(substr($0, 1, sp - 1), f, ";")
		if (want == "tag")
			v = leaf ? f[n] : f[1]
		else
			v = leaf ? f[1] : f[2]
		if (!(v in seen)) { seen[v] = 1; print v }
	}' "$1" | LC_ALL=C sort
}

# fold_bad_kernel_order FILE: lines where a user frame follows a kernel
# (`_[k]`) frame; kernel frames must be the leaf end of the stack.
fold_bad_kernel_order()
{
	awk -v leaf="$FOLD_TAG_LEAF" '
	{
		sp = match($0, / [0-9]+$/)
		if (!sp)
			next
		n = split(substr($0, 1, sp - 1), f, ";")
		if (leaf) { lo = 2; hi = n - 1 } else { lo = 3; hi = n }
		k = 0
		for (i = lo; i <= hi; i++) {
			if (f[i] ~ /_\[k\]$/)
				k = 1
			else if (k) { print; break }
		}
	}' "$1"
}

# report_get FILE KEY: value of a `key value` line of a workload report.
report_get()
{
	awk -v k="$2" '$1 == k { print $2; found = 1 } END { exit !found }' "$1"
}

# schedstat PID TID: "run_ns wait_ns" of a thread, from the kernel.
schedstat()
{
	awk '{ print $1, $2 }' "/proc/$1/task/$2/schedstat"
}

# unused_pid: a pid that no process or thread has right now (a child that
# was just reaped; pids are reused only after wrapping around pid_max).
unused_pid()
{
	local p

	while :; do
		sleep 0 &
		p=$!
		wait "$p"
		[ -e "/proc/$p" ] || { echo "$p"; return; }
	done
}
