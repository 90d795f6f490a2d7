# SPDX-License-Identifier: GPL-2.0-only
"""pythreads: Python threads whose wall-clock time is known by where they are.

Three threads, each several functions deep: `sleeper` naps in time.sleep(),
`waiter` waits for a lock that `holder` keeps most of the time, `burner`
computes. Prints "thread NAME TID" for each, then "ready"; after -d SECONDS
(from ready) it writes, for each thread, what Python itself says it is
running (sys._current_frames(), read 100 times a second), to -o FILE:
"TID QUALNAME@LINE;QUALNAME@LINE;... COUNT" lines, root first, one per
distinct stack, with how many times it was seen. Runs -n SECONDS in all.
"""
import argparse
import sys
import threading
import time

lock = threading.Lock()
names = {}


def nap_leaf():
    time.sleep(0.05)


def nap_mid():
    nap_leaf()


def sleeper():
    while True:
        nap_mid()


def hold():
    while True:
        with lock:
            time.sleep(0.2)
        time.sleep(0.0005)


def wait_leaf():
    with lock:
        pass


def wait_mid():
    wait_leaf()


def waiter():
    while True:
        wait_mid()


def burn_leaf(n):
    s = 0
    for i in range(n):
        s += i * i
    return s


def burn_mid():
    return burn_leaf(20000)


def burner():
    while True:
        burn_mid()


def chain(frame):
    out = []
    while frame is not None:
        code = frame.f_code
        # 3.11 on: qualified
        out.append("%s@%d" % (getattr(code, "co_qualname", code.co_name), frame.f_lineno))
        frame = frame.f_back
    return ";".join(reversed(out))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("-n", type=float, default=30)
    ap.add_argument("-d", type=float, default=3)
    ap.add_argument("-o", default=None)
    a = ap.parse_args()
    ids = {}
    for f in (sleeper, holder, waiter, burner):
        t = threading.Thread(target=f, name=f.__name__, daemon=True)
        t.start()
        ids[t.ident] = t
    time.sleep(0.2)
    for ident, t in ids.items():
        print("thread %s %d" % (t.name, t.native_id), flush=True)
    print("ready", flush=True)
    seen = {}
    end = time.monotonic() + a.d
    while time.monotonic() < end:
        for ident, frame in sys._current_frames().items():
            t = ids.get(ident)
            if t is not None:
                k = (t.native_id, chain(frame))
                seen[k] = seen.get(k, 0) + 1
        time.sleep(0.01)
    if a.o:
        with open(a.o, "w") as f:
            for (tid, c), n in sorted(seen.items()):
                f.write("%d %s %d\n" % (tid, c, n))
    time.sleep(max(0, a.n - a.d))


holder = hold
if __name__ == "__main__":
    main()
