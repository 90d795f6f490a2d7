#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Every user error: non-zero exit, exactly one line on stderr starting with
# `wprof: `, nothing on stdout. Each case has a valid target (a running
# sleepburn) so that only the named mistake is wrong.
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"
require_bpf
require_workload sleepburn

start_bg "$TMP/sleepburn.log" "$WORKLOADS/sleepburn"
pid=$BG_PID
wait_line "$TMP/sleepburn.log" '^ready [0-9]+$' 10 || fatal "sleepburn did not start"
gone=$(unused_pid)

# expect_error DESC ERE ARGS...: the one stderr line must also match ERE.
expect_error()
{
	local desc=$1 ere=$2 nlines

	shift 2
	run_wprof err "$@"
	nlines=$(wc -l <"$TMP/err.err")
	if [ "$RC" -ne 0 ] && [ "$RC" -ne 124 ] && [ "$nlines" -eq 1 ] &&
		grep -q '^wprof: ' "$TMP/err.err" && grep -Eq "$ere" "$TMP/err.err" &&
		[ ! -s "$TMP/err.out" ]; then
		ok "$desc: exit $RC, $(cat "$TMP/err.err")"
	else
		not_ok "$desc: exit $RC, $nlines stderr lines, $(wc -c <"$TMP/err.out") stdout bytes (want non-zero exit, one 'wprof: ' line matching /$ere/, no stdout)"
	fi
}

# expect_usage DESC ERE ARGS...: a mistake in the arguments exits 2.
expect_usage()
{
	expect_error "$@"
	check "$1: exit status 2 (got $RC)" test "$RC" -eq 2
}

# -p/-t lists: blanks and commas separate ids; an empty element anywhere is
# refused, the line saying which mistake it is and how lists are written.
for opt in -p -t; do
	expect_usage "$opt ''" "list '': it is empty; .*separated by commas or spaces" \
		record "$opt" '' -d 1
	expect_usage "$opt '$pid,'" "ends with a comma" record "$opt" "$pid," -d 1
	expect_usage "$opt ',$pid'" "starts with a comma" record "$opt" ",$pid" -d 1
	expect_usage "$opt '$pid,,$pid'" "empty element between two commas" \
		record "$opt" "$pid,,$pid" -d 1
	expect_usage "$opt '$pid, ,$pid'" "empty element between two commas" \
		record "$opt" "$pid, ,$pid" -d 1
	expect_usage "$opt '$pid abc'" "'abc' is not a positive number" record "$opt" "$pid abc" -d 1
	expect_usage "$opt '$pid 0'" "'0' is not a positive number" record "$opt" "$pid 0" -d 1
done
expect_error "nonexistent pid $gone in a list" "pid $gone does not exist" \
	record -p "$pid $gone" -d 1
expect_error "nonexistent pid $gone" "$gone" record -p "$gone" -d 1
expect_error "nonexistent tid $gone" "$gone" record -t "$gone" -d 1
expect_error "-d 0" . record -p "$pid" -d 0
expect_error "-d -1" . record -p "$pid" -d -1
expect_error "-d abc" . record -p "$pid" -d abc
expect_error "-F 0" . record -p "$pid" -d 1 -F 0
expect_error "-F abc" . record -p "$pid" -d 1 -F abc
expect_error "unknown option --bogus" bogus record -p "$pid" -d 1 --bogus
expect_error "unwritable output /nonexistent/dir/out" /nonexistent/dir/out \
	record -p "$pid" -d 1 -o /nonexistent/dir/out
expect_error "missing BTF file" /nonexistent record -p "$pid" -d 1 --btf /nonexistent
expect_error "invalid BTF file /etc/passwd" /etc/passwd record -p "$pid" -d 1 --btf /etc/passwd

# Unprivileged: as nobody, without any capability. A copy of the binary in
# our 0755 scratch dir, so the test does not depend on the repo's permissions.
cp "$WPROF" "$TMP/wprof"
chmod 755 "$TMP/wprof"
WPROF_SAVED=$WPROF
WPROF="setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all $TMP/wprof"
# shellcheck disable=SC2086 # word splitting of the setpriv command is wanted
run_nobody()
{
	log "as nobody: wprof $*"
	timeout -k 5 60 $WPROF "$@" >"$TMP/err.out" 2>"$TMP/err.err"
	RC=$?
}
run_nobody record -p "$pid" -d 1
nlines=$(wc -l <"$TMP/err.err")
if [ "$RC" -ne 0 ] && [ "$nlines" -eq 1 ] && grep -q '^wprof: .*CAP_BPF' "$TMP/err.err" &&
	[ ! -s "$TMP/err.out" ]; then
	ok "unprivileged: exit $RC, $(cat "$TMP/err.err")"
else
	not_ok "unprivileged: exit $RC, $nlines stderr lines, $(wc -c <"$TMP/err.out") stdout bytes (want non-zero exit, one 'wprof: ' line naming CAP_BPF, no stdout)"
	sed 's/^/#   /' "$TMP/err.err" | head -10
fi
check "unprivileged message also names CAP_PERFMON" grep -q CAP_PERFMON "$TMP/err.err"
WPROF=$WPROF_SAVED

# a zombie: its child exits, it never reaps (exec replaced the shell that would)
sh -c 'sleep 0.1 & exec sleep 30' &
zparent=$!
LIB_PIDS+=("$zparent")
zombie=
for _ in $(seq 50); do
	zombie=$(ps -o pid=,stat= --ppid "$zparent" | awk '$2 ~ /^Z/ { print $1 }')
	[ -n "$zombie" ] && break
	sleep 0.1
done
[ -n "$zombie" ] || fatal "no zombie appeared"
expect_error "zombie pid $zombie" "zombie" record -p "$zombie" -d 1
finish
