#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# A tid reused within one recording (the pids wrapped around) is two
# threads, not one. tidreuse runs a process that burns 300 ms and sleeps
# 200 ms, reaps it, and runs another with the very pid (clone3() with
# set_tid) that burns 100 ms and sleeps 600 ms; it prints both pids and
# figures (ground truth). Recorded three times: with no gap, the first one's
# BPF entry is still in the threads map when the second takes its tid
# (thread_reuse() hands it to user space); with a 1.5 s gap it was drained
# first. And a third time with two threads of one process (tidreuse -t:
# the second gets the first's tid through ns_last_pid), no gap. Each time,
# by -f json:
# - the pid has two threads of that tid, with the on-CPU and sleep time
#   of each child (on-CPU within 10% + 10 ms, sleep within 5% + 10 ms);
# - its stacks add up, per state, to the two threads' sums, to the us;
# - the summary says one thread had an earlier one's tid, and nothing
#   was lost (no reused_threads_lost line).
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"
require_bpf
require_workload tidreuse

for run in "gap0 -g 0" "gap1500 -g 1500" "threads -t -g 0"; do
	# shellcheck disable=SC2086 # words: a name, then tidreuse's arguments
	set -- $run
	name=$1
	shift
	run_wprof "$name" record -f json -o "$TMP/$name.json" -- "$WORKLOADS/tidreuse" "$@"
	if grep -qh '^tidreuse: ' "$TMP/$name.out" "$TMP/$name.err"; then
		skip "the pid cannot be reused here: $(grep -h '^tidreuse: ' "$TMP/$name.err")"
	fi
	check_wprof_ok "$name"
	check "$name: one thread had an earlier one's tid" \
		grep -q '^wprof: recorded .*(1 had the tid of an earlier thread' "$TMP/$name.err"
	check "$name: reused_threads_lost 0" bash -c "! grep -q '\[reused_threads_lost\]' '$TMP/$name.err'"
	check "$name: two threads of one tid, each with its own times, stacks adding up" \
		python3 - "$TMP/$name.json" "$TMP/$name.out" <<'PY'
import json, re, sys

d = json.load(open(sys.argv[1]))
truth = [tuple(map(int, m)) for m in
         re.findall(r'^(?:child \d pid|thread \d tid) (\d+) burn_ms (\d+) sleep_ms (\d+)$', open(sys.argv[2]).read(), re.M)]
ok = len(truth) == 2 and truth[0][0] == truth[1][0]
pid = truth[0][0] if truth else -1
threads = [t for p in d['processes'] for t in p['threads'] if t['tid'] == pid]
print('#   truth', truth, 'threads', [(t['on_cpu_us'], t['sleep_us']) for t in threads])
ok = ok and len(threads) == 2
# the one that burned more is the first
threads.sort(key=lambda t: -t['on_cpu_us'])
want = sorted(truth, key=lambda t: -t[1])
for t, (_, burn, sleep) in zip(threads, want):
    ok = ok and abs(t['on_cpu_us'] - burn * 1000) <= burn * 100 + 10000
    ok = ok and abs(t['sleep_us'] - sleep * 1000) <= sleep * 50 + 10000
sums = {}
for s in d['stacks']:
    if s['tid'] == pid:
        sums[s['tag']] = sums.get(s['tag'], 0) + s['total_us']
for tag, field in (('on-cpu', 'on_cpu_us'), ('off-cpu:sleep', 'sleep_us'),
                   ('off-cpu:runqueue', 'runqueue_us')):
    want_us = sum(t[field] for t in threads)
    print('#  ', tag, 'stacks', sums.get(tag, 0), 'threads', want_us)
    ok = ok and sums.get(tag, 0) == want_us
sys.exit(0 if ok else 1)
PY
done
finish
