#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Under ASan and UBSan (make check-sanitize): the whole machine, -a, which
# reads every process's maps, files, perf maps and the kernel's symbols:
# folded to a file and JSON with --stats, both valid, no sanitizer report.
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"
# shellcheck source=tests/lib_san.sh
. "$(dirname "$0")/../lib_san.sh"
san_require

san_record all_folded 0 record -a -d 1 -o "$TMP/all.folded"
check_folded "$TMP/all.folded"
san_record all_json 0 record -a -d 1 -f json --stats -o "$TMP/all.json"
check_json "$TMP/all.json"
finish
