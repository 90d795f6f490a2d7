#!/usr/bin/env bash
# Install the Debian packages wprof needs to build, test and benchmark.
# Only the missing ones are installed, so a ready machine pays one dpkg query.
set -eu

pkgs="make gcc g++ clang llvm pkg-config libbpf-dev libelf-dev libdw-dev zlib1g-dev bpftool"
# libdw loads it to fetch debug info when DEBUGINFOD_URLS is set
pkgs="$pkgs libdebuginfod1"
# for the tests: JSON checks, a JIT workload, unshare/setpriv
pkgs="$pkgs python3 nodejs util-linux binutils"
if [ "${1:-}" = "--bench" ]; then
	pkgs="$pkgs linux-perf bpftrace"
fi

missing=""
for p in $pkgs; do
	if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed"; then
		missing="$missing $p"
	fi
done
[ -z "$missing" ] && exit 0

if [ "$(id -u)" -ne 0 ]; then
	echo "install-deps: missing Debian packages:$missing; run as root: apt-get install$missing" >&2
	exit 1
fi
echo "install-deps: installing$missing" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq >&2
# shellcheck disable=SC2086
apt-get install -y -qq --no-install-recommends $missing >&2
