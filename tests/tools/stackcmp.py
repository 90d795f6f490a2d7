#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""stackcmp: wprof's user stacks against gdb's, frame for frame.

For every thread that slept through the whole recording window, the user
frames wprof gives its off-CPU time (--format json) are compared with the
backtrace gdb takes of the same thread right after the recording: a thread
that did not run between the two has one stack, so both must show the same
frames, root to leaf, from the thread's entry (_start, clone3, the Go
runtime's stack root) down to the syscall.

usage: stackcmp.py --json OUT.json --before SW0 --after SW1
                   --gdb PID=FILE... --maps PID=FILE...
                   [--need SPEC]... [--label PID=NAME]...

  --json     wprof record -f json output
  --before   thread switch counts read right before the recording, one line
  --after    per thread "PID TID VOLUNTARY NONVOLUNTARY COMM" (the
             *_ctxt_switches of /proc/PID/task/TID/status); a thread whose
             counts did not change did not run: it slept through the window
  --gdb      `thread apply all bt` of process PID (see tests/lib_real.sh
             for the gdb options: no separate debug files, no arguments)
  --maps     /proc/PID/maps read while the process lived
  --need     what must be compared, else the setup failed:
             pid=PID every thread of PID; tid=TID; comm=ERE:N at least N
             threads whose comm matches ERE (anchored)
  --label    a name for PID in the report (checkpointer, worker, ...)

Which frames are equal. Only notation is normalized:
  - symbol versions: "pthread_cond_wait@@GLIBC_2.3.2" is pthread_cond_wait;
  - gdb's "??" is wprof's "MODULE+0xOFF" when the module is the file gdb's
    pc lies in and OFF is that pc's file offset (or one less: wprof names a
    return address by the call before it);
  - gdb's "<signal handler called>" is wprof's __restore_rt, or a
    "MODULE+0xOFF" whose bytes (at OFF or OFF+1) are the rt_sigreturn
    trampoline (mov $15,%rax; syscall) the kernel returns to;
  - C++: gdb prints the whole demangled name, wprof the qualified name
    without return type, parameters and qualifiers (as perf does);
  - Go: the ".abi0" suffix of assembly functions' symbols;
  - aliases: two names of one address in the module's symbol tables
    (nm -D and nm of the file);
  - inlined calls: gdb shows them as frames when the file has DWARF (a
    frame N > 0 printed without an address is the function frame N-1 is
    inlined into); wprof shows one frame per address (no --inline), so the
    inlined frames are dropped from gdb's list;
  - the end of gdb's list: frames with pc 0, and for Go what follows the
    stack root (runtime.mstart, runtime.mcall, runtime.goexit,
    runtime.rt0_go), which gdb reads from garbage; wprof frames rootward of
    the same root are listed, not compared.
Anything else must match exactly, and so must the number of frames.

