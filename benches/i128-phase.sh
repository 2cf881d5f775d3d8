#!/usr/bin/env bash
# The 127-to-1 incast's first completion is a traffic-phase effect (docs/validation-uet-htsim.md,
# "The first completion is a phase effect"): this runs benches/i128-incast.toml in sim and
# `htsim_uec -tm incast_128.cm -sender_cc_only` in uet-htsim with every cable's latency set to
# each of 0.95, 0.96, ..., 1.05 us (htsim's -hop_latency), seeds 1-3, and prints min, p10, p50
# and max (us) per run, then each quantile's mean over the runs and the mean and range of
# sim / uet-htsim paired by seed and latency. Then sim at 1 us with uet-htsim's wire time per
# data packet (4,150 B at 100 Gb/s: our 4,218 B at 101.638 Gb/s) and its 64 B trimmed headers.
#
# Usage: benches/i128-phase.sh HTSIM_DIR [LATENCIES] [SEEDS]
#   HTSIM_DIR  uet-htsim's built htsim/sim folder (as for benches/fidelity-vs-htsim.sh)
# About 85 s on two cores. Needs a release build of sim (SIM=path overrides
# target/release/sim, e.g. for a CARGO_TARGET_DIR elsewhere) and python3.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
sim=${SIM:-$(dirname "$here")/target/release/sim}
H=${1:?usage: benches/i128-phase.sh HTSIM_DIR [LATENCIES] [SEEDS]}/build/datacenter/htsim_uec
lats=${2:-"0.95 0.96 0.97 0.98 0.99 1.0 1.01 1.02 1.03 1.04 1.05"}
seeds=${3:-"1 2 3"}
[ -x "$sim" ] || { echo "no $sim: run cargo build --release first" >&2; exit 2; }
[ -x "$H" ] || { echo "no $H" >&2; exit 2; }
work=$(mktemp -d "${TMPDIR:-/tmp}/i128-phase.XXXXXX")
trap 'rm -rf "$work"' EXIT
cp "$here/htsim/incast_128.cm" "$work/"

cat > "$work/q.py" <<'PY'
import csv, re, sys
def q(t):
    t = sorted(t)
    return [t[0], t[len(t) // 10], t[len(t) // 2], t[-1]]
h = q(float(m.group(1)) for m in re.finditer(r"finished at ([\d.]+)", open(sys.argv[1]).read()))
s = q(float(r["fct_ns"]) / 1e3 for r in csv.DictReader(open(sys.argv[2])))
print(sys.argv[3], sys.argv[4], *("%.0f" % x for x in h + s))
PY

one() {  # seed latency_us -> "seed lat htsim(min p10 p50 max) sim(min p10 p50 max)"
  local d=$work/$1-$2
  # Each uet-htsim in its own folder: it writes logout.dat and idmap.txt where it runs.
  mkdir "$d.h" && cp "$work/incast_128.cm" "$d.h/"
  (cd "$d.h" && "$H" -tm incast_128.cm -sender_cc_only -end 30000 -seed "$1" -hop_latency "$2" > "$d.log" 2>&1)
  "$sim" run "$here/i128-incast.toml" --seed "$1" --out "$d" -q --plots none \
    --set "topology.host_link.delay=\"${2}us\"" --set "topology.fabric_link.delay=\"${2}us\"" > /dev/null
  python3 "$work/q.py" "$d.log" "$d/flows.csv" "$1" "$2"
}
export -f one
export work H sim here
# shellcheck disable=SC2016  # $0 and $1 are bash -c's arguments, expanded there
for s in $seeds; do for d in $lats; do echo "$s $d"; done; done |
  xargs -P 2 -n 2 bash -c 'one "$0" "$1"' | sort -k1,1n -k2,2g > "$work/grid.txt"

echo "seed latency_us | uet-htsim min p10 p50 max | sim min p10 p50 max"
cat "$work/grid.txt"
python3 - "$work/grid.txt" <<'PY'
import sys
rows = [[float(x) for x in l.split()] for l in open(sys.argv[1])]
for i, name in enumerate(("min", "p10", "p50", "max")):
    h = [r[2 + i] for r in rows]
    s = [r[6 + i] for r in rows]
    ratio = [b / a for a, b in zip(h, s)]
    print("%s: mean uet-htsim %.0f (%.0f-%.0f), sim %.0f (%.0f-%.0f); sim/uet-htsim paired %.3f (%.3f-%.3f)"
          % (name, sum(h) / len(h), min(h), max(h), sum(s) / len(s), min(s), max(s),
             sum(ratio) / len(ratio), min(ratio), max(ratio)))
PY
echo "sim at 1 us with uet-htsim's wire time per data packet and 64 B trimmed headers: min p10 p50 max"
for s in $seeds; do
  "$sim" run "$here/i128-incast.toml" --seed "$s" --out "$work/f$s" -q --plots none \
    --set 'switch.trim.size="64B"' --set 'topology.host_link.rate="101.638Gbps"' \
    --set 'topology.fabric_link.rate="101.638Gbps"' > /dev/null
  python3 -c "import csv; t = sorted(float(r['fct_ns']) / 1e3 for r in csv.DictReader(open('$work/f$s/flows.csv'))); print($s, *('%.0f' % x for x in (t[0], t[len(t) // 10], t[len(t) // 2], t[-1])))"
done
