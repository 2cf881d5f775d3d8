#!/usr/bin/env bash
# Run a sweep on a Slurm cluster: one job-array task per shard, then a merge job that writes
# the same sweep.csv, sweep_stats.csv and plots a single `sim sweep` would.
#
#   scenarios/sweeps/slurm-array.sh [--wait] SWEEP.toml [SHARDS]
#   scenarios/sweeps/slurm-array.sh scenarios/sweeps/ecn-kmin.toml 8
#
# Task I runs `sim sweep SWEEP --shard I/SHARDS` (points i with i mod SHARDS = I) into
# OUT/shards/I, its log in OUT/logs/<array job>_I.out. The merge waits for every task to end
# (afterany: it also runs when a task failed, and then exits 2 naming the shard it lacks, or
# 4 if some points failed) and writes OUT/merged/, its log in OUT/logs/merge_<job>.out.
# --wait: stay until the merge has ended and exit with its exit code (0: the whole sweep, all
# ok), or 1 if it did not run to its end (cancelled, timed out).
#
# Environment:
#   OUT          where shards/, logs/ and merged/ go (default results/<sweep file name>)
#   CPUS         cores per task (--cpus-per-task; sim uses as many threads), default 4
#   SIM          the sim binary (default: built here with cargo, so run from the checkout)
#   SBATCH_ARGS  extra sbatch options for both jobs, e.g. "--partition=cpu --time=02:00:00"
#   TASKS        the shards to submit, as sbatch --array takes them (default 0-<SHARDS-1>)
#
# Resubmit a failed shard alone, with the same sweep, SHARDS and OUT, e.g. shard 3 of 8:
#   TASKS=3 scenarios/sweeps/slurm-array.sh scenarios/sweeps/ecn-kmin.toml 8
# That reruns task 3 into OUT/shards/3 and merges all 8 shards again.
set -euo pipefail
WAIT=0
if [[ "${1:-}" == --wait ]]; then
    WAIT=1
    shift
fi
SWEEP=${1:?usage: slurm-array.sh [--wait] SWEEP.toml [SHARDS]}
SHARDS=${2:-8}
if ! [[ "$SHARDS" =~ ^[1-9][0-9]*$ ]]; then
    echo "slurm-array.sh: SHARDS must be a positive whole number, not '$SHARDS'" >&2
    exit 2
fi
if [[ ! -f "$SWEEP" ]]; then
    echo "slurm-array.sh: $SWEEP: no such sweep file" >&2
    exit 2
fi
command -v sbatch >/dev/null || {
    echo "slurm-array.sh: sbatch not found: run this on a Slurm login node" >&2
    exit 2
}
NAME=$(basename "$SWEEP" .toml)
OUT=${OUT:-results/$NAME}
CPUS=${CPUS:-4}
TASKS=${TASKS:-0-$((SHARDS - 1))}
if ! [[ "$CPUS" =~ ^[1-9][0-9]*$ ]]; then
    echo "slurm-array.sh: CPUS must be a positive whole number, not '$CPUS'" >&2
    exit 2
fi
# Slurm accepts a task asking more CPUs than any node has, and it then waits forever
# (reason PartitionConfig): refuse it here.
MOST=$(sinfo -h -N -o %c 2>/dev/null | tr -dc '0-9\n' | sort -n | tail -n 1 || true)
if [[ -n "$MOST" ]] && ((CPUS > MOST)); then
    echo "slurm-array.sh: CPUS=$CPUS, but no node has more than $MOST CPUs: set CPUS=$MOST or fewer" >&2
    exit 2
fi
if [[ -z "${SIM:-}" ]]; then
    cargo build --release --quiet
    SIM=${CARGO_TARGET_DIR:-target}/release/sim
