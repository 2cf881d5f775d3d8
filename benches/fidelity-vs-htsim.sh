#!/usr/bin/env bash
# Run the NSCC and RCCC cases of docs/validation-uet-htsim.md in sim and in uet-htsim, side by
# side, and print one Markdown table: trimming incasts of 8, 32 and 127 senders on uet-htsim's
# k=8 fat tree (benches/i128-incast.toml), a flow across two bottlenecks, a 1 %-loss 3 m cable
# with and without loss probes, and RCCC into a deep buffer. The last three need our drivers
# against uet-htsim's library (benches/htsim-drivers/), built here with g++.
#
# Usage: benches/fidelity-vs-htsim.sh HTSIM_DIR
#   HTSIM_DIR  uet-htsim's htsim/sim folder, built (../shared/uet-htsim/build.sh prints
#              HTSIM_DIR/build/datacenter)
# Needs a release build of sim (cargo build --release), g++ and python3.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
H=${1:?usage: benches/fidelity-vs-htsim.sh HTSIM_DIR (the built htsim/sim folder of uet-htsim)}
sim=$root/target/release/sim
[ -x "$sim" ] || { echo "no $sim: run cargo build --release first" >&2; exit 2; }
[ -x "$H/build/datacenter/htsim_uec" ] || { echo "no $H/build/datacenter/htsim_uec" >&2; exit 2; }
work=$(mktemp -d "${TMPDIR:-/tmp}/fidelity-vs-htsim.XXXXXX")
trap 'rm -rf "$work"' EXIT
for d in parking_lot dac_loss rccc_incast; do
  g++ -O2 -std=c++17 -I"$H" -I"$H/datacenter" "$here/htsim-drivers/$d.cpp" \
    "$H/build/datacenter/libhtsim_dc.a" "$H/build/libhtsim.a" -o "$work/$d"
done

# Helpers reading the results: quantiles (us) of sim's flows.csv or htsim's "finished at"
# lines, goodputs (Gb/s) of unfinished flows, one flow's completion.
cat > "$work/read.py" <<'PY'
import csv, re, sys
what, path = sys.argv[1], sys.argv[2]
if what == "htsim":
    t = sorted(float(m.group(1)) for m in re.finditer(r"finished at ([\d.]+)", open(path).read()))
elif what in ("sim", "last", "one"):
    t = sorted(float(r["fct_ns"]) / 1e3 for r in csv.DictReader(open(path)) if r["fct_ns"])
