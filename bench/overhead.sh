#!/bin/sh
# overhead.sh - runtime and memory overhead of `objscope record` on native programs.
#
# For each workload it runs, ALTERNATING, N times: the program alone, the
# program under `objscope record` (default settings), and the program under
# `perf record -F FREQ -g` (the reference; FREQ = objscope's default rate).
# It prints the medians and the median per-round ratios (profiled / alone) of
#   wall  - elapsed time of the whole command (objscope/perf included),
#   RSS   - peak RSS of the largest process of the run (collector or target),
#   tRSS  - peak RSS of the target program itself.
# Each run's stdout is compared with the unprofiled one; a difference fails.
#
# Workloads: build/fixtures/three_sites (planted answer), and sqlite3 (Debian
# package) building, indexing and querying an in-memory table.
#
# Usage: bench/overhead.sh [--quick] [--runs N]
#   --quick   one run each, short workloads (a smoke test, not a measurement)
# Environment: OBJSCOPE_FREQ  sampling rate for both tools (default: objscope's
#              default as printed by `objscope record --help`, else 1000)
# Exit status: 0 when every run succeeded with unchanged output, 1 otherwise.
set -eu

ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
OBJSCOPE=$ROOT/build/objscope
TIME=/usr/bin/time
RUNS=5
QUICK=0

while [ $# -gt 0 ]; do
	case $1 in
	--quick) QUICK=1; RUNS=1 ;;
	--runs) RUNS=$2; shift ;;
	-h|--help) sed -n '2,20p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) echo "overhead.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
	esac
	shift
done

BENCH_NAME=overhead.sh
. "$ROOT/bench/lib.sh"
die() { bench_die "$@"; }
[ -x "$OBJSCOPE" ] || die "$OBJSCOPE not found - run 'make' first"
[ -x build/fixtures/three_sites ] || die "build/fixtures/three_sites not found - run 'make fixtures'"
[ -x "$TIME" ] || die "$TIME not found - install the Debian package 'time'"
command -v sqlite3 >/dev/null 2>&1 || die "sqlite3 not found - install the Debian package 'sqlite3'"

if [ -n "${OBJSCOPE_FREQ:-}" ]; then
	FREQ=$OBJSCOPE_FREQ
	OBJSCOPE_OPTS="-F $FREQ"
else
	FREQ=$(bench_default_freq "$OBJSCOPE")
	OBJSCOPE_OPTS=""
fi
HAVE_PERF=$(bench_have_perf "$FREQ")

TMP=$(mktemp -d "${TMPDIR:-/tmp}/objscope-bench-XXXXXX")
trap 'rm -rf "$TMP"' EXIT INT TERM

if [ "$QUICK" -eq 1 ]; then
	TS_ARG=0.1
	SQL_ROWS=20000
else
	TS_ARG=1
	SQL_ROWS=800000
fi
cat >"$TMP/workload.sql" <<EOF
PRAGMA cache_size = -65536;
CREATE TABLE t(id INTEGER PRIMARY KEY, k INTEGER, v TEXT);
WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < $SQL_ROWS)
INSERT INTO t SELECT x, (x * 7919) % 100003, printf('row-%08d', x * 31) FROM c;
CREATE INDEX t_k ON t(k);
SELECT count(*), sum(k), max(v) FROM t;
SELECT k % 100 AS g, count(*), sum(length(v)) FROM t GROUP BY g ORDER BY g LIMIT 3;
SELECT count(*) FROM t a JOIN t b ON a.k = b.id WHERE b.k < 5000;
EOF

FAILED=0

