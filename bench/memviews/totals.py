#!/usr/bin/env python3
"""totals.py - exact allocation totals of a heaptrack or a heapscope trace.

  totals.py heaptrack FILE [--without MODULE]
  totals.py heapscope HEAPSCOPE_BIN TRACE [--without-inner MODULE]

Prints one JSON object: allocations, frees (of blocks seen allocated),
leaked_bytes, leaked_blocks (live at the end) and peak_bytes (the highest
sum of live blocks); for heaptrack also the same numbers of the allocations
made inside _dl_init (shared libraries' constructors, before main) as
"startup", and of all the others as "after_startup".

heaptrack: FILE is its zstd-compressed data file as heaptrack writes it
(heaptrack_interpret's text: "a SIZE TRACE" defines an allocation kind,
"+ KIND" an allocation, "- KIND" the free of a block it saw allocated,
"s LEN STRING" strings, "i IP MODULE [FUNCTION FILE LINE]..." code
addresses, "t IP PARENT" stack nodes; numbers in hex, indices of i and t
from 1, of a from 0). --without MODULE leaves out allocations with a frame
in a module whose path contains MODULE (and their frees).

heapscope: the events of `heapscope dump --events`, in time order.
--without-inner MODULE leaves out allocations with a frame in MODULE
other than the innermost one (the allocations another preloaded tracer
makes for itself, when its allocation functions come first).
"""
import json
import subprocess
import sys


class Totals:
    def __init__(self):
        self.allocations = self.frees = self.live = self.peak = 0
        self.blocks = 0

    def alloc(self, size):
        self.allocations += 1
        self.blocks += 1
        self.live += size
        if self.live > self.peak:
            self.peak = self.live

    def free(self, size):
        self.frees += 1
        self.blocks -= 1
        self.live -= size

    def json(self):
        return {"allocations": self.allocations, "frees": self.frees,
                "leaked_bytes": self.live, "leaked_blocks": self.blocks,
                "peak_bytes": self.peak}


def heaptrack(path, without=None):
    strings = [None]            # 1-based
    ips = [None]                # 1-based: (module, [functions])
    traces = [(0, 0)]           # 1-based: (ip, parent); 0 is the root
    kinds = []                  # 0-based: (size, trace)
    flags = {}                  # trace -> (excluded, startup)
    all_, startup, rest = Totals(), Totals(), Totals()
    sized = False

    def trace_flags(t):
        if t in flags:
            return flags[t]
        path_ = []
        while t and t not in flags:
            path_.append(t)
            t = traces[t][1]
        ex, st = flags.get(t, (False, False))
        for u in reversed(path_):
            mod, fns = ips[traces[u][0]]
            ex = ex or (without is not None and without in strings[mod])
            st = st or "_dl_init" in (strings[f] for f in fns)
            flags[u] = (ex, st)
        return flags[path_[0]] if path_ else (ex, st)

    p = subprocess.Popen(["zstd", "-dcq", path], stdout=subprocess.PIPE)
    for raw in p.stdout:
        c = raw[:1]
        if c == b"+" or c == b"-":
            size, t = kinds[int(raw[2:], 16)]
            ex, st = trace_flags(t)
            if ex:
                continue
            if c == b"+":
                all_.alloc(size)
                (startup if st else rest).alloc(size)
            else:
                all_.free(size)
                (startup if st else rest).free(size)
            continue
        line = raw.decode("utf-8", "replace").rstrip("\n")
        f = line.split(" ")
        if c == b"a":
            kinds.append((int(f[1], 16), int(f[2], 16)))
        elif c == b"t":
            traces.append((int(f[1], 16), int(f[2], 16)))
        elif c == b"i":
            nums = [int(x, 16) for x in f[2:]]
            ips.append((nums[0], nums[1::3]))
        elif c == b"s":
            strings.append(line[2:].split(" ", 1)[1] if sized else line[2:])
        elif c == b"v":
            sized = len(f) > 2 and int(f[2], 16) >= 3
    if p.wait():
        sys.exit("totals.py: zstd failed on %s" % path)
    out = all_.json()
    out["startup"] = startup.json()
    out["after_startup"] = rest.json()
    return out


def heapscope(binary, trace, without_inner=None):
    t = Totals()
    live, skipped = {}, set()
    p = subprocess.Popen([binary, "dump", "--events", trace], stdout=subprocess.PIPE,
                         text=True)
    for line in p.stdout:
        f = line.rstrip("\n").split(" ", 6)
        if len(f) < 7 or f[2] not in ("alloc", "free"):
            continue
        addr = f[4]
        if f[2] == "alloc":
            frames = f[6].split(";")
            if without_inner and any(without_inner in fr.rsplit("!", 1)[0]
                                     for fr in frames[:-1]):
                skipped.add(addr)
                continue
            skipped.discard(addr)
            if addr in live:            # its free was missed
                t.free(live.pop(addr))
            live[addr] = int(f[5])
            t.alloc(live[addr])
        elif addr in live:
            t.free(live.pop(addr))
        else:
            skipped.discard(addr)
    if p.wait():
        sys.exit("totals.py: heapscope dump failed on %s" % trace)
    return t.json()


def main(argv):
    if len(argv) >= 2 and argv[0] == "heaptrack":
        without = argv[3] if len(argv) == 4 and argv[2] == "--without" else None
        print(json.dumps(heaptrack(argv[1], without)))
    elif len(argv) >= 3 and argv[0] == "heapscope":
        inner = argv[4] if len(argv) == 5 and argv[3] == "--without-inner" else None
        print(json.dumps(heapscope(argv[1], argv[2], inner)))
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main(sys.argv[1:])
