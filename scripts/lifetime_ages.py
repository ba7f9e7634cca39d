#!/usr/bin/env python3
"""Compares the survivor ages objscope reports (--lifetimes) with HotSpot's
own tenuring distribution for the same run (docs/LIFETIMES.md).

usage: lifetime_ages.py [--objscope BIN] [--min-size N] [--exact] -- java [JVM options] MAIN [args]

Runs `objscope record --lifetimes` (hybrid objects, the default: tracked
objects weighted; --exact: every object) on the command with
-Xlog:gc+age=trace written to a file, then prints, per age, the bytes HotSpot
counted in its age tables (summed over its collections) next to the bytes
objscope counted for the objects it tracked (report `lifetime`
.survivor_bytes_by_age). HotSpot counts every object; objscope the objects of
--min-size bytes or more: HotSpot's figure is the larger one, by the bytes of
smaller survivors. Exit status 0 when it ran."""
import json
import os
import re
import subprocess
import sys
import tempfile

AGE = re.compile(r"GC\((\d+)\).*- age\s+(\d+):\s+(\d+) bytes")


def main(argv):
    objscope = "build/objscope"
    min_size = None
    mode = "hybrid"
    while argv and argv[0] != "--":
        if argv[0] == "--objscope":
            objscope = argv[1]
            argv = argv[2:]
        elif argv[0] == "--exact":
            mode = "exact"
            argv = argv[1:]
        elif argv[0] == "--min-size":
            min_size = argv[1]
            argv = argv[2:]
        else:
            sys.exit(__doc__)
    if not argv or len(argv) < 3:
        sys.exit(__doc__)
    cmd = argv[1:]
    with tempfile.TemporaryDirectory() as d:
        log = os.path.join(d, "age.log")
        data = os.path.join(d, "lt.data")
        java = [cmd[0], "-Xlog:gc+age=trace:file=" + log] + cmd[1:]
        rec = [objscope, "record", "-q", "--lifetimes", "--java-objects", mode,
               "--ring-kb", "8192", "-o", data]
        if min_size:
            rec += ["--min-size", min_size]
        subprocess.run(rec + ["--"] + java, check=True, stdout=subprocess.DEVNULL)
        rep = json.loads(subprocess.run([objscope, "report", "--format", "json", data],
                                        check=True, capture_output=True).stdout)
        hs = {}
        gcs = set()
        with open(log) as f:
            for line in f:
                m = AGE.search(line)
                if m:
                    gcs.add(int(m.group(1)))
                    hs[int(m.group(2))] = hs.get(int(m.group(2)), 0) + int(m.group(3))
    lt = rep["lifetime"]
    ours = lt["survivor_bytes_by_age"] or []
    print("collections: HotSpot age tables %d, objscope %d (%d could not age objects); "
          "objscope events dropped: %d" % (len(gcs), lt["collections"],
                                           lt["collections_unaged"],
                                           rep["meta"]["dropped_events"]))
    print("%4s %14s %14s %8s" % ("age", "HotSpot bytes", "objscope bytes", "ratio"))
    tot_h = tot_o = 0
    for a in range(1, max([len(ours)] + [k + 1 for k in hs])):
        h = hs.get(a, 0)
        o = ours[a] if a < len(ours) else 0
        tot_h += h
        tot_o += o
        if h or o:
            print("%4d %14d %14.0f %8s" % (a, h, o, "%.3f" % (o / h) if h else "-"))
    print("%4s %14d %14.0f %8s" % ("all", tot_h, tot_o, "%.3f" % (tot_o / tot_h) if tot_h else "-"))


if __name__ == "__main__":
    main(sys.argv[1:])