Exit: 0 every compared thread matches and every --need is met; 1 a
mismatch, or a thread that slept through with no single wprof stack; 3 a
--need not met because its threads ran during the window (a setup problem:
the caller may record again); 2 bad input.
"""
import argparse
import json
import os
import re
import subprocess
import sys

GO_ROOTS = ("runtime.mstart", "runtime.mcall", "runtime.goexit", "runtime.rt0_go")
SIGRETURN = bytes.fromhex("48c7c00f0000000f05")  # mov $0xf,%rax; syscall
FALLBACK_RE = re.compile(r"^(.+)\+0x([0-9a-f]+)$")
FRAME_RE = re.compile(r"^#(\d+)\s+(?:(0x[0-9a-f]+) in )?(.*)$")
THREAD_RE = re.compile(r"^Thread \d+ \(.*?(?:LWP|process) (\d+)")
SIG_FRAME = "<signal handler called>"


class Frame:
    def __init__(self, num, pc, name, module):
        self.num = num
        self.pc = pc  # None when gdb printed no address
        self.name = name
        self.module = module  # "from PATH" of gdb, if any
        self.inline = False
        self.path = None  # file that pc lies in, from the maps
        self.off = None  # file offset of pc

    def show(self):
        where = ""
        if self.path:
            where = " [%s+0x%x]" % (os.path.basename(self.path), self.off)
        return self.name + where


def die(msg):
    print("stackcmp: " + msg, file=sys.stderr)
    sys.exit(2)


def kv_args(items, what):
    out = {}
    for it in items or []:
        k, sep, v = it.partition("=")
        if not sep or not k.isdigit():
            die("bad %s %r (want PID=VALUE)" % (what, it))
        out[int(k)] = v
    return out


def read_switches(path):
    out = {}
    with open(path) as f:
        for line in f:
            p = line.split(None, 4)
            if len(p) < 4:
                continue
            out[int(p[1])] = (int(p[0]), int(p[2]), int(p[3]),
                              p[4].strip() if len(p) > 4 else "")
    return out


def read_maps(path):
    maps = []
    with open(path) as f:
        for line in f:
            p = line.split(None, 5)
            if len(p) < 5:
                continue
            lo, hi = (int(x, 16) for x in p[0].split("-"))
            maps.append((lo, hi, int(p[2], 16), p[5].strip() if len(p) > 5 else ""))
    return maps


def strip_args(rest):
    """'name (args)' -> 'name'; the argument list is the last (...) group."""
    rest = rest.rstrip()
    if not rest.endswith(")"):
        return rest
    depth = 0
    for i in range(len(rest) - 1, -1, -1):
        if rest[i] == ")":
            depth += 1
        elif rest[i] == "(":
            depth -= 1
            if depth == 0:
                return rest[:i].rstrip() if i > 0 else rest
    return rest


def parse_gdb(path):
    """{tid: (frames innermost first, notes)} of one `thread apply all bt`."""
    threads = {}
    cur = None
    with open(path, errors="replace") as f:
        for line in f:
            line = line.rstrip("\n")
            m = THREAD_RE.match(line)
            if m:
                cur = threads.setdefault(int(m.group(1)), ([], []))
                continue
            if cur is None:
                continue
            if line.startswith("Backtrace stopped"):
                cur[1].append(line)
                continue
            m = FRAME_RE.match(line)
            if not m:
                continue
            rest = m.group(3)
            module = None
            fm = re.search(r" from (\S+)$", rest)
            if fm:
                module = fm.group(1)
                if module.startswith("target:"):
                    module = module[len("target:"):]
                rest = rest[:fm.start()]
            else:
                am = re.search(r" at \S+:\d+$", rest)
                if am:
                    rest = rest[:am.start()]
            name = SIG_FRAME if rest.strip() == SIG_FRAME else strip_args(rest)
            pc = int(m.group(2), 16) if m.group(2) else None
            cur[0].append(Frame(int(m.group(1)), pc, name, module))
    return threads


def gdb_frames(frames, maps):
    """gdb's frames made comparable: root to leaf, plus notes."""
    notes = []
    # A frame N > 0 without an address has the inlined frame N-1 at its pc.
    for i in range(1, len(frames)):
        f, inner = frames[i], frames[i - 1]
        if f.pc is None and f.name != SIG_FRAME and inner.name != SIG_FRAME:
            inner.inline = True
            f.pc = inner.pc
    dropped = [f.name for f in frames if f.inline]
    if dropped:
        notes.append("gdb's inlined frames left out: " + ", ".join(dropped))
    out = [f for f in frames if not f.inline]
    while out and out[-1].pc == 0:
        out.pop()
        notes.append("gdb's outermost frame at pc 0 left out")
    go_root = False
    for i, f in enumerate(out):
        if norm(f.name) in GO_ROOTS:
            go_root = True
            if i + 1 < len(out):
                notes.append("gdb's frames past the Go stack root %s left out: %s" %
                             (f.name, ", ".join(g.name for g in out[i + 1:])))
            out = out[:i + 1]
            break
    for f in out:
        if f.pc is None:
            continue
        for lo, hi, pgoff, path in maps:
            if lo <= f.pc < hi:
                if path and not path.startswith("["):
                    f.path, f.off = path, f.pc - lo + pgoff
                break
    return out[::-1], notes, go_root


