#!/usr/bin/env bash
# Check that results do not depend on the thread count, or on a change that should move
# none: run scenarios at each thread count (and, with --against, with another build of sim
# too), then compare every output file with the first run's, byte for byte. JSON files
# (summary.json, a collective's nccl-tests record) are compared without what describes the
# run rather than the fabric (the command line, wall time, rates per wall second, peak memory,
# how a run on several threads spent its time).
#
# Usage: benches/same-results.sh [--threads "1 2 4"] [--against OTHER_SIM] [SCENARIO...]
#   --threads   thread counts to run each scenario at (default "1 2 4")
#   --against   another sim binary (a build before the change): its runs must give the same
#               files as this tree's target/release/sim (or $SIM, when set)
#   SCENARIO    scenario files (default: every scenarios/*.toml and benches/*.toml but the
#               65,536-host ft65536-uec.toml, which takes minutes and 2 GB a run)
#
# Exit 0 when every file is identical, 1 when one differs (each named), 2 on bad usage or a
# run that fails. Plots are not drawn (`--plots none`): they are drawn from these files.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
sim=${SIM:-$root/target/release/sim}
threads="1 2 4"
against=""
while [ $# -gt 0 ]; do
  case $1 in
    --threads) threads=${2:?--threads needs a list, e.g. \"1 2 4\"}; shift 2 ;;
    --against) against=${2:?--against needs a sim binary}; shift 2 ;;
    -h|--help) sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "unknown option $1 (see --help)" >&2; exit 2 ;;
    *) break ;;
  esac
done
[ -x "$sim" ] || { echo "no $sim: run cargo build --release first" >&2; exit 2; }
[ -z "$against" ] || [ -x "$against" ] || { echo "--against: $against is not an executable" >&2; exit 2; }
if [ $# -eq 0 ]; then
  set -- "$root"/scenarios/*.toml "$root"/benches/*.toml
fi
work=$(mktemp -d "${TMPDIR:-/tmp}/same-results.XXXXXX")
trap 'rm -rf "$work"' EXIT

# A JSON file without the lines that describe the run, not the fabric.
fabric_only() {
  awk '/"(command_line|args)": \[/ { skip = 1 } skip { if ($0 ~ /^ *\],?$/) skip = 0; next }
       /"parallel": \{/ { obj = 1 } obj { if ($0 ~ /^ *\},?$/) obj = 0; next }
       !/"(peak_rss_mb|wall_seconds|events_per_second|packet_hops_per_second|simulated_per_wall)":/' "$1"
}

builds=("new:$sim")
[ -z "$against" ] || builds+=("old:$against")
differ=0 runs=0 files=0 scenarios=0
for f in "$@"; do
  name=$(basename "$f" .toml)
  if [ "$name" = ft65536-uec ] && [ $# -gt 1 ]; then continue; fi
  scenarios=$((scenarios + 1))
  ref=""
  for b in "${builds[@]}"; do
    label=${b%%:*} bin=${b#*:}
    for t in $threads; do
      out=$work/$scenarios-$name/$label-$t # numbered: scenarios/ and benches/ share names
      rc=0
      "$bin" run "$f" --out "$out" -q --plots none --threads "$t" >"$work/log" 2>&1 || rc=$?
      # A run stopped by a limit, a deadlock or flows left unfinished still writes its files
      # (its exit code is compared with them); one that writes none failed.
      if [ ! -f "$out/summary.json" ]; then
        echo "failed ($rc): $bin run $f --threads $t" >&2; tail -5 "$work/log" >&2; exit 2
      fi
      echo "$rc" >"$out/exit-code"
      runs=$((runs + 1))
      if [ -z "$ref" ]; then ref=$out; continue; fi
      for a in "$ref"/* "$out"/*; do
        rel=${a##*/}
        [ -e "$ref/$rel" ] && [ -e "$out/$rel" ] || { echo "$name: $rel only in one of $label-$t and the first run"; differ=1; continue; }
        [ "$a" = "$ref/$rel" ] || continue
        files=$((files + 1))
        if [ "${rel%.json}" != "$rel" ]; then
          cmp -s <(fabric_only "$ref/$rel") <(fabric_only "$out/$rel") && continue
        else
          cmp -s "$ref/$rel" "$out/$rel" && continue
        fi
        echo "$name: $rel differs ($label at --threads $t against the first run)"
        differ=1
      done
    done
  done
done
if [ "$differ" -eq 0 ]; then
  echo "identical: $files files of $runs runs ($scenarios scenarios; threads: $threads${against:+; against $against})"
fi
exit "$differ"
