#!/usr/bin/env python3
"""Validates `objscope report --format json` output against docs/report.schema.json.

usage: validate_report.py SCHEMA REPORT.json [REPORT.json...]

Checks, for each report:
- the schema itself is a valid JSON Schema (draft 2020-12);
- the report validates against it made strict: every object the schema
  describes may hold only the members it lists, so a field fmt_json.c writes
  that the schema does not document fails here (the published schema stays
  open to fields added later);
- what a schema cannot say: a metric is null exactly when meta.metrics_measured
  does not name it; a merge scaled to a common period has meta.period equal to
  the smallest period merged.
Exit status 0 when every report passes, 1 otherwise (one line per problem on
stderr), 2 when jsonschema is missing or an argument cannot be read.
Needs python3-jsonschema (scripts/install-deps.sh).
"""
import copy
import json
import sys

try:
    import jsonschema
except ImportError:
    print("validate_report.py: python3 module jsonschema missing: install python3-jsonschema"
          " (make deps)", file=sys.stderr)
    sys.exit(2)

METRICS = ("latency_cycles", "l1_miss", "remote")


def strict(node):
    """A copy of the schema where every object schema with properties is closed."""
    if isinstance(node, dict):
        out = {k: strict(v) for k, v in node.items()}
        if "properties" in node and "additionalProperties" not in node:
            out["additionalProperties"] = False
        return out
    if isinstance(node, list):
        return [strict(v) for v in node]
    return node


def semantic(doc):
    problems = []
    meta = doc["meta"]
    measured = set(meta["metrics_measured"])

    def metrics(where, m):
        for k in METRICS:
            if (m[k] is None) == (k in measured):
                problems.append("%s.metrics.%s is %s but meta.metrics_measured is %s"
                                % (where, k, json.dumps(m[k]), sorted(measured)))

    for i, o in enumerate(doc["objects"]):
        metrics("objects[%d]" % i, o["metrics"])
        for j, a in enumerate(o["accesses"]):
            metrics("objects[%d].accesses[%d]" % (i, j), a["metrics"])
    merge = meta["merge"]
    if merge and merge["normalisation"] == "scaled" and meta["period"] != merge["period_min"]:
        problems.append("merge scaled, but meta.period %d is not the smallest period %d"
                        % (meta["period"], merge["period_min"]))
    return problems


def main(argv):
    if len(argv) < 3:
        print(__doc__.splitlines()[2], file=sys.stderr)
        return 2
    try:
        with open(argv[1]) as f:
            schema = json.load(f)
    except (OSError, ValueError) as e:
        print("validate_report.py: %s: %s" % (argv[1], e), file=sys.stderr)
        return 2
    cls = jsonschema.Draft202012Validator
    cls.check_schema(schema)
    validator = cls(strict(copy.deepcopy(schema)))
    failed = False
    for path in argv[2:]:
        try:
            with open(path) as f:
                doc = json.load(f)
        except (OSError, ValueError) as e:
            print("validate_report.py: %s: %s" % (path, e), file=sys.stderr)
            return 2
        errors = sorted(validator.iter_errors(doc), key=lambda e: list(e.absolute_path))
        for e in errors[:20]:
            where = "/".join(str(p) for p in e.absolute_path) or "(root)"
            print("%s: %s: %s" % (path, where, e.message), file=sys.stderr)
        problems = [] if errors else semantic(doc)
        for p in problems:
            print("%s: %s" % (path, p), file=sys.stderr)
        failed |= bool(errors or problems)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