def norm(name):
    name = re.sub(r"@@?[A-Za-z0-9_.]+$", "", name)  # symbol version
    if name.endswith(".abi0"):
        name = name[:-len(".abi0")]
    return name


def cxx_name(full):
    """gdb's demangled 'ret ns::f<T>(args) const' -> 'ns::f<T>' as wprof prints it."""
    s = full
    while True:
        for q in (" const", " volatile", " &&", " &", " noexcept"):
            if s.endswith(q):
                s = s[:-len(q)]
                break
        else:
            break
    if not s.endswith(")"):
        return full
    name = strip_args(s)
    if name == s:
        return full
    # a return type ends at the last space outside <> and ()
    depth, start = 0, 0
    for k, c in enumerate(name):
        if c in "<(":
            depth += 1
        elif c in ">)":
            depth -= 1
        elif c == " " and depth == 0:
            start = k + 1
    return name[start:]


_symcache = {}


def symbol_addrs(path):
    """{name: set of addresses} of a file's .dynsym and .symtab."""
    if path in _symcache:
        return _symcache[path]
    out = {}
    for flags in (["-D"], []):
        try:
            r = subprocess.run(["nm", "--defined-only"] + flags + [path],
                               capture_output=True, text=True, timeout=60)
        except (OSError, subprocess.TimeoutExpired):
            continue
        for line in r.stdout.splitlines():
            p = line.split()
            # absolute symbols (the version names of .dynsym) name no code
            if len(p) != 3 or p[1] in "Aa":
                continue
            try:
                addr = int(p[0], 16)
            except ValueError:
                continue
            if addr:
                out.setdefault(norm(p[2]), set()).add(addr)
    _symcache[path] = out
    return out


def module_file(maps, base):
    for _, _, _, path in maps:
        if path and os.path.basename(path) == base:
            return path
    return None


def is_sigreturn(path, off):
    """Is the rt_sigreturn trampoline at file offset off, or off + 1?"""
    try:
        with open(path, "rb") as f:
            f.seek(off)
            data = f.read(len(SIGRETURN) + 1)
    except OSError:
        return False
    return data.startswith(SIGRETURN) or data[1:] == SIGRETURN


def same(g, w, maps):
    """Is gdb frame g the frame wprof names w? (see the module docstring)"""
    fb = FALLBACK_RE.match(w)
    if g.name == SIG_FRAME:
        if norm(w) == "__restore_rt":
            return True
        if not fb:
            return False
        path = module_file(maps, fb.group(1))
        return bool(path) and is_sigreturn(path, int(fb.group(2), 16))
    if g.name == "??":
        if fb and not g.path and g.pc is not None:  # anonymous memory: wprof names the address
            return fb.group(1) == "[anon]" and int(fb.group(2), 16) in (g.pc, g.pc - 1)
        if not fb or not g.path:
            return False
        off = int(fb.group(2), 16)
        return fb.group(1) == os.path.basename(g.path) and off in (g.off, g.off - 1)
    if fb:
        return False  # gdb has a name where wprof has none
    gn, wn = norm(g.name), norm(w)
    if gn == wn or cxx_name(gn) == wn:
        return True
    if g.path:
        syms = symbol_addrs(g.path)
        if syms.get(gn, set()) & syms.get(wn, set()):
            return True
    return False


