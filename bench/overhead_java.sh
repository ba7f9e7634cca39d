#!/bin/sh
# overhead_java.sh - runtime and memory overhead of `objscope record` on real
# Java programs (docs/WORKLOADS.md), the Java counterpart of overhead.sh.
#
# For each workload it runs, ALTERNATING, N rounds of: the program alone,
# under `objscope record` at the default rate FREQ and at 10 x FREQ (-F), and
# under `perf record -F FREQ -g` and `-F 10xFREQ -g` (the reference). It
# prints the medians and the median per-round ratios (profiled / alone) of
#   wall  - elapsed time of the whole command (objscope/perf included),
#   cpu   - user+sys CPU seconds of the whole command (profiler included),
#   tRSS  - peak RSS of the target JVM itself (/usr/bin/time inside).
# Each run's stdout and stderr are compared with the unprofiled run's; a
# difference fails.
#
# Workloads (prepared by tests/workloads/, in a temporary directory):
#   javac  compiling JAVAC_FILES (150) java.util sources (openjdk-17-source)
#   h2     H2_ROWS (150000) rows in an in-memory H2 database, joins and
#          aggregates through org.h2.tools.RunScript (libh2-java)
# JVM options: GC (default -XX:+UseG1GC), javac -J-Xmx256m, H2 -Xmx512m.
#
# Usage: bench/overhead_java.sh [--quick] [--runs N] [--gc FLAG]
#   --quick   one round, small workloads (a smoke test, not a measurement)
# Environment: OBJSCOPE (the binary; default build/objscope, libobjscope.so
#              next to it), OBJSCOPE_FREQ (default: objscope's default rate),
#              JAVAC_FILES, H2_ROWS
# Exit status: 0 when every run succeeded with unchanged output, 1 otherwise.
set -eu

ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
OBJSCOPE=${OBJSCOPE:-$ROOT/build/objscope}
TIME=/usr/bin/time
H2_JAR=/usr/share/java/h2.jar
RUNS=5
QUICK=0
GC=-XX:+UseG1GC

while [ $# -gt 0 ]; do
	case $1 in
	--quick) QUICK=1; RUNS=1 ;;
	--runs) RUNS=$2; shift ;;
	--gc) GC=$2; shift ;;
	-h|--help) sed -n '2,26p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) echo "overhead_java.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
	esac
	shift
done

BENCH_NAME=overhead_java.sh
. "$ROOT/bench/lib.sh"
die() { bench_die "$@"; }
[ -x "$OBJSCOPE" ] || die "$OBJSCOPE not found - run 'make' first"
[ -x "$TIME" ] || die "$TIME not found - install the Debian package 'time'"
command -v javac >/dev/null 2>&1 || die "javac not found - install openjdk-17-jdk-headless"
[ -r "$H2_JAR" ] || die "$H2_JAR not found - install the Debian package libh2-java"

if [ -n "${OBJSCOPE_FREQ:-}" ]; then
	FREQ=$OBJSCOPE_FREQ
else
	FREQ=$(bench_default_freq "$OBJSCOPE")
fi
FREQ10=$((FREQ * 10))
HAVE_PERF=$(bench_have_perf "$FREQ10")

TMP=$(mktemp -d "${TMPDIR:-/tmp}/objscope-benchj-XXXXXX")
trap 'rm -rf "$TMP"' EXIT INT TERM

if [ "$QUICK" -eq 1 ]; then
	JAVAC_FILES=${JAVAC_FILES:-10}
	H2_ROWS=${H2_ROWS:-5000}
else
	JAVAC_FILES=${JAVAC_FILES:-150}
	H2_ROWS=${H2_ROWS:-150000}
fi
sh tests/workloads/javac_sources.sh "$TMP/javac" "$JAVAC_FILES"
sh tests/workloads/h2_script.sh "$TMP/h2.sql" "$H2_ROWS"

FAILED=0

