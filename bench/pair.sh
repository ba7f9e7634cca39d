#!/bin/sh
# pair.sh - A/B of two ways to run one program, by CONCURRENT pairs: both
# start at the same moment and share the machine's slow and fast moments,
# so the ratio of their CPU seconds is far steadier on a noisy (shared,
# virtual) machine than alternating rounds: two plain javac runs paired this
# way gave ratios of 0.977-0.991, where alternating rounds varied by 25%.
# It measures CPU (the program's own, from /usr/bin/time around it, and the
# whole command's), not wall time: the two runs compete for the CPUs.
#
# Usage: bench/pair.sh [--rounds N] -- COMMAND [ARGS...]
#   A and B are command prefixes put before COMMAND, from the environment:
#     PAIR_A  (default: empty, the program alone)
#     PAIR_B  (default: "build/objscope record -q -o {}/p.data --")
#   "{}" in PAIR_A, PAIR_B and COMMAND becomes a scratch directory of its
#   own for each run (output files of the two runs must not collide).
#   Which of the two starts first alternates between rounds.
# Prints per round: CPU of the program under B / under A, and of the whole
# command (profiler included); then the medians. Exit status 1 when a run
# failed (the ratios then mean nothing).
# Example (docs/BENCHMARKS.md, "How to run"):
#   PAIR_B="build/objscope record -q -F 1 -o {}/p.data --" sh bench/pair.sh \
#     --rounds 4 -- javac -J-Xmx256m -d {}/cls @files.txt
set -eu

ROUNDS=4
while [ $# -gt 0 ]; do
	case "$1" in
	--rounds) ROUNDS=$2; shift 2 ;;
	--) shift; break ;;
	*) echo "usage: bench/pair.sh [--rounds N] -- COMMAND [ARGS...]" >&2; exit 2 ;;
	esac
done
[ $# -gt 0 ] || { echo "pair.sh: no COMMAND" >&2; exit 2; }
TIME=/usr/bin/time
[ -x "$TIME" ] || { echo "pair.sh: $TIME not found - install the Debian package 'time'" >&2; exit 1; }
PAIR_A=${PAIR_A-}
PAIR_B=${PAIR_B-"build/objscope record -q -o {}/p.data --"}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT INT TERM

# run DIR PREFIX COMMAND... : one run, CPU times into DIR/outer and DIR/inner
run() {
	d=$1
	pre=$(printf %s "$2" | sed "s|{}|$d|g")
	shift 2
	rm -rf "$d"
	mkdir -p "$d"
	n=$#
	for w in "$@"; do
		set -- "$@" "$(printf %s "$w" | sed "s|{}|$d|g")"
	done
	shift "$n"
	# the prefix is split into words on purpose
	# shellcheck disable=SC2086
	"$TIME" -o "$d/outer" -f '%U %S' $pre "$TIME" -o "$d/inner" -f '%U %S' "$@" \
		>"$d/out" 2>"$d/err" || {
		echo "pair.sh: a run failed: $(tail -n 3 "$d/err")" >&2
		: >"$TMP/failed"
	}
}

secs() { tail -n 1 "$1" | awk '{ print $1 + $2 }'; }

: >"$TMP/ratios"
r=1
while [ "$r" -le "$ROUNDS" ]; do
	if [ $((r % 2)) -eq 1 ]; then
		run "$TMP/a" "$PAIR_A" "$@" & run "$TMP/b" "$PAIR_B" "$@" & wait
	else
		run "$TMP/b" "$PAIR_B" "$@" & run "$TMP/a" "$PAIR_A" "$@" & wait
	fi
	pa=$(secs "$TMP/a/inner"); pb=$(secs "$TMP/b/inner")
	wa=$(secs "$TMP/a/outer"); wb=$(secs "$TMP/b/outer")
	echo "$pa $pb $wa $wb" | awk -v r="$r" '{ printf "round %d: program %.2f / %.2f s = %.3f, whole command %.2f / %.2f s = %.3f\n", r, $2, $1, $2 / $1, $4, $3, $4 / $3 }'
	echo "$pa $pb $wa $wb" | awk '{ print $2 / $1, $4 / $3 }' >>"$TMP/ratios"
	r=$((r + 1))
done
med() { sort -n | awk '{ a[NR] = $1 } END { m = NR % 2 ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2; printf "%.3f", m }'; }
echo "median CPU ratio B/A over $ROUNDS pairs: program $(cut -d' ' -f1 "$TMP/ratios" | med), whole command $(cut -d' ' -f2 "$TMP/ratios" | med)"
[ ! -e "$TMP/failed" ] || exit 1
