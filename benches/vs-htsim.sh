#!/usr/bin/env bash
# Time sim against uet-htsim on the same experiments, side by side: for each experiment, ROUNDS
# pairs of runs alternating sim, htsim, sim, htsim, ..., so both see the same machine load.
# Prints a Markdown table: median CPU time (user + system) of each, the median of the per-pair
# ratios (sim / htsim) with its range, sim's median wall time and the median of the per-pair
# ratios of sim's wall time to uet-htsim's CPU time (uet-htsim runs on one thread, so its wall
# time is its CPU time; sim runs each experiment on `--threads` at its default, the cores),
# and peak RSS (the largest of the rounds).
#
# Usage: benches/vs-htsim.sh HTSIM_BIN_DIR [ROUNDS] [ID...]
#   HTSIM_BIN_DIR  the folder holding htsim_uec and htsim_roce (uet-htsim's
#                  htsim/sim/build/datacenter, built with CMake in Release mode)
#   ROUNDS         pairs per experiment (default 5)
#   ID             experiments to run (default all): P128 P1024 P1024-ecmp R1024 I128 P8192
#
# Needs a release build of sim (cargo build --release) and GNU time (/usr/bin/time).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
bin=${1:?usage: benches/vs-htsim.sh HTSIM_BIN_DIR [ROUNDS] [ID...]}
rounds=${2:-5}
shift $(( $# >= 2 ? 2 : 1 ))
sim=$root/target/release/sim
[ -x "$sim" ] || { echo "no $sim: run cargo build --release first" >&2; exit 2; }
for b in htsim_uec htsim_roce; do
  [ -x "$bin/$b" ] || { echo "no $bin/$b" >&2; exit 2; }
done
[ -x /usr/bin/time ] || { echo "needs GNU time at /usr/bin/time" >&2; exit 2; }
# `cargo test --release --all-features` leaves in target/release a sim built with other
# features: every crate hashes differently, so the linker's list of hot functions lays out
# none of them, and the timing would be of that layout (benches/README.md, 2026-12-07 18:22).
if command -v nm >/dev/null && "$root/link/symbol-order.sh" --check "$sim" | grep -q "not checked"; then
  echo "warning: $sim is not laid out by link/symbol-order.txt (a build with other features," \
    "such as cargo test's?): run cargo build --release before timing" >&2
fi
d=$here/htsim
work=$(mktemp -d "${TMPDIR:-/tmp}/vs-htsim.XXXXXX")
trap 'rm -rf "$work"' EXIT

# id | our scenario | htsim binary and arguments
experiments=(
  "P128|p128-uec.toml|htsim_uec -tm $d/perm_128n_128c_2MB.cm -topo $d/fat_tree_128_1os.topo -sender_cc_only -paths 128 -end 1000"
  "P1024|p1024-uec.toml|htsim_uec -tm $d/perm_1024n_1024c_0u_2000000b.cm -sender_cc_only -end 400 -paths 128"
  "P1024-ecmp|p1024-ecmp.toml|htsim_uec -tm $d/perm_1024n_1024c_0u_2000000b.cm -sender_cc_only -end 3000 -paths 1"
  "R1024|r1024-roce.toml|htsim_roce -tm $d/perm_1024n_1024c_0u_2000000b.cm -nodes 1024 -strat ecmp_host -paths 1 -end 3000"
  "I128|i128-incast.toml|htsim_uec -tm $d/incast_128.cm -sender_cc_only -end 30000"
  "P8192|p8192-uec.toml|htsim_uec -tm $d/perm_8192n_8192c_1MB.cm -end 1000 -paths 128 -linkspeed 400000 -topo $d/leaf_spine_8192_400g.topo -q 100 -ecn 25 75 -cwnd 150 -sender_cc_only"
)

# One timed run: prints "cpu_seconds peak_rss_kib wall_seconds"; the command's output goes to
# $work/log.
timed() {
  local dir=$1; shift
  mkdir -p "$dir"
  (cd "$dir" && /usr/bin/time -f "%U %S %M %e" -o "$work/time" "$@" >"$work/log" 2>&1) ||
    { echo "failed: $* (log: $work/log)" >&2; tail -5 "$work/log" >&2; exit 1; }
  awk '{ printf "%.3f %d %.3f\n", $1 + $2, $3, $4 }' "$work/time"
}

median() { sort -g | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else printf "%.3f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

echo "# sim vs uet-htsim, $(date -u '+%Y-%m-%d %H:%M UTC'), $rounds pairs per experiment"
echo
echo "machine: $(nproc) cores, $(awk '/MemTotal/ { printf "%.0f GiB", $2 / 1048576 }' /proc/meminfo); load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "sim: $(cd "$root" && git rev-parse --short HEAD 2>/dev/null || echo unknown); htsim: $bin"
echo
echo "| experiment | sim CPU (median) | htsim CPU (median) | CPU ratio sim/htsim (median of pairs, range) | sim wall (median) | sim wall / htsim CPU (median of pairs, range) | sim peak RSS | htsim peak RSS |"
echo "|---|---|---|---|---|---|---|---|"
for e in "${experiments[@]}"; do
  IFS='|' read -r id scenario cmd <<<"$e"
  if [ $# -gt 0 ] && ! printf '%s\n' "$@" | grep -qx "$id"; then continue; fi
  : >"$work/ours"; : >"$work/theirs"; : >"$work/ratios"; : >"$work/walls"
  for ((r = 1; r <= rounds; r++)); do
    read -r a ma wa < <(timed "$work/sim" "$sim" run "$here/$scenario" --out "$work/sim/out" -q --plots none)
    read -r h mh _ < <(timed "$work/htsim" "$bin"/$cmd)
    echo "$a $ma $wa" >>"$work/ours"; echo "$h $mh" >>"$work/theirs"
    awk -v a="$a" -v h="$h" 'BEGIN { printf "%.4f\n", a / h }' >>"$work/ratios"
    awk -v a="$wa" -v h="$h" 'BEGIN { printf "%.4f\n", a / h }' >>"$work/walls"
  done
  ours=$(cut -d' ' -f1 "$work/ours" | median)
  theirs=$(cut -d' ' -f1 "$work/theirs" | median)
  ratio=$(median <"$work/ratios")
  lo=$(sort -g "$work/ratios" | head -1); hi=$(sort -g "$work/ratios" | tail -1)
  wall=$(cut -d' ' -f3 "$work/ours" | median)
  wratio=$(median <"$work/walls")
  wlo=$(sort -g "$work/walls" | head -1); whi=$(sort -g "$work/walls" | tail -1)
  rss_a=$(cut -d' ' -f2 "$work/ours" | sort -n | tail -1)
  rss_h=$(cut -d' ' -f2 "$work/theirs" | sort -n | tail -1)
  printf '| %s | %.2f s | %.2f s | **%.3f** (%.3f-%.3f) | %.2f s | **%.3f** (%.3f-%.3f) | %.0f MiB | %.0f MiB |\n' \
    "$id" "$ours" "$theirs" "$ratio" "$lo" "$hi" "$wall" "$wratio" "$wlo" "$whi" "$((rss_a / 1024))" "$((rss_h / 1024))"
done
echo
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
