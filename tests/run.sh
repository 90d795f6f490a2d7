#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Run wprof's tests: every unit-test binary $OUT/tests/test_* (each PASS/FAIL
# line it prints is one test), then every $SCRIPTS/*.sh (one test
# each: exit 0 pass, 1 fail, 2 skip). Prints each result and ends with
# exactly one line
#	N passed, N failed[, N skipped]
# (the skipped part only when something was skipped and CI is not true;
# under CI=true a skip counts as failed). Exits non-zero if anything failed.
#
# Environment:
#	OUT=build            build directory (make check passes it)
#	WPROF=$OUT/wprof     binary under test
#	TESTS=ERE            only run tests whose name (test_folded, cmd, errors...)
#	                     matches this extended regex, e.g. TESTS='cmd|errors';
#	                     words separated by spaces are alternatives too
#	                     (TESTS='cmd errors')
#	TEST_TIMEOUT=120     seconds before an integration script is killed; a
#	                     script whose work is long by design says how long
#	                     it may take in a line "# test-timeout: SECONDS",
#	                     and gets the larger of the two
#	CI=true              skips are failures
#	VERBOSE=1            show the output of passing integration tests too
#	SCRIPTS=tests/integration  where the scripts are (make check-sanitize
#	                     runs tests/sanitize: records under ASan and UBSan)

set -u
cd "$(dirname "$0")/.." || exit 1

: "${OUT:=build}"
if ! OUT=$(cd "$OUT" 2>/dev/null && pwd); then
	echo "run.sh: build directory '$OUT' does not exist; run make first" >&2
	echo "0 passed, 1 failed"
	exit 1
fi
: "${WPROF:=$OUT/wprof}"
: "${TEST_TIMEOUT:=120}"
: "${TESTS:=}"
: "${CI:=}"
: "${SCRIPTS:=tests/integration}"
export OUT WPROF

passed=0
failed=0
skipped=0

# TESTS as one ERE: its words (split at spaces) are alternatives
tests_ere=$(echo "$TESTS" | awk '{ $1 = $1; gsub(/ /, "|"); print }')

selected()
{
	[ -z "$tests_ere" ] || echo "$1" | grep -Eq -- "$tests_ere"
}

run_unit()
{
	local bin=$1 name log rc npass nfail nskip

	name=$(basename "$bin")
	log=$(mktemp)
	timeout -k 5 "$TEST_TIMEOUT" "$bin" >"$log" 2>&1
	rc=$?
	npass=$(grep -c '^PASS ' "$log")
	nfail=$(grep -c '^FAIL ' "$log")
	nskip=$(grep -c '^skip ' "$log")
	grep -E '^(PASS|FAIL) ' "$log"
	# a check a unit test could not run is a skip: a failure under CI=true
	if [ "$nskip" -gt 0 ]; then
		if [ "$CI" = true ]; then
			grep '^skip ' "$log" | sed 's/^skip /FAIL (skipped under CI=true) /'
			nfail=$((nfail + nskip))
		else
			grep '^skip ' "$log" | sed 's/^skip /SKIP /'
			skipped=$((skipped + nskip))
		fi
	fi
	# A crash or timeout after the last check still fails the binary.
	if [ "$rc" -ne 0 ] && [ "$nfail" -eq 0 ]; then
		echo "FAIL $name: exited with status $rc$([ "$rc" -eq 124 ] && echo ' (timed out)')"
		grep -Ev '^(PASS|FAIL) ' "$log" | tail -5 | sed 's/^/    /'
		nfail=1
	fi
	if [ "$npass" -eq 0 ] && [ "$nfail" -eq 0 ]; then
		echo "FAIL $name: printed no PASS/FAIL line"
		nfail=1
	fi
	passed=$((passed + npass))
	failed=$((failed + nfail))
	rm -f "$log"
}

skip_reason()
{
	tail -1 "$1" | sed 's/^SKIP: //'
}

run_integration()
{
	local script=$1 name log rc t0 secs limit

	name=$(basename "$script" .sh)
	log=$(mktemp)
	limit=$(sed -n 's/^# test-timeout: \([0-9][0-9]*\)$/\1/p' "$script" | head -1)
	# (a TEST_TIMEOUT that is no number of seconds, "2m", is taken as it is)
	[ -n "$limit" ] && [ "$limit" -gt "$TEST_TIMEOUT" ] 2>/dev/null || limit=$TEST_TIMEOUT
	t0=$(date +%s)
	timeout -k 10 "$limit" bash "$script" >"$log" 2>&1
	rc=$?
	secs=$(($(date +%s) - t0))
	case $rc in
	0)
		echo "PASS $name (${secs}s)"
		passed=$((passed + 1))
		[ "${VERBOSE:-0}" = 1 ] && sed 's/^/    /' "$log"
		;;
	2)
		if [ "$CI" = true ]; then
			echo "FAIL $name: skipped, and CI=true makes a skip a failure: $(skip_reason "$log")"
			failed=$((failed + 1))
		else
			echo "SKIP $name: $(skip_reason "$log")"
			skipped=$((skipped + 1))
		fi
		;;
	*)
		if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
			echo "FAIL $name: timed out after ${limit}s"
		else
			echo "FAIL $name (exit $rc, ${secs}s)"
		fi
		sed 's/^/    /' "$log"
		failed=$((failed + 1))
		;;
	esac
	rm -f "$log"
}

nr_run=0
nr_unit=0
for bin in "$OUT"/tests/test_*; do
	if [ ! -f "$bin" ] || [ ! -x "$bin" ]; then
		continue # the .d dependency files next to the binaries
	fi
	selected "$(basename "$bin")" || continue
	nr_unit=$((nr_unit + 1))
	nr_run=$((nr_run + 1))
	run_unit "$bin"
done
if [ "$nr_unit" -eq 0 ] && [ -z "$TESTS" ]; then
	echo "FAIL unit: no unit-test binaries in $OUT/tests (run make test-bins)"
	failed=$((failed + 1))
fi

for script in "$SCRIPTS"/*.sh; do
	[ -f "$script" ] || continue
	selected "$(basename "$script" .sh)" || continue
	nr_run=$((nr_run + 1))
	run_integration "$script"
done
# A mistyped TESTS must not look like a green run.
if [ "$nr_run" -eq 0 ]; then
	echo "FAIL run.sh: no test matched TESTS='$TESTS'"
	failed=$((failed + 1))
fi

if [ "$skipped" -gt 0 ]; then
	echo "$passed passed, $failed failed, $skipped skipped"
else
	echo "$passed passed, $failed failed"
fi
[ "$failed" -eq 0 ]
