#!/bin/sh
# sqlite_script.sh - writes the native small-blocks workload
# (docs/NATIVE.md): an SQL script for the sqlite3 shell (Debian sqlite3)
# that fills an in-memory table of ROWS rows, indexes it and runs two
# queries: an aggregate over the table and a lookup join through the index.
# sqlite allocates its pages, rows and index nodes as blocks below
# objscope's --min-size.
#
# Usage: tests/workloads/sqlite_script.sh FILE [ROWS]   (ROWS default 400000)
# Run it with an in-memory database:  sqlite3 :memory: < FILE
set -eu

[ $# -ge 1 ] || { sed -n '2,10p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
FILE=$1
ROWS=${2:-400000}

cat >"$FILE" <<SQL
PRAGMA cache_size = -200000;
CREATE TABLE t(id INTEGER PRIMARY KEY, k INTEGER, v TEXT);
WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n WHERE x < $ROWS)
INSERT INTO t SELECT x, (x * 7919) % 100003, 'value-' || x || '-' || ((x * 13) % 997) FROM n;
CREATE INDEX t_k ON t(k);
SELECT COUNT(*), SUM(k), MAX(v) FROM t;
SELECT COUNT(*), SUM(a.id) FROM t a JOIN t b ON b.k = a.id % 100003 WHERE a.id % 7 = 0;
SQL