# run_one TOOL WORKLOAD ROUND CMD... : one timed run; appends
# "wall cpu rss target_rss" to $TMP/WORKLOAD.TOOL and checks the output.
# javac's -d directory is $TMP/classes (emptied before each run).
run_one() {
	tool=$1 wl=$2 round=$3
	shift 3
	out=$TMP/$wl.$tool.$round.out
	err=$TMP/$wl.$tool.$round.err
	rm -rf "$TMP/classes" && mkdir "$TMP/classes"
	rc=0
	case $tool in
	alone) set -- "$@" ;;
	objscope) set -- "$OBJSCOPE" record -q -o "$TMP/profile.data" -- "$TIME" -o "$TMP/inner" -f '%e %U %S %M' "$@" ;;
	objscope10) set -- "$OBJSCOPE" record -q -F "$FREQ10" -o "$TMP/profile.data" -- "$TIME" -o "$TMP/inner" -f '%e %U %S %M' "$@" ;;
	perf) set -- perf record -q -F "$FREQ" -g -o "$TMP/perf.data" -- "$TIME" -o "$TMP/inner" -f '%e %U %S %M' "$@" ;;
	perf10) set -- perf record -q -F "$FREQ10" -g -o "$TMP/perf.data" -- "$TIME" -o "$TMP/inner" -f '%e %U %S %M' "$@" ;;
	esac
	"$TIME" -o "$TMP/outer" -f '%e %U %S %M' "$@" </dev/null >"$out" 2>"$err" || rc=$?
	[ "$tool" = alone ] && cp "$TMP/outer" "$TMP/inner"
	if [ "$rc" -ne 0 ]; then
		echo "overhead_java.sh: $wl under $tool exited $rc: $(tail -n 1 "$err")" >&2
		FAILED=1
		return 0
	fi
	if [ "$tool" != alone ]; then
		if ! cmp -s "$out" "$TMP/$wl.alone.$round.out" || ! cmp -s "$err" "$TMP/$wl.alone.$round.err"; then
			echo "overhead_java.sh: $wl: output under $tool differs from the unprofiled run" >&2
			FAILED=1
		fi
	fi
	# time(1) may prefix a "Command exited..." line; the figures are last.
	tail -n 1 "$TMP/outer" | awk -v t="$(tail -n 1 "$TMP/inner" | cut -d' ' -f4)" \
		'{ printf "%s %.2f %s %s\n", $1, $2 + $3, $4, t }' >>"$TMP/$wl.$tool"
	rm -f "$TMP/profile.data" "$TMP/perf.data"
}

TOOLS="alone objscope objscope10"
[ "$HAVE_PERF" -eq 0 ] || TOOLS="$TOOLS perf perf10"

# bench WORKLOAD CMD... : RUNS alternating rounds of all tools.
bench() {
	wl=$1
	shift
	round=1
	while [ "$round" -le "$RUNS" ]; do
		for tool in $TOOLS; do
			run_one "$tool" "$wl" "$round" "$@"
		done
		round=$((round + 1))
	done
}

report() {
	wl=$1
	for tool in $TOOLS; do
		f=$TMP/$wl.$tool
		[ -s "$f" ] || continue
		if [ "$tool" = alone ]; then
			rw=1 rc=1 rt=1 sw=-
		else
			rw=$(ratio_median "$f" "$TMP/$wl.alone" 1 4)
			sw=$(ratio_spread)
			rc=$(ratio_median "$f" "$TMP/$wl.alone" 2 4)
			rt=$(ratio_median "$f" "$TMP/$wl.alone" 4 4)
		fi
		printf '%-6s %-11s %8.2f %8.2f %8.1f %7.2fx %7.2fx %7.2fx  %s\n' "$wl" "$tool" \
			"$(median "$f" 1)" "$(median "$f" 2)" \
			"$(median "$f" 4 | awk '{ print $1 / 1024 }')" "$rw" "$rc" "$rt" "$sw"
	done
}

bench javac javac "-J$GC" -J-Xmx256m -Xlint:all -Xmaxwarns 100000 \
	--patch-module "java.base=$TMP/javac/src/java.base" -d "$TMP/classes" "@$TMP/javac/files.txt"
bench h2 java "$GC" -Xmx512m -cp "$H2_JAR" org.h2.tools.RunScript -url jdbc:h2:mem:wl \
	-script "$TMP/h2.sql" -showResults

echo "objscope overhead on Java ($GC): $RUNS alternating round(s); javac $JAVAC_FILES files," \
	"H2 $H2_ROWS rows; rates $FREQ and $FREQ10 Hz$([ "$HAVE_PERF" -eq 1 ] || echo ', perf unavailable')"
echo "(medians; ratios are medians of per-round profiled/alone ratios; objscope10/perf10: -F $FREQ10;"
echo " wall_mid: the middle half of the per-round wall ratios)"
printf '%-6s %-11s %8s %8s %8s %8s %8s %8s  %s\n' wl tool wall_s cpu_s tRSS_MB wall cpu tRSS wall_mid
report javac
report h2
exit "$FAILED"
