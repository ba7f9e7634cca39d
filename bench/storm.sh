#!/bin/sh
# storm.sh - the allocation-storm benchmarks (docs/NATIVE.md "Programs that
# allocate fast", docs/BENCHMARKS.md "Allocation storms"): objscope record
# at defaults against the program alone, by bench/pair.sh's concurrent
# pairs, on two programs that allocate fast:
#   build/fixtures/alloc_storm   C: 10 M malloc/free of 4 KiB buffers
#   build/bench/storm_cxx        C++: 20 M new/delete of 48-byte objects
# Usage: bench/storm.sh [--rounds N] [ROUNDS]   (pairs per program, default
#   10; ROUNDS: the programs' rounds, default 50000)
# Run from the repository root after `make all fixtures`.
set -eu

PAIRS=10
while [ $# -gt 0 ]; do
	case "$1" in
	--rounds) PAIRS=$2; shift 2 ;;
	*) break ;;
	esac
done
ROUNDS=${1:-50000}
CXX=${CXX:-g++}
mkdir -p build/bench
if [ ! -x build/bench/storm_cxx ] || [ bench/storm_cxx.cc -nt build/bench/storm_cxx ]; then
	"$CXX" -O2 -g -Wall -Wextra -o build/bench/storm_cxx bench/storm_cxx.cc
fi
[ -x build/fixtures/alloc_storm ] || make --no-print-directory build/fixtures/alloc_storm
for prog in build/fixtures/alloc_storm build/bench/storm_cxx; do
	echo "== $prog $ROUNDS: $PAIRS pairs"
	sh bench/pair.sh --rounds "$PAIRS" -- "$prog" "$ROUNDS"
done
