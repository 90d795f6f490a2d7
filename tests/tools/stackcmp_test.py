#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""stackcmp_test: stackcmp.py on made-up inputs, so that its notation rules
are known to hold and a wrong stack is known to fail.

usage: stackcmp_test.py STACKCMP LIBC

LIBC is the C library's file (its symbols give an alias pair and the
rt_sigreturn trampoline). Prints one "ok:"/"not ok:" line per case; exits
1 if any case went wrong.
"""
import json
import os
import subprocess
import sys
import tempfile

TRAMPOLINE = bytes.fromhex("48c7c00f0000000f05")
BASE = 0x7f0000000000  # libc mapped from file offset 0 here
EXE = 0x555500000000


def aliases(libc):
    """Two names of one address in LIBC's .dynsym, and that address."""
    out = subprocess.run(["nm", "-D", "--defined-only", libc], capture_output=True,
                         text=True, check=True).stdout
    by = {}
    for line in out.splitlines():
        p = line.split()
        if len(p) == 3 and p[1] in "TW" and int(p[0], 16):
            by.setdefault(int(p[0], 16), set()).add(p[2].split("@")[0])
    for addr, names in sorted(by.items()):
        if len(names) >= 2:
            a, b = sorted(names)[:2]
            return a, b, addr
    raise SystemExit("no aliases in %s" % libc)


