#!/usr/bin/env bash
# Time two builds of sim on one scenario the way benches/README.md reports every step:
# alternating runs (old, new, old, new, ...) so that both see the same machine load, the CPU
# time (user + system) of each, and the median of the per-pair ratios new / old. On a shared
# VM whose speed moves by a quarter within an hour, only such pairs compare two builds; a
# change under 5 % needs ten of them to show.
#
# Usage: benches/ab.sh [--pairs N] OLD_SIM NEW_SIM SCENARIO [sim run options...]
#   --pairs   alternating pairs (default 5)
#   OLD_SIM   the build before the change (copy target/release/sim aside before rebuilding)
#   NEW_SIM   the build with it
#   options   passed to both runs, e.g. --threads 1, --set 'workload[0].size=250KB'
#
# Prints one row per pair and a last row: the median CPU ratio with its range, each build's
# median CPU and wall time and its largest peak RSS. Exit 2 on bad usage or a failed run.
# Check that the change moved no result with benches/same-results.sh --against OLD_SIM.
set -euo pipefail
pairs=5
if [ "${1:-}" = --pairs ]; then pairs=${2:?--pairs needs a number}; shift 2; fi
case ${1:-} in -h|--help|"") sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//'; exit 2 ;; esac
[ $# -ge 3 ] || { echo "usage: benches/ab.sh [--pairs N] OLD_SIM NEW_SIM SCENARIO [options]" >&2; exit 2; }
old=$1 new=$2 scenario=$3
shift 3
for b in "$old" "$new"; do [ -x "$b" ] || { echo "$b is not an executable" >&2; exit 2; }; done
[ -f "$scenario" ] || { echo "no scenario $scenario" >&2; exit 2; }
[ -x /usr/bin/time ] || { echo "needs GNU time at /usr/bin/time" >&2; exit 2; }
work=$(mktemp -d "${TMPDIR:-/tmp}/ab.XXXXXX")
trap 'rm -rf "$work"' EXIT

# One timed run: prints "cpu_seconds wall_seconds peak_rss_kib".
timed() {
  local rc=0
  /usr/bin/time -f "%U %S %e %M" -o "$work/time" "$1" run "$scenario" --out "$work/out" -q \
    --plots none "${@:2}" >"$work/log" 2>&1 || rc=$?
  # Exit codes 5-7 (a limit, a deadlock, unfinished flows) are results, timed as any run.
  case $rc in 0|5|6|7) ;; *) echo "failed ($rc): $1 run $scenario ${*:2}" >&2; tail -5 "$work/log" >&2; exit 2 ;; esac
  awk '{ printf "%.3f %.3f %d\n", $1 + $2, $3, $4 }' "$work/time"
}
median() { sort -g | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else printf "%.3f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

# A build whose hot functions were renamed (a new impl block in their module, a new instance
# of the event loop) has them laid out after the linker's list (link/symbol-order.txt), away
# from the rest of the hot code: that alone moved the k=64 run's CPU by 5-10 % (benches/
# README.md, 2026-12-07). Say so before timing: the list's first 50 functions that one build
# has and the other lacks.
order=$(cd "$(dirname "$0")/.." && pwd)/link/symbol-order.txt
if command -v nm >/dev/null && [ -f "$order" ]; then
  head -50 "$order" | sort >"$work/hot"
  nm "$old" 2>/dev/null | awk '{ print $NF }' | sort -u | comm -12 - "$work/hot" >"$work/in_old"
  nm "$new" 2>/dev/null | awk '{ print $NF }' | sort -u | comm -12 - "$work/hot" >"$work/in_new"
  only_old=$(comm -23 "$work/in_old" "$work/in_new" | wc -l)
  only_new=$(comm -13 "$work/in_old" "$work/in_new" | wc -l)
  if [ "$only_old" -gt 0 ] || [ "$only_new" -gt 0 ]; then
    echo "warning: of link/symbol-order.txt's first 50 functions, $only_old are named in $old" \
      "only and $only_new in $new only (renamed: a list made for one build does not lay them" \
      "out first in the other), so the comparison may time their layout too; regenerate the" \
      "list with link/symbol-order.sh and rebuild" >&2
  fi
fi

# A build with other features (the one `cargo test --release --all-features` leaves in
# target/release) has none of the list's names: its layout is not the README's binary's.
for b in "$old" "$new"; do
  if command -v nm >/dev/null && "$(dirname "$order")/symbol-order.sh" --check "$b" | grep -q "not checked"; then
    echo "warning: $b is not laid out by link/symbol-order.txt (a build with other features," \
      "such as cargo test's?): time what cargo build --release makes" >&2
  fi
done

echo "# $(basename "$scenario") ${*}: $pairs pairs, $(date -u '+%Y-%m-%d %H:%M UTC'), load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "pair  old_cpu  new_cpu  ratio  old_wall  new_wall"
: >"$work/rows"
for i in $(seq "$pairs"); do
  timed "$old" "$@" >"$work/a"
  timed "$new" "$@" >"$work/b"
  read -r oc ow om <"$work/a"
  read -r nc nw nm <"$work/b"
  r=$(awk -v a="$oc" -v b="$nc" 'BEGIN { printf "%.3f", (a > 0 ? b / a : 0) }')
  printf "%4d  %7.2f  %7.2f  %5s  %8.2f  %8.2f\n" "$i" "$oc" "$nc" "$r" "$ow" "$nw"
  echo "$oc $nc $r $ow $nw $om $nm" >>"$work/rows"
done
col() { awk -v c="$1" '{ print $c }' "$work/rows"; }
range=$(col 3 | sort -g | awk 'NR == 1 { lo = $1 } { hi = $1 } END { print lo "-" hi }')
echo "median CPU ratio new/old $(col 3 | median) (range $range); CPU old $(col 1 | median) s, new $(col 2 | median) s;" \
  "wall old $(col 4 | median) s, new $(col 5 | median) s; peak RSS old $(col 6 | sort -g | tail -1) KiB, new $(col 7 | sort -g | tail -1) KiB"
