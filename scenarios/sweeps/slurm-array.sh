#!/usr/bin/env bash
# Run a sweep on a Slurm cluster: one job-array task per shard, then a merge job that writes
# the same sweep.csv, sweep_stats.csv and plots a single `sim sweep` would.
#
#   scenarios/sweeps/slurm-array.sh scenarios/sweeps/ecn-kmin.toml 8
#
# Environment: OUT (a folder for shards/, logs/ and the merged sweep in merged/; default
# results/<sweep file name>), CPUS (cores per
# task, default 4), SIM (the sim binary; default: built here with cargo), and SBATCH_ARGS
# (extra sbatch options, e.g. "--partition=cpu --time=02:00:00").
# Shards are independent (point i runs in shard i mod N), so a failed task can be resubmitted
# alone: sim sweep SWEEP --shard I/N --out OUT/shards/I, then rerun the merge line below.
set -euo pipefail
SWEEP=${1:?usage: slurm-array.sh SWEEP.toml [SHARDS]}
SHARDS=${2:-8}
OUT=${OUT:-results/$(basename "$SWEEP" .toml)}
CPUS=${CPUS:-4}
if [[ -z "${SIM:-}" ]]; then
    cargo build --release --quiet
    SIM=$PWD/target/release/sim
fi
mkdir -p "$OUT/shards" "$OUT/logs"
# shellcheck disable=SC2086 # SBATCH_ARGS is a list of options
ARRAY=$(sbatch --parsable ${SBATCH_ARGS:-} --job-name="sweep-$(basename "$SWEEP" .toml)" \
    --array="0-$((SHARDS - 1))" --cpus-per-task="$CPUS" --output="$OUT/logs/%A_%a.out" \
    --wrap="'$SIM' sweep '$SWEEP' --shard \$SLURM_ARRAY_TASK_ID/$SHARDS --jobs $CPUS --out '$OUT/shards/'\$SLURM_ARRAY_TASK_ID -q")
# afterany: a shard with failed points still has rows; the merge reports them (exit 4).
# shellcheck disable=SC2086
MERGE=$(sbatch --parsable ${SBATCH_ARGS:-} --job-name=sweep-merge --dependency="afterany:${ARRAY%%;*}" \
    --output="$OUT/logs/merge.out" \
    --wrap="'$SIM' merge --out '$OUT/merged' '$OUT'/shards/*")
echo "submitted array $ARRAY ($SHARDS shards) and merge $MERGE; results in $OUT/merged"
