#!/usr/bin/env bash
# Install the Debian packages wprof needs to build, test and benchmark.
# Only the missing ones are installed, so a ready machine pays one dpkg query.
set -eu

pkgs="make gcc g++ clang llvm pkg-config libbpf-dev libelf-dev libdw-dev zlib1g-dev liblzma-dev bpftool"
# libdw loads it to fetch debug info when DEBUGINFOD_URLS is set
pkgs="$pkgs libdebuginfod1"
# for the tests: JSON checks, a JIT workload, unshare/setpriv
pkgs="$pkgs python3 nodejs util-linux binutils"
# the fuzz harnesses (tests/fuzz): clang's libFuzzer and sanitizer runtimes,
# only recommended by clang, which --no-install-recommends leaves out
pkgs="$pkgs libclang-rt-dev"
# for the tests on real programs (tests/integration/real_*.sh): gdb's
# backtraces are their ground truth; Debian's builds of these programs,
# without frame pointers (Go has them), are what they profile
pkgs="$pkgs gdb redis-server redis-tools nginx postgresql memcached golang-go"
# for the outputs: go tool pprof (golang-go, above) reads the pprof files;
# headless chromium drives the flame graph's search and zoom
pkgs="$pkgs chromium"
if [ "${1:-}" = "--bench" ]; then
	pkgs="$pkgs linux-perf bpftrace"
fi

# One query for them all: a package never installed is not listed at all.
# shellcheck disable=SC2086
installed=$(dpkg-query -W -f='${Package} ${db:Status-Status}\n' $pkgs 2>/dev/null |
	awk '$2 == "installed" { print $1 }')
missing=""
for p in $pkgs; do
	echo "$installed" | grep -qx -- "$p" || missing="$missing $p"
done
[ -z "$missing" ] && exit 0

if [ "$(id -u)" -ne 0 ]; then
	echo "install-deps: missing Debian packages:$missing; run as root: apt-get install$missing" >&2
	exit 1
fi
echo "install-deps: installing$missing" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq >&2
# The tests start their own redis, nginx, postgres and memcached on unix
# sockets: keep the packages from starting system-wide services (ports 80,
# 5432, 6379, 11211) as they install, unless the machine already has a
# policy of its own.
policy=/usr/sbin/policy-rc.d
own_policy=
if [ ! -e "$policy" ]; then
	printf '#!/bin/sh\nexit 101\n' >"$policy" && chmod 755 "$policy" && own_policy=1
fi
# shellcheck disable=SC2086
apt-get install -y -qq --no-install-recommends $missing >&2 || rc=$?
[ -n "$own_policy" ] && rm -f "$policy"
exit "${rc:-0}"
