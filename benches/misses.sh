#!/usr/bin/env bash
# Count what a run's events miss in a core's own caches, the same on every run: Valgrind's
# cachegrind simulates this machine's L1 data cache and its L2 (as the last level), so the
# count does not move with the machine's load as CPU time does. On large fabrics an event's
# cost is its misses (benches/README.md, "Where the misses are"); a change to the layout of
# the state a frame touches shows here as misses per packet-hop, deterministically.
# Cachegrind ignores prefetch instructions: these are the misses before any prefetching, what
# the event loop's prefetch stages have to hide.
#
# Usage: benches/misses.sh [--sim SIM] [SCENARIO [sim run options...]]
#   --sim     the binary to measure (default target/release/sim)
#   SCENARIO  default: the k=64 bench at k=32 with 100 KB flows (8,192 hosts, 3.1 M events,
#             under a minute under cachegrind), i.e. benches/ft65536-uec.toml
#             --set topology.k=32 --set 'workload[0].size=100KB'
#
# Runs the scenario twice on one thread under cachegrind (to the end, and stopped at 1 ns
# for the set-up and report alone) and prints the simulation's instructions and data misses
# per event and per packet-hop. The full run's cachegrind file is kept (its path is printed):
# `cg_annotate --sort=DLmr,DLmw FILE models/src/port/mod.rs` shows the misses line by line.
# Exit 2 on bad usage, without valgrind, or on a failed run.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
sim=$root/target/release/sim
if [ "${1:-}" = --sim ]; then sim=${2:?--sim needs a binary}; shift 2; fi
case ${1:-} in -h|--help) sed -n '2,20p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;; esac
if [ $# -eq 0 ]; then
  set -- "$root/benches/ft65536-uec.toml" --set topology.k=32 --set 'workload[0].size=100KB'
fi
scenario=$1
shift
[ -x "$sim" ] || { echo "no $sim: run cargo build --release first" >&2; exit 2; }
[ -f "$scenario" ] || { echo "no scenario $scenario" >&2; exit 2; }
command -v valgrind >/dev/null || { echo "needs valgrind (cachegrind)" >&2; exit 2; }
cache() { # cache INDEX: "size,ways,line" of cpu0's cache INDEX, as cachegrind takes it
  local d=/sys/devices/system/cpu/cpu0/cache/index$1 s
  s=$(cat "$d/size")
  case $s in *K) s=$((${s%K} * 1024)) ;; *M) s=$((${s%M} * 1048576)) ;; esac
  echo "$s,$(cat "$d/ways_of_associativity"),$(cat "$d/coherency_line_size")"
}
d1=$(cache 0 2>/dev/null || echo 49152,12,64)
l2=$(cache 2 2>/dev/null || echo 2097152,16,64)
work=$(mktemp -d "${TMPDIR:-/tmp}/misses.XXXXXX")
# One run under cachegrind: prints "instructions data_misses" (the last level's, reads and
# writes), the run's results in $work/$1.
measure() {
  local tag=$1
  shift
  if ! valgrind --tool=cachegrind --cache-sim=yes --D1="$d1" --LL="$l2" \
      --cachegrind-out-file="$work/$tag.cg" "$sim" run "$scenario" --threads 1 -q --plots none \
      --out "$work/$tag" "$@" >"$work/$tag.log" 2>&1; then
    # A run stopped by a limit or with flows left unfinished still ran: only a run that
    # wrote no results failed.
    [ -f "$work/$tag/summary.json" ] || { echo "failed: $sim run $scenario $*" >&2; tail -5 "$work/$tag.log" >&2; exit 2; }
  fi
  awk '/I *refs:/ { gsub(",", "", $4); i = $4 } /LLd misses:/ { gsub(",", "", $4); m = $4 }
       END { print i, m }' "$work/$tag.log"
}
total() { # total KEY: the sum of summary.json's per-variant KEY
  grep -o "\"$1\": [0-9]*" "$work/full/summary.json" | awk '{ s += $2 } END { print s }'
}
measure full "$@" >"$work/full.counts"
measure setup "$@" --set run.max_time=1ns >"$work/setup.counts"
read -r ir miss <"$work/full.counts"
read -r ir0 miss0 <"$work/setup.counts"
rm -rf "$work/setup" "$work/setup.cg"
events=$(total events)
hops=$(total packet_hops)
echo "# $(basename "$scenario") $*: cachegrind, D1 $d1, last level (L2) $l2"
awk -v ir="$ir" -v ir0="$ir0" -v m="$miss" -v m0="$miss0" -v e="$events" -v h="$hops" 'BEGIN {
  printf "events %d, packet-hops %d\n", e, h
  printf "simulation: %.0f instructions and %.2f last-level data misses per event, %.2f misses per packet-hop\n",
    (ir - ir0) / e, (m - m0) / e, (m - m0) / h
  printf "set-up and report: %.1f M instructions, %.2f M misses (subtracted)\n", ir0 / 1e6, m0 / 1e6
}'
echo "line by line: cg_annotate --sort=DLmr,DLmw $work/full.cg SOURCE.rs"
