# shellcheck shell=sh
# lib.sh - helpers shared by the overhead benchmarks (sourced, not run:
# bench/run.sh skips it). POSIX sh. The caller sets BENCH_NAME (its name in
# messages) and, for ratio_median, TMP (a scratch directory).

# bench_die MESSAGE... : one line on stderr, exit 1.
bench_die() {
	echo "$BENCH_NAME: $*" >&2
	exit 1
}

# bench_default_freq OBJSCOPE : objscope's default sampling rate, as
# `objscope record --help` prints it (1000 when it cannot be read).
bench_default_freq() {
	_freq=$("$1" record --help 2>&1 | grep -E -- '-F|--freq' |
		grep -o -E 'default:? *[0-9]+' | grep -o -E '[0-9]+' | head -n 1 || true)
	echo "${_freq:-1000}"
}

# bench_have_perf FREQ : prints 1 when `perf record -F FREQ -g` works here, else 0.
bench_have_perf() {
	if command -v perf >/dev/null 2>&1 &&
		perf record -q -F "$1" -g -o /dev/null -- true >/dev/null 2>&1; then
		echo 1
	else
		echo 0
	fi
}

# median FILE COLUMN : median of a column of space-separated numbers ("nan"
# when there are none).
median() {
	cut -d' ' -f"$2" "$1" | sort -g | awk '{ v[NR] = $1 }
		END { if (NR == 0) print "nan"; else if (NR % 2) print v[(NR + 1) / 2];
		      else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

# ratio_median TOOL_FILE BASE_FILE COLUMN NCOLS : median of the per-round
# ratios TOOL/BASE of COLUMN; both files have one line per round of NCOLS
# columns (a round missing from BASE gives no ratio).
ratio_median() {
	paste -d' ' "$1" "$2" | awk -v c="$3" -v n="$4" '{ b = $(c + n); if (b > 0) printf "%.4f\n", $c / b }' >"$TMP/ratios"
	median "$TMP/ratios" 1
}

# ratio_spread : the middle half of the per-round ratios of the last
# ratio_median call (rounds ceil(n/4) and n+1-ceil(n/4) in order: 2 and 6
# of 7, 2 and 4 of 5), as "LO-HI": how far one round strays on this machine.
ratio_spread() {
	sort -g "$TMP/ratios" | awk '{ v[NR] = $1 }
		END { if (NR == 0) { print "-"; exit }
		      k = int((NR + 3) / 4); printf "%.2f-%.2f\n", v[k], v[NR + 1 - k] }'
}
