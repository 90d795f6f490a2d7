#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# churn (thousands of threads that end, their slots retired and taken again,
# every one in the output, nothing lost) again with the first part of the
# thread slots cut to 64 (WPROF_THREAD_SLOTS=few: see thread_slots.sh), so
# that nearly every thread's entry is in the overflow part. A script of its
# own: churn's run takes most of the runner's time for one script (and sets
# its own limit: 76 s here).
# test-timeout: 240
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"
require_bpf

export WPROF_THREAD_SLOTS=few
rerun_tests "with 64 first thread slots" churn
finish