if what in ("htsim", "sim"):
    k = len(t)
    print(" ".join("%.0f" % x for x in (t[0], t[k // 10], t[k // 2], t[-1])))
elif what in ("last", "one"):
    print("%.0f" % t[-1])
elif what == "gbps":
    secs = float(sys.argv[3])
    rows = csv.DictReader(open(path))
    print(" ".join("%.2f" % (int(re.search(r"\((\d+) of", r["status"]).group(1)) * 8 / secs / 1e9) for r in rows))
PY
quant() { python3 "$work/read.py" "$@"; }

echo "| case | simulator | result |"
echo "|---|---|---|"
for n in 8 32 127; do
  cm=$work/incast_$n.cm
  { echo "Nodes 128"; echo "Connections $n"; grep -- "->33" "$here/htsim/incast_128.cm" | head -"$n"; } > "$cm"
  "$H/build/datacenter/htsim_uec" -tm "$cm" -sender_cc_only -end 30000 > "$work/h$n.log" 2>&1
  sed "s#file = \"htsim/incast_128.cm\"#file = \"$cm\"#" "$here/i128-incast.toml" > "$work/s$n.toml"
  "$sim" run "$work/s$n.toml" --out "$work/s$n" -q --plots none > /dev/null
  echo "| incast $n to 1: min, p10, p50, max (us) | uet-htsim | $(quant htsim "$work/h$n.log") |"
  echo "| | sim | $(quant sim "$work/s$n/flows.csv") |"
done

cat > "$work/chain.toml" <<'TOML'
[topology]
kind = "chain"
switches = 3
hosts_per_switch = 3
host_link = { rate = "100Gbps", delay = "1us" }
chain_link = { rate = "100Gbps", delay = "1us" }
[switch]
ecn = { kmin = "20KB", kmax = "80KB", pmax = 1.0 }
trim = { threshold = "200KB" }
[nic]
transport = "uet"
cc = { kind = "nscc" }
[run]
max_time = "3ms"
[[workload]]
kind = "explicit"
TOML
python3 - "$work/chain.toml" <<'PY'
import sys
p = sys.argv[1]
s = open(p).read().replace('[[workload]]\nkind = "explicit"\n', "")
for a, b in [(0, 6), (1, 3), (2, 4), (4, 7), (5, 8)]:
    s += f'[[flow]]\nsrc = "h{a}"\ndst = "h{b}"\nsize = "100MB"\n'
open(p, "w").write(s)
PY
"$sim" run "$work/chain.toml" --out "$work/chain" -q --plots none > /dev/null || true
echo "| two bottlenecks, Gb/s over 3 ms: long, then one-hop | uet-htsim | $("$work/parking_lot" 3 | grep '^flow' | awk '{printf "%.2f ", $3}') |"
echo "| | sim | $(quant gbps "$work/chain/flows.csv" 3e-3) |"

dac() {  # seed probes [cc] -> the flow's completion in us
  local cc="{ kind = \"nscc\", loss_probes = $2 }"
  [ $# -ge 3 ] && cc=$3
  cat > "$work/dac.toml" <<TOML
seed = $1
[topology]
kind = "back-to-back"
link = { rate = "100Gbps", cable = "3m", loss = 0.01 }
[nic]
transport = "uet"
cc = $cc
[run]
max_time = "50ms"
[[flow]]
src = 0
dst = 1
size = "2MB"
TOML
  "$sim" run "$work/dac.toml" --out "$work/dac" -q --plots none > /dev/null
  quant one "$work/dac/flows.csv"
}
for p in 0 1; do
  h="" s=""
  for seed in 1 2 3 4 5; do
    h+="$("$work/dac_loss" 0.01 "$seed" "$p" | grep -o 'finished at [0-9.]*' | awk '{printf "%.0f", $3}') "
    s+="$(dac "$seed" "$([ "$p" = 1 ] && echo true || echo false)") "
  done
  echo "| 2 MB on a 3 m cable, 1 % loss, NSCC, probes $p: us, seeds 1-5 | uet-htsim | $h|"
  echo "| | sim | $s|"
done
h="" s=""
for seed in 1 2 3 4 5; do
  h+="$("$work/dac_loss" 0.01 "$seed" 0 rccc | grep -o 'finished at [0-9.]*' | awk '{printf "%.0f", $3}') "
  s+="$(dac "$seed" false '{ kind = "rccc" }') "
done
echo "| 2 MB on a 3 m cable, 1 % loss, RCCC: us, seeds 1-5 | uet-htsim | $h|"
echo "| | sim | $s|"

"$work/rccc_incast" 16 4000000 > "$work/rccc.log"
cat > "$work/rccc.toml" <<'TOML'
[topology]
kind = "star"
hosts = 17
host_link = { rate = "100Gbps", delay = "1us" }
[switch]
asic = "spectrum2"
[nic]
transport = "uet"
cc = { kind = "rccc" }
[[workload]]
kind = "incast"
size = "4000000B"
[run]
sample_interval = "20us"
TOML
"$sim" run "$work/rccc.toml" --out "$work/rccc" -q --plots none > /dev/null
echo "| RCCC 16 to 1, 42 MB buffer: queue at 2 ms (B), last completion (us) | uet-htsim | $(awk '/^queue/ && $2 >= 2000 && !q {q=$4} END {printf "%s", q}' "$work/rccc.log") $(grep -o 'finished at [0-9.]*' "$work/rccc.log" | awk '{print $3}' | sort -g | tail -1) |"
echo "| | sim | $(awk -F, '$3 == "queue_bytes" && $4 == "sw0 to-h0" && $2 == 2000000 {printf "%s", $5}' "$work/rccc/timeseries.csv") $(quant last "$work/rccc/flows.csv") |"
