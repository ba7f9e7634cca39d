#!/bin/sh
# same-report.sh - do two objscope builds give the same reports of the same
# profiles? For refactors that must not change what users see:
# every profile is reported by both builds in every format and with the
# view options, and the outputs are compared byte for byte.
#
# Usage: scripts/same-report.sh OLD_OBJSCOPE NEW_OBJSCOPE PROFILE...
#   (record the profiles with the OLD build: "the same profile file gives
#   the same report before and after"). Prints SAME/DIFF per case and a
#   summary; exits 1 when any case differs, 2 on bad usage.
set -u
[ $# -ge 3 ] || { echo "usage: $0 OLD_OBJSCOPE NEW_OBJSCOPE PROFILE..." >&2; exit 2; }
old=$1 new=$2
shift 2
for b in "$old" "$new"; do
	[ -x "$b" ] || { echo "$0: $b: not an executable" >&2; exit 2; }
done
tmp=$(mktemp -d) || exit 2
trap 'rm -rf "$tmp"' EXIT
same=0 diff=0
check() { # label, then report arguments (-o FILE is added)
	label=$1
	shift
	"$old" report "$@" -o "$tmp/old" >/dev/null 2>"$tmp/old.err"
	"$new" report "$@" -o "$tmp/new" >/dev/null 2>"$tmp/new.err"
	if cmp -s "$tmp/old" "$tmp/new" && cmp -s "$tmp/old.err" "$tmp/new.err"; then
		same=$((same + 1))
		echo "SAME $label"
	else
		diff=$((diff + 1))
		echo "DIFF $label"
	fi
	rm -f "$tmp/old" "$tmp/new"
}
prev=
for f in "$@"; do
	for fmt in text json html collapsed pprof; do
		check "$f --format $fmt" --format "$fmt" "$f"
	done
	check "$f -v" -v "$f"
	check "$f --per-thread" --per-thread "$f"
	check "$f --sort bytes" --sort bytes "$f"
	check "$f --time 1,3" --time 1,3 "$f"
	check "$f --no-lines" --no-lines "$f"
	if [ -n "$prev" ]; then
		check "--diff $prev $f" --diff "$prev" "$f"
		check "--format json --diff $prev $f" --format json --diff "$prev" "$f"
	fi
	prev=$f
done
echo "$same same, $diff different"
[ "$diff" -eq 0 ]
