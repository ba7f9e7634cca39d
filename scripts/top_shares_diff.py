#!/usr/bin/env python3
"""top_shares_diff.py - the top-10 objects of profile B and their shares in
profile A (docs/BENCHMARKS.md: a default run against a 1 kHz run).

An object is named by its type and the first DEPTH frames of its allocation
path (contexts that differ only deeper, e.g. the JVM's metaspace commits
reached by different callers, count as one object): shares of contexts
with the same name are added.

Usage: scripts/top_shares_diff.py [--objscope PATH] [--depth N] A.data B.data
Prints B's share, A's share and the difference per object, then the
largest absolute difference and both runs' sample counts.
"""
import argparse
import json
import subprocess
import sys


def shares(objscope, path, depth):
    out = subprocess.run([objscope, "report", "--format", "json", path],
                         capture_output=True, text=True, check=True).stdout
    d = json.loads(out)
    acc = {}
    for o in d["objects"]:
        frames = (o.get("alloc_stack") or [])[:depth]
        key = (o.get("type") or "", " < ".join(f.get("text", "?") for f in frames))
        acc[key] = acc.get(key, 0.0) + (o.get("share") or 0.0)
    return acc, d["meta"].get("samples_total")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--objscope", default="build/objscope")
    ap.add_argument("--depth", type=int, default=4)
    ap.add_argument("a")
    ap.add_argument("b")
    args = ap.parse_args()
    a, na = shares(args.objscope, args.a, args.depth)
    b, nb = shares(args.objscope, args.b, args.depth)
    worst = 0.0
    for k in sorted(b, key=lambda k: -b[k])[:10]:
        d = a.get(k, 0.0) - b[k]
        worst = max(worst, abs(d))
        print("%6.3f %6.3f %+.3f %s | %s" % (b[k], a.get(k, 0.0), d, k[0], k[1][:100]))
    print("samples: A %s, B %s; largest |difference| %.3f" % (na, nb, worst))
    return 0


if __name__ == "__main__":
    sys.exit(main())