# run_one TOOL WORKLOAD ROUND INPUT CMD... : one timed run; appends
# "wall rss target_rss" to $TMP/WORKLOAD.TOOL and checks the output.
run_one() {
	tool=$1 wl=$2 round=$3 input=$4
	shift 4
	out=$TMP/$wl.$tool.$round.out
	rc=0
	case $tool in
	alone)
		"$TIME" -o "$TMP/outer" -f '%e %M' "$@" <"$input" >"$out" 2>"$TMP/err" || rc=$?
		cp "$TMP/outer" "$TMP/inner" ;;
	objscope)
		# shellcheck disable=SC2086 # OBJSCOPE_OPTS is a word list on purpose
		"$TIME" -o "$TMP/outer" -f '%e %M' "$OBJSCOPE" record $OBJSCOPE_OPTS \
			-o "$TMP/profile.data" -- "$TIME" -o "$TMP/inner" -f '%e %M' "$@" \
			<"$input" >"$out" 2>"$TMP/err" || rc=$? ;;
	perf)
		"$TIME" -o "$TMP/outer" -f '%e %M' perf record -q -F "$FREQ" -g \
			-o "$TMP/perf.data" -- "$TIME" -o "$TMP/inner" -f '%e %M' "$@" \
			<"$input" >"$out" 2>"$TMP/err" || rc=$? ;;
	esac
	if [ "$rc" -ne 0 ]; then
		echo "overhead.sh: $wl under $tool exited $rc: $(tail -n 1 "$TMP/err")" >&2
		FAILED=1
		return 0
	fi
	if [ "$tool" != alone ] && ! cmp -s "$out" "$TMP/$wl.alone.$round.out"; then
		echo "overhead.sh: $wl: output under $tool differs from the unprofiled run" >&2
		FAILED=1
	fi
	# time(1) may prefix a "Command exited..." line; the figures are last.
	printf '%s %s\n' "$(tail -n 1 "$TMP/outer")" "$(tail -n 1 "$TMP/inner" | cut -d' ' -f2)" \
		>>"$TMP/$wl.$tool"
	rm -f "$TMP/profile.data" "$TMP/perf.data"
}

# bench WORKLOAD INPUT CMD... : RUNS alternating rounds of all tools.
bench() {
	wl=$1 input=$2
	shift 2
	round=1
	while [ "$round" -le "$RUNS" ]; do
		run_one alone "$wl" "$round" "$input" "$@"
		run_one objscope "$wl" "$round" "$input" "$@"
		[ "$HAVE_PERF" -eq 0 ] || run_one perf "$wl" "$round" "$input" "$@"
		round=$((round + 1))
	done
}

report() {
	wl=$1
	for tool in alone objscope perf; do
		f=$TMP/$wl.$tool
		[ -s "$f" ] || continue
		wall=$(median "$f" 1)
		rss=$(median "$f" 2)
		trss=$(median "$f" 3)
		if [ "$tool" = alone ]; then
			rw=1.00 rr=1.00 rt=1.00 sw=-
		else
			rw=$(ratio_median "$f" "$TMP/$wl.alone" 1 3)
			sw=$(ratio_spread)
			rr=$(ratio_median "$f" "$TMP/$wl.alone" 2 3)
			rt=$(ratio_median "$f" "$TMP/$wl.alone" 3 3)
		fi
		printf '%-12s %-9s %8.2f %8.1f %8.1f %7.2fx %7.2fx %7.2fx  %s\n' "$wl" "$tool" \
			"$wall" "$(echo "$rss" | awk '{ print $1 / 1024 }')" \
			"$(echo "$trss" | awk '{ print $1 / 1024 }')" "$rw" "$rr" "$rt" "$sw"
	done
}

bench three_sites /dev/null build/fixtures/three_sites "$TS_ARG"
bench sqlite3 "$TMP/workload.sql" sqlite3 :memory:

echo "objscope overhead: $RUNS alternating round(s), sampling rate $FREQ Hz$([ "$HAVE_PERF" -eq 1 ] || echo ', perf unavailable')"
echo "(medians; ratios are medians of per-round profiled/alone ratios; wall_mid: the middle half"
echo " of the per-round wall ratios)"
printf '%-12s %-9s %8s %8s %8s %8s %8s %8s  %s\n' workload tool wall_s RSS_MB tRSS_MB wall RSS tRSS wall_mid
report three_sites
report sqlite3
exit "$FAILED"
