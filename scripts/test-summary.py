#!/usr/bin/env python3
"""test-summary.py - what `make test` ran, passed, failed and skipped.

Reads the TAP files the Criterion binaries wrote (--tap=FILE, one per step
of `make test`) and prints, per step and suite, the counts and seconds, then
every skipped test with its reason and every failed one. Exit status 1 when
a test failed or crashed, or a file is missing or holds no test.
"""
import re
import sys
from collections import OrderedDict

LINE = re.compile(r'^(not ok|ok) - (\S+?)::(\S+)(.*)$')
SKIP = re.compile(r'#\s*SKIP\s*(.*)$')
JAVA_SUITES = {'e2e_java', 'e2e_attach', 'e2e_lifetimes', 'e2e_workloads', 'e2e_zero',
               'e2e_replicas', 'e2e_reuse', 'e2e_generic'}
SECS = re.compile(r'\((\d+(?:\.\d+)?)s\)')


def main(paths):
    status = 0
    skips, fails = [], []
    jdk = {}
    total = OrderedDict(ran=0, passed=0, failed=0, skipped=0, seconds=0.0)
    if not paths:
        print("test-summary: no TAP files", file=sys.stderr)
        return 1
    for path in paths:
        step = re.sub(r'\.tap$', '', path.rsplit('/', 1)[-1])
        suites = OrderedDict()
        try:
            with open(path, encoding='utf-8', errors='replace') as f:
                lines = f.read().splitlines()
        except OSError as e:
            print(f"test-summary: {path}: {e.strerror}", file=sys.stderr)
            status = 1
            continue
        for line in lines:
            m = LINE.match(line)
            if not m:
                continue
            ok, suite, name, rest = m.groups()
            jm = re.search(r'_jdk(\d+)$', name)
            jkey = None
            if jm:
                jkey = f"JDK {jm.group(1)}"
            elif suite in JAVA_SUITES:
                jkey = "default java"
            skip = SKIP.search(rest)
            skip = skip.group(1) if skip and ok == 'ok' else None
            secs = SECS.search(rest)
            secs = secs.group(1) if secs else None
            s = suites.setdefault(suite, OrderedDict(ran=0, passed=0, failed=0, skipped=0,
                                                     seconds=0.0))
            if skip is not None and skip.strip() == 'test was skipped':
                continue  # not selected by this step's --filter: another step runs it
            if jkey:
                j = jdk.setdefault(jkey, dict(ran=0, passed=0, failed=0, skipped=0))
                if skip is not None:
                    j['skipped'] += 1
                else:
                    j['ran'] += 1
                    j['passed' if ok == 'ok' else 'failed'] += 1
            if skip is not None:
                s['skipped'] += 1
                skips.append((f"{step}: {suite}::{name}", skip.strip()))
                continue
            s['ran'] += 1
            s['seconds'] += float(secs or 0)
            if ok == 'ok':
                s['passed'] += 1
            else:
                s['failed'] += 1
                fails.append(f"{step}: {suite}::{name}")
        if not suites:
            print(f"test-summary: {path}: no test results (did the step run?)",
                  file=sys.stderr)
            status = 1
        print(f"== {step}")
        for suite, s in suites.items():
            if not (s['ran'] or s['skipped']):
                continue
            print(f"   {suite:<24} ran {s['ran']:>3}  passed {s['passed']:>3}  "
                  f"failed {s['failed']:>2}  skipped {s['skipped']:>2}  {s['seconds']:>7.1f} s")
            for k in total:
                total[k] += s[k]
    print(f"== all: ran {total['ran']}, passed {total['passed']}, failed {total['failed']}, "
          f"skipped {total['skipped']}, {total['seconds']:.0f} s in tests")
    if jdk:
        print("== Java tests by JDK (tests named *_jdkN run on JDK N, the others on the "
              "default java):")
        for k in sorted(jdk):
            v = jdk[k]
            print(f"   {k:<12} ran {v['ran']:>3}  passed {v['passed']:>3}  failed "
                  f"{v['failed']:>2}  skipped {v['skipped']:>2}")
    if skips:
        print("== skipped, and why:")
        by_reason = OrderedDict()
        for where, reason in skips:
            by_reason.setdefault(reason, []).append(where)
        for reason, tests in by_reason.items():
            print(f"   {len(tests)} test(s): {reason}")
            for t in tests:
                print("      " + t)
    if fails:
        print("== FAILED:")
        for s in fails:
            print("   " + s)
        status = 1
    return status


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
