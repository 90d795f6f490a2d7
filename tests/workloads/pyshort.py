# SPDX-License-Identifier: GPL-2.0-only
"""pyshort: a Python program that makes new code while it runs, then ends.

It computes for a while, then compiles a module of its own (new code objects,
as an import makes) and sleeps -s SECONDS in a function of it, several
calls deep, then returns and ends. Prints "slept NS" (its own clock) at the
end: the time the sleep took, for a test to compare with.
"""
import sys
import time

SOURCE = '''
import time

def late_leaf(s):
    t0 = time.monotonic_ns()
    time.sleep(s)
    return time.monotonic_ns() - t0

def late_phase(s):
    return late_leaf(s)
'''


def early():
    s = 0
    for i in range(300000):
        s += i
    return s


def main():
    secs = float(sys.argv[sys.argv.index("-s") + 1]) if "-s" in sys.argv else 0.5
    early()
    mod = {}
    exec(compile(SOURCE, "latemod.py", "exec"), mod)
    ns = mod["late_phase"](secs)
    print("slept %d" % ns, flush=True)


main()
