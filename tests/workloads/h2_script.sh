#!/bin/sh
# h2_script.sh - writes the H2 workload: an SQL script for
# org.h2.tools.RunScript (Debian libh2-java, /usr/share/java/h2.jar) that
# fills two tables (ROWS orders, ROWS/10 customers), indexes them and runs
# joins and aggregates whose results are printed (-showResults).
#
# Usage: tests/workloads/h2_script.sh FILE [ROWS]     (ROWS default 200000)
# Run it with an in-memory database:
#   java -cp /usr/share/java/h2.jar org.h2.tools.RunScript \
#        -url jdbc:h2:mem:wl -script FILE -showResults
set -eu

[ $# -ge 1 ] || { sed -n '2,10p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
FILE=$1
ROWS=${2:-200000}
CUST=$((ROWS / 10))

cat >"$FILE" <<SQL
CREATE TABLE customer(id INT PRIMARY KEY, name VARCHAR(40), region INT);
INSERT INTO customer SELECT X, 'customer-' || X, MOD(X * 7, 50) FROM SYSTEM_RANGE(1, $CUST);
CREATE TABLE orders(id INT PRIMARY KEY, cust INT, amount DECIMAL(12, 2), note VARCHAR(64));
INSERT INTO orders SELECT X, MOD(X * 7919, $CUST) + 1, MOD(X * 31, 100000) / 100.0,
    'order-' || X || '-' || MOD(X * 13, 997) FROM SYSTEM_RANGE(1, $ROWS);
CREATE INDEX orders_cust ON orders(cust);
SELECT COUNT(*), SUM(amount), MAX(note) FROM orders;
SELECT c.region, COUNT(*), SUM(o.amount) FROM orders o JOIN customer c ON o.cust = c.id
    GROUP BY c.region ORDER BY c.region;
SELECT c.name, SUM(o.amount) AS total FROM orders o JOIN customer c ON o.cust = c.id
    GROUP BY c.name ORDER BY total DESC, c.name LIMIT 5;
SELECT COUNT(DISTINCT note), COUNT(DISTINCT cust) FROM orders;
SELECT o.cust, COUNT(*) FROM orders o WHERE o.amount > 900 GROUP BY o.cust
    HAVING COUNT(*) > 3 ORDER BY o.cust LIMIT 10;
SQL
