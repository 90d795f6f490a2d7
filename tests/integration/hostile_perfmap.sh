#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Perf maps (/tmp/perf-PID.map) are written by whoever runs the process:
# - nobody's process with a 1 GiB sparse perf map (4 KiB on disk): root's
#   wprof reads at most 64 MiB of it, so its peak RSS stays far below the
#   file's size, and it says the map was cut;
# - nobody's process (a stripped copy, so that frames fall to the perf map)
#   whose perf map is a root-only (0600) file: ignored, none of its names
#   appears (the user could not have read it); the same map as nobody's own
#   file names the code (the control).
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"
require_bpf
require_workload sleepburn

# start_nobody NAME: sleepburn as nobody; sets PID
start_nobody()
{
	start_bg "$TMP/$1.log" setpriv --reuid=65534 --regid=65534 --clear-groups \
		"$WORKLOADS/sleepburn" -n 20 -N "$1"
	PID=$BG_PID
	wait_line "$TMP/$1.log" '^ready [0-9]+$' 10 || fatal "$1: sleepburn did not start"
}

start_nobody big
map=/tmp/perf-$PID.map
trap 'rm -f /tmp/perf-'"$PID"'.map' EXIT
setpriv --reuid=65534 --regid=65534 --clear-groups sh -c \
	"printf '%x 10 bogus_name\n' 4096 > '$map' && truncate -s 1G '$map'" ||
	fatal "cannot write $map as nobody"
run_wprof big record -p "$PID" -d 1 --stats -o "$TMP/big.folded"
check_wprof_ok big
rss=$(sed -n 's/^wprof: peak RSS \([0-9]*\) KiB$/\1/p' "$TMP/big.err")
check_le "peak RSS with a 1 GiB sparse perf map (KiB)" "${rss:-999999999}" 400000
check "the cut perf map is reported" grep -q 'perf map' "$TMP/big.err"
rm -f "$map"

# a stripped copy: its frames have no symbol, so a perf map covering its code names them
cp "$WORKLOADS/sleepburn" "$TMP/sb"
strip --strip-all "$TMP/sb"
# jit_map NAME OWNER MODE: a perf map covering the running copy's code, named NAME
jit_map()
{
	local range

	range=$(awk -v f="$TMP/sb" '$2 ~ /x/ && $6 == f { print $1; exit }' "/proc/$PID/maps")
	[ -n "$range" ] || fatal "no executable mapping of $TMP/sb in $PID"
	printf '%x %x %s\n' "0x${range%-*}" "$((0x${range#*-} - 0x${range%-*}))" "$1" \
		>"/tmp/perf-$PID.map"
	chown "$2" "/tmp/perf-$PID.map"
	chmod "$3" "/tmp/perf-$PID.map"
}
for who in secret own; do
	start_bg "$TMP/$who.log" setpriv --reuid=65534 --regid=65534 --clear-groups "$TMP/sb" -n 20
	PID=$BG_PID
	wait_line "$TMP/$who.log" '^ready [0-9]+$' 10 || fatal "$who: sleepburn did not start"
	trap 'rm -f /tmp/perf-'"$PID"'.map' EXIT
	if [ "$who" = secret ]; then
		jit_map root_only_name 0:0 600
	else
		jit_map own_map_name 65534:65534 644
	fi
	run_wprof "$who" record -p "$PID" -d 1 -o "$TMP/$who.folded"
	check_wprof_ok "$who"
	rm -f "/tmp/perf-$PID.map"
	kill "$PID"
done
check "no name from a root-only perf map of nobody's process" \
	sh -c "! grep -q root_only_name '$TMP/secret.folded'"
check "control: nobody's own perf map names the code" grep -q own_map_name "$TMP/own.folded"
finish