def align(gs, ws, maps):
    """Longest common subsequence of equal frames: rows (g or None, w or None)."""
    n, m = len(gs), len(ws)
    eq = [[same(gs[i], ws[j], maps) for j in range(m)] for i in range(n)]
    L = [[0] * (m + 1) for _ in range(n + 1)]
    for i in range(n - 1, -1, -1):
        for j in range(m - 1, -1, -1):
            L[i][j] = L[i + 1][j + 1] + 1 if eq[i][j] else max(L[i + 1][j], L[i][j + 1])
    rows, i, j = [], 0, 0
    while i < n or j < m:
        if i < n and j < m and eq[i][j] and L[i][j] == L[i + 1][j + 1] + 1:
            rows.append((gs[i], ws[j]))
            i, j = i + 1, j + 1
        elif j < m and (i == n or L[i][j + 1] >= L[i + 1][j]):
            rows.append((None, ws[j]))
            j += 1
        else:
            rows.append((gs[i], None))
            i += 1
    return rows


def user_frames(frames):
    """wprof's user frames (root to leaf): those before the first _[k] one."""
    user = []
    for k, f in enumerate(frames):
        if f.endswith("_[k]"):
            if any(not x.endswith("_[k]") for x in frames[k:]):
                return None  # a user frame after a kernel one: not a stack
            break
        user.append(f)
    return [f for f in user if f != "[no stack]"]


def print_table(rows, width=64):
    print("#     %-*s    %s" % (width, "gdb (root -> leaf)", "wprof (root -> leaf)"))
    for n, (g, w) in enumerate(rows):
        mark = "=" if g and w else "-" if g else "+"
        gs = g.show() if g else ""
        if len(gs) > width:
            gs = gs[:width - 3] + "..."
        print("#  %2d %-*s %s  %s" % (n, width, gs, mark, w or ""))


