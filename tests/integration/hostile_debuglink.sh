#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# An unprivileged user (nobody) runs stripped copies of sleepburn whose
# .gnu_debuglink names a trap; root's wprof records each with -p and must
# neither hang nor read what nobody could not:
# - fifo:    the debug file is a FIFO: a plain open() would block forever
#            (fifo_open waits for a writer) and SIGINT would not help;
# - escape:  the debuglink is "../../../..<root-only dir>/sb.debug", a path
#            out of the directory; the real debug file sits there, 0600 root
#            in a 0700 directory, with the very build-id;
# - symlink: the debug file is nobody's symlink to that root-only file.
# In all three the recording ends on time with exit 0, and the burner's
# frames stay unnamed (sleepburn+0x...): no symbol came from the root-only
# file. A control copy whose debug file is nobody's own, next to it, is named.
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"
require_bpf
require_workload sleepburn

secret=$(mktemp -d /tmp/wprof-secret.XXXXXX)
chmod 700 "$secret"
trap 'rm -rf "$secret"' EXIT
objcopy --only-keep-debug "$WORKLOADS/sleepburn" "$secret/sb.debug"
chmod 600 "$secret/sb.debug"

# make_copy NAME LINKNAME: a stripped sleepburn in $TMP/NAME/ with a .gnu_debuglink
# section naming LINKNAME (any string: the section is written by hand).
make_copy()
{
	local d=$TMP/$1 name=$2 len pad

	mkdir -p "$d"
	strip --strip-all -o "$d/sb.stripped" "$WORKLOADS/sleepburn"
	len=$((${#name} + 1))
	pad=$(((4 - len % 4) % 4))
	{
		printf '%s\0' "$name"
		head -c "$pad" /dev/zero
		printf '\0\0\0\0' # CRC: never checked before the name is refused
	} >"$d/link.bin"
	objcopy --add-section .gnu_debuglink="$d/link.bin" "$d/sb.stripped" "$d/sb"
	rm -f "$d/sb.stripped" "$d/link.bin"
	chown -R 65534:65534 "$d"
}

# record NAME: run $TMP/NAME/sb as nobody, record it for 1 s (bounded by 30 s).
record()
{
	local name=$1 pid

	start_bg "$TMP/$name.log" setpriv --reuid=65534 --regid=65534 --clear-groups \
		"$TMP/$name/sb" -n 20 -N victim
	pid=$BG_PID
	wait_line "$TMP/$name.log" '^ready [0-9]+$' 10 || fatal "$name: sleepburn did not start"
	log "wprof record -p $pid -d 1 ($name)"
	timeout -k 5 30 "$WPROF" record -p "$pid" -d 1 -o "$TMP/$name.folded" 2>"$TMP/$name.err"
	RC=$?
	kill "$pid" 2>/dev/null
	check "$name: wprof ends on time with exit 0 (got $RC; 124 is a hang)" test "$RC" -eq 0
}

make_copy fifo sb.debug
setpriv --reuid=65534 --regid=65534 --clear-groups mkfifo "$TMP/fifo/sb.debug"
record fifo

esc=$(printf '../%.0s' 1 2 3 4 5 6 7 8)${secret#/}/sb.debug
make_copy escape "$esc"
record escape

make_copy symlink sb.debug
setpriv --reuid=65534 --regid=65534 --clear-groups ln -s "$secret/sb.debug" "$TMP/symlink/sb.debug"
record symlink

for name in fifo escape symlink; do
	named=$(grep -c 'burn_cpu\|sleep_phase' "$TMP/$name.folded")
	check "$name: no frame named from the root-only debug file ($named lines)" \
		test "$named" -eq 0
done

# control: nobody's own debug file next to the binary names the frames
make_copy own sb.debug
objcopy --only-keep-debug "$WORKLOADS/sleepburn" "$TMP/own/sb.debug"
chown 65534:65534 "$TMP/own/sb.debug"
record own
check "own: a debug file of the binary's owner names burn_cpu" \
	grep -q 'burn_cpu' "$TMP/own.folded"
finish