fi
mkdir -p "$OUT/shards" "$OUT/logs"
# Absolute paths: the jobs run on other nodes, from the directory sbatch was called in.
abs() { echo "$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"; }
SIM=$(abs "$SIM")
SWEEP=$(abs "$SWEEP")
OUT=$(cd "$OUT" && pwd)
# sbatch --wrap runs its command with /bin/sh: quote each word for any POSIX shell.
q() { printf "'%s'" "${1//\'/\'\\\'\'}"; }
# The task's shard is its array index; its threads are the CPUs Slurm gave it.
TASK="$(q "$SIM") sweep $(q "$SWEEP") --shard \"\$SLURM_ARRAY_TASK_ID\"/$SHARDS"
TASK+=" --jobs \"\${SLURM_CPUS_PER_TASK:-$CPUS}\" --out $(q "$OUT/shards")/\"\$SLURM_ARRAY_TASK_ID\" -q"
# Every shard by name, not a glob: a missing one is named, a stale extra one is not read.
MERGE_CMD="$(q "$SIM") merge --out $(q "$OUT/merged")"
for ((i = 0; i < SHARDS; i++)); do MERGE_CMD+=" $(q "$OUT/shards/$i")"; done
# shellcheck disable=SC2086 # SBATCH_ARGS is a list of options
ARRAY=$(sbatch --parsable ${SBATCH_ARGS:-} --job-name="sweep-$NAME" --array="$TASKS" \
    --cpus-per-task="$CPUS" --output="$OUT/logs/%A_%a.out" --wrap="$TASK")
ARRAY=${ARRAY%%;*} # "id;cluster" on a multi-cluster site
echo "submitted array $ARRAY (tasks $TASKS of $SHARDS shards); logs in $OUT/logs"
MERGE_ARGS=(--job-name="sweep-$NAME-merge" --dependency="afterany:$ARRAY"
    --output="$OUT/logs/merge_%j.out" --wrap="$MERGE_CMD")
if [[ $WAIT == 0 ]]; then
    # shellcheck disable=SC2086
    MERGE=$(sbatch --parsable ${SBATCH_ARGS:-} "${MERGE_ARGS[@]}")
    echo "submitted merge ${MERGE%%;*} after it; results in $OUT/merged"
    exit 0
fi
# sbatch --wait prints the merge's id at once, then stays until the merge has ended.
# shellcheck disable=SC2086
exec 3< <(sbatch --parsable --wait ${SBATCH_ARGS:-} "${MERGE_ARGS[@]}" || true)
read -r MERGE <&3 || true
MERGE=${MERGE%%;*}
if ! [[ "$MERGE" =~ ^[0-9]+$ ]]; then
    echo "slurm-array.sh: the merge job was not submitted; array $ARRAY is queued" >&2
    exit 1
fi
echo "submitted merge $MERGE after it; waiting for it to end"
cat <&3 >/dev/null
exec 3<&-
# Its end as the scheduler saw it, not sbatch's exit code alone: sbatch --wait exits 0 for a
# merge cancelled before it started.
INFO=$(scontrol -o show job "$MERGE" 2>/dev/null || true)
STATE=$(grep -o 'JobState=[A-Z_]*' <<<"$INFO" | head -n 1 | cut -d= -f2 || true)
CODE=$(grep -o ' ExitCode=[0-9]*' <<<"$INFO" | head -n 1 | cut -d= -f2 || true)
case "$STATE" in
COMPLETED) rc=0 ;;
FAILED) rc=${CODE:-1} && [[ $rc != 0 ]] || rc=1 ;; # 0 here: killed by a signal
"")
    echo "slurm-array.sh: merge $MERGE is no longer known to Slurm: see $OUT/logs/merge_$MERGE.out" >&2
    exit 1
    ;;
*)
    echo "slurm-array.sh: merge $MERGE ended $STATE (it did not run to its end)" >&2
    exit 1
    ;;
esac
if [[ $rc == 0 ]]; then
    echo "merged: results in $OUT/merged"
else
    echo "slurm-array.sh: merge $MERGE exited $rc: see $OUT/logs/merge_$MERGE.out and the shards' logs" >&2
fi
exit "$rc"