def main():
    stackcmp, libc = sys.argv[1], sys.argv[2]
    with open(libc, "rb") as f:
        tramp = f.read().find(TRAMPOLINE)
    a1, a2, aaddr = aliases(libc)
    d = tempfile.mkdtemp(prefix="stackcmp-test.")
    lib = "target:" + libc
    # thread 11: every rule; 12: the callers of another thread; 13: Go;
    # 14: ran during the window
    gdb = """Thread 5 (Thread 0x7f0 (LWP 15) "strict"):
#0  0x00007f0000085f16 in ?? () from {lib}
#1  0x00007f00000885d8 in pthread_cond_wait () from {lib}
#2  0x0000555500001111 in ns::A::f(int) ()
Thread 4 (Thread 0x7f1 (LWP 14) "busy"):
#0  0x00007f0000085f16 in ?? () from {lib}
Thread 3 (Thread 0x7f2 (LWP 13) "gothread"):
#0  runtime.futex () at /go/src/runtime/sys_linux_amd64.s:560
#1  0x0000000000432c56 in runtime.futexsleep (addr=..., val=..., ns=...) at os_linux.go:69
#2  0x000000000043d28c in runtime.mPark () at proc.go:1457
#3  runtime.stopm () at proc.go:2247
#4  0x00000000004636e5 in runtime.mstart () at asm_amd64.s:390
#5  0x0000000000401824 in runtime/cgo(.text) ()
#6  0x00007f033efeb000 in ?? ()
#7  0x0000000000000000 in ?? ()
Thread 2 (Thread 0x7f3 (LWP 12) "other"):
#0  0x00007f0000085f16 in ?? () from {lib}
#1  0x00007f00000885d8 in pthread_cond_wait () from {lib}
#2  0x0000555500001321 in wait_for_flush (w=...) at condwait.c:80
#3  0x0000555500001400 in worker_loop (arg=...) at condwait.c:95
Thread 1 (Thread 0x7f4 (LWP 11) "rules"):
#0  0x00007f0000085f16 in ?? () from {lib}
#1  0x00007f00000885d8 in pthread_cond_wait () from {lib}
#2  0x{alias:012x} in {a1} () from {lib}
#3  <signal handler called>
#4  0x0000555500001111 in ns::Klass<int>::method(int, char const*) const ()
#5  0x0000555500001200 in helper_inl (x=...) at prog.c:3
#6  outer (x=...) at prog.c:9
#7  0x00007f0000001000 in ?? ()
""".format(lib=lib, a1=a1, alias=BASE + aaddr + 4)
    maps = "%x-%x r-xp 00000000 fe:01 1 %s\n%x-%x r-xp 00000000 fe:01 2 /nonexistent/prog\n" % (
        BASE, BASE + 0x400000, libc, EXE, EXE + 0x10000)
    def stack(tid, comm, frames):
        return {"tag": "off-cpu:sleep", "pid": 10, "tid": tid, "comm": comm,
                "frames": frames + ["entry_SYSCALL_64_after_hwframe_[k]", "schedule_[k]"],
                "count": 1, "total_us": 2000000, "max_us": 2000000}
    j = {"window_us": 2000000, "freq_hz": 99, "period_us": 10101, "lost": {},
         "processes": [{"pid": 10, "comm": "prog", "threads": [
             {"tid": t, "comm": c, "wall_us": 2000000, "on_cpu_us": 0, "runqueue_us": 0,
              "sleep_us": 2000000, "disk_us": 0, "blocks": 1, "max_block_us": 2000000}
             for t, c in ((11, "rules"), (12, "other"), (13, "gothread"), (14, "busy"),
                          (15, "strict"))]}],
         "stacks": [
             stack(11, "rules", ["libc.so.6+0x1000", "outer", "ns::Klass<int>::method",
                                 "libc.so.6+0x%x" % (tramp - 1), a2,
                                 "pthread_cond_wait@@GLIBC_2.3.2", "libc.so.6+0x85f16"]),
             # the callers of thread 11, not its own
             stack(12, "other", ["libc.so.6+0x1000", "outer", "pthread_cond_wait",
                                 "libc.so.6+0x85f16"]),
             stack(13, "gothread", ["runtime.mstart.abi0", "runtime.stopm",
                                    "runtime.futexsleep", "runtime.futex.abi0"]),
             stack(14, "busy", ["libc.so.6+0x85f16"]),
             # near misses: an offset 10 bytes off, another function, another method
             stack(15, "strict", ["ns::A::g", "pthread_cond_signal", "libc.so.6+0x85f20"])]}
    files = {"gdb": gdb, "maps": maps, "json": json.dumps(j),
             "before": "10 11 5 1 rules\n10 12 5 1 other\n10 13 5 1 gothread\n10 14 5 1 busy\n"
                       "10 15 5 1 strict\n",
             "after": "10 11 5 1 rules\n10 12 5 1 other\n10 13 5 1 gothread\n10 14 9 1 busy\n"
                      "10 15 5 1 strict\n"}
    for name, text in files.items():
        with open(os.path.join(d, name), "w") as f:
            f.write(text)

    def run(*extra):
        r = subprocess.run([sys.executable, stackcmp, "--json", d + "/json", "--before",
                            d + "/before", "--after", d + "/after", "--gdb", "10=" + d + "/gdb",
                            "--maps", "10=" + d + "/maps"] + list(extra),
                           capture_output=True, text=True)
        return r.returncode, r.stdout + r.stderr

    bad = 0
    cases = [
        ("every notation rule: versions, ?? with offsets, aliases %s/%s, the signal frame,"
         " C++, inlined frames, Go's .abi0 and stack root" % (a1, a2),
         ["--need", "comm=rules:1", "--need", "comm=gothread:1"], 1,
         lambda out: "ok: pid 10 tid 11 (rules): 7 frames match" in out and
         "ok: pid 10 tid 13 (gothread): 4 frames match" in out),
        ("a thread shown with another thread's callers fails, with a side-by-side diff",
         [], 1, lambda out: "not ok: pid 10 tid 12 (other): stacks differ: 2 of gdb's 4"
         " frames in wprof's 4" in out and "wait_for_flush [prog+0x1321]" in out and
         "+  outer" in out),
        ("near misses are not equal: an offset 10 bytes off, another function, another"
         " C++ method", [], 1, lambda out: "not ok: pid 10 tid 15 (strict): stacks differ: 0 of"
         " gdb's 3 frames in wprof's 3" in out),
        ("a thread that ran is not compared, and a --need of it is a setup failure (exit 3)",
         ["--need", "comm=busy:1"], 1, lambda out: "ran during the window" in out and
         "not ok: 0 threads named busy" in out),
    ]
    rc_all, out_all = run("--need", "comm=rules:1", "--need", "comm=gothread:1",
                          "--need", "comm=busy:1")
    for what, _, _, test in cases:
        good = test(out_all)
        print("%s: stackcmp: %s" % ("ok" if good else "not ok", what))
        bad += not good
    good = rc_all == 1
    print("%s: stackcmp exits 1 when a stack differs (got %d)" % ("ok" if good else "not ok", rc_all))
    bad += not good
    # only the matching threads: exit 0; only the unmet need: exit 3
    with open(os.path.join(d, "after"), "w") as f:
        f.write(files["after"].replace("10 12 5 1", "10 12 6 1").replace("10 15 5 1", "10 15 6 1"))
    rc, out = run("--need", "comm=rules:1")
    good = rc == 0
    print("%s: stackcmp exits 0 when every compared stack matches (got %d)" %
          ("ok" if good else "not ok", rc))
    bad += not good
    rc3, out3 = run("--need", "comm=busy:1")
    good = rc3 == 3
    print("%s: stackcmp exits 3 when a --need is unmet but nothing differs (got %d)" %
          ("ok" if good else "not ok", rc3))
    bad += not good
    if bad:
        print("# stackcmp's report on the first run:")
        print("".join("#   " + x + "\n" for x in out_all.splitlines()))
    else:
        subprocess.run(["rm", "-rf", d])
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