def main():
    ap = argparse.ArgumentParser(description="compare wprof's stacks with gdb's")
    ap.add_argument("--json", required=True)
    ap.add_argument("--before", required=True)
    ap.add_argument("--after", required=True)
    ap.add_argument("--gdb", action="append", default=[])
    ap.add_argument("--maps", action="append", default=[])
    ap.add_argument("--need", action="append", default=[])
    ap.add_argument("--label", action="append", default=[])
    a = ap.parse_args()

    try:
        with open(a.json) as f:
            j = json.load(f)
    except (OSError, ValueError) as e:
        die("%s: %s" % (a.json, e))
    gdb = {pid: parse_gdb(p) for pid, p in kv_args(a.gdb, "--gdb").items()}
    maps = {pid: read_maps(p) for pid, p in kv_args(a.maps, "--maps").items()}
    labels = kv_args(a.label, "--label")
    before, after = read_switches(a.before), read_switches(a.after)

    acct = {}
    for p in j["processes"]:
        for t in p["threads"]:
            acct[t["tid"]] = t
    stacks = {}
    for s in j["stacks"]:
        if s["tag"].startswith("off-cpu"):
            stacks.setdefault(s["tid"], []).append(s)

    compared, matched, failed = [], [], []
    frames_eq = frames_all = 0
    for tid in sorted(before):
        pid, vol0, nvol0, comm = before[tid]
        if pid not in gdb:
            continue
        who = "pid %d tid %d (%s%s)" % (pid, tid, comm,
                                         ", " + labels[pid] if pid in labels else "")
        if tid not in after:
            print("# %s: exited during the recording, not compared" % who)
            continue
        _, vol1, nvol1, _ = after[tid]
        if (vol0, nvol0) != (vol1, nvol1):
            print("# %s: ran during the window (switches %d+%d -> %d+%d), not compared" %
                  (who, vol0, nvol0, vol1, nvol1))
            continue
        compared.append((pid, tid, comm))
        t = acct.get(tid)
        if not t:
            print("not ok: %s slept through the window but wprof has no thread entry" % who)
            failed.append(tid)
            continue
        by_user = {}
        for s in stacks.get(tid, []):
            u = user_frames(s["frames"])
            if u is None:
                print("not ok: %s: a user frame after a kernel one: %s" %
                      (who, ";".join(s["frames"])))
                failed.append(tid)
                break
            by_user[tuple(u)] = by_user.get(tuple(u), 0) + s["total_us"]
        else:
            if not by_user:
                print("not ok: %s slept through the window but wprof has no off-CPU stack"
                      " for it (wall %d us, on-CPU %d us)" % (who, t["wall_us"], t["on_cpu_us"]))
                failed.append(tid)
                continue
        if tid in failed:
            continue
        wu, wus = max(by_user.items(), key=lambda kv: kv[1])
        share = 100.0 * wus / t["wall_us"] if t["wall_us"] else 0
        if share < 99:
            print("not ok: %s slept through the window, but its heaviest wprof stack has"
                  " %.1f%% of its wall time (%d of %d us), not ~100%%:" %
                  (who, share, wus, t["wall_us"]))
            for u, us in sorted(by_user.items(), key=lambda kv: -kv[1])[:4]:
                print("#   %d us: %s" % (us, ";".join(u)))
            failed.append(tid)
            continue
        if tid not in gdb[pid]:
            print("not ok: %s: gdb has no backtrace of it" % who)
            failed.append(tid)
            continue
        raw, stopped = gdb[pid][tid]
        gs, notes, go_root = gdb_frames(raw, maps.get(pid, []))
        if go_root:
            stopped = []  # gdb's complaints are about the garbage past the root
        ws = list(wu)
        roots = [k for k, w in enumerate(ws) if norm(w) in GO_ROOTS]
        gr = norm(gs[0].name) if gs else ""
        if gr in GO_ROOTS and roots:
            k = next((k for k in roots if norm(ws[k]) == gr), roots[0])
            if k:
                notes.append("wprof's frames past the Go stack root left out: " +
                             ";".join(ws[:k]))
            ws = ws[k:]
        rows = align(gs, ws, maps.get(pid, []))
        neq = sum(1 for g, w in rows if g and w)
        frames_eq += neq
        frames_all += max(len(gs), len(ws))
        for n in notes + stopped:
            print("# %s: %s" % (who, n))
        if neq == len(gs) == len(ws) and not stopped:
            print("ok: %s: %d frames match gdb (%.1f%% of its wall time in this stack)" %
                  (who, neq, share))
            text = ";".join(ws)
            if len(text) > 400:
                text = text[:150] + " ... " + text[-245:]
            print("#   %s" % text)
            matched.append(tid)
            continue
        why = "gdb's backtrace is incomplete" if stopped else \
            "%d of gdb's %d frames in wprof's %d" % (neq, len(gs), len(ws))
        print("not ok: %s: stacks differ: %s" % (who, why))
        print_table(rows)
        failed.append(tid)

    need_fail = False
    cset = {tid for _, tid, _ in compared}
    for spec in a.need:
        kind, _, val = spec.partition("=")
        if kind == "pid":
            tids = [t for t, v in before.items() if v[0] == int(val)]
            miss = [t for t in tids if t not in cset]
            good = bool(tids) and not miss
            what = "every thread of pid %s slept through the window (%s)" % (
                val, "none seen" if not tids else "%d of %d" % (len(tids) - len(miss), len(tids)))
        elif kind == "tid":
            good = int(val) in cset
            what = "tid %s slept through the window" % val
        elif kind == "comm":
            ere, _, n = val.rpartition(":")
            hit = [t for _, t, c in compared if re.fullmatch(ere, c)]
            good = len(hit) >= int(n)
            what = "%d threads named %s slept through the window (want >= %s)" % (
                len(hit), ere, n)
        else:
            die("bad --need %r" % spec)
        print("%s: %s" % ("ok" if good else "not ok", what))
        need_fail |= not good

    print("# compared %d threads that slept through the window: %d match gdb, %d differ;"
          " %d of %d frames equal" % (len(compared), len(matched), len(failed),
                                      frames_eq, frames_all))
    if failed:
        return 1
    if need_fail:
        return 3
    return 0


if __name__ == "__main__":
    sys.exit(main())
