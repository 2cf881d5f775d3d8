#!/usr/bin/env bash
# Regenerate link/symbol-order.txt: the functions a run executes, for the linker to lay out
# first and together (build.rs). A run executes under 2 MB of the binary's 5.3 MB of code, but
# compiled in crate order that code is spread over all of it, and the kernel maps a file's
# pages in 64 KiB runs around each one a run touches (its fault-around), so nearly the whole
# text was resident. Laid out together it is not (docs/performance.md, "Memory").
#
# It runs a few shipped scenarios and benches under valgrind's callgrind, which names every
# function executed, however rarely (a sampling profiler misses the ones run once, and those
# are what spread the text). The runs without plots come first, hottest first (by the
# instructions executed in the function itself); then what only a run that draws its plots, or
# `sim check`, executes. The names are in Rust's v0 mangling (.cargo/config.toml), which does
# not move when code around a function changes. A function missing from the list (new code,
# or a build whose crate disambiguators differ: another rustc, another version of the project)
# is laid out after the list, as it was before: the file only ever moves code, never changes
# it. Regenerate it after a toolchain update or a version bump, and now and then as code is
# added.
#
# Usage: link/symbol-order.sh   (needs valgrind; builds sim in release mode first)
#        link/symbol-order.sh --check [SIM]   (exit 1 when the list has lost the hot loop)
#        link/symbol-order.sh --check-names [SIM]   (the same, for a build with other features)
#
# --check reads the symbols of SIM (default target/release/sim) with nm. A hot function renamed
# since the list was made (a new impl block in its module shifts the index v0 mangling names
# its methods by; a new instance of the event loop) is laid out after the list, away from the
# rest of the hot code: the k=64 run's CPU moved by about 5 % so (benches/README.md,
# 2026-12-07). So when SIM has nearly all of the list's names (the same rustc and project
# made both) but lacks any of its first ten, the check fails and says to regenerate the list.
# With another rustc the names differ throughout: nothing to check, and it says so.
#
# --check-names compares the names without their crates' disambiguators (v0's `Cs<hash>_`) and
# back-references (`B<offset>_`, which move when a disambiguator's length does): what a build
# with other features has in common with the default one, since features and dev-dependencies
# change every crate's hash and nothing else. So CI checks the binary the test build made
# (`cargo test --release --all-features`) for renamed hot functions, without building the
# default binary again. Whether a binary is laid out by the list is --check's question, which
# the benchmark scripts ask.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
if [ "${1:-}" = --check ] || [ "${1:-}" = --check-names ]; then
  sim=${2:-$root/target/release/sim}
  list=$root/link/symbol-order.txt
  command -v nm >/dev/null || { echo "symbol-order check: needs nm (binutils)" >&2; exit 2; }
  [ -f "$sim" ] || { echo "symbol-order check: no $sim (build it first: cargo build --release)" >&2; exit 2; }
  syms=$(mktemp "${TMPDIR:-/tmp}/symbols.XXXXXX")
  names=$(mktemp "${TMPDIR:-/tmp}/names.XXXXXX")
  trap 'rm -f "$syms" "$names"' EXIT
  if [ "$1" = --check-names ]; then
    bare() { sed -E 's/Cs[0-9A-Za-z]+_/C_/g; s/B[0-9A-Za-z]*_/B_/g'; }
  else
    bare() { cat; }
  fi
  nm "$sim" | awk '{ print $NF }' | bare | sort -u >"$syms"
  bare <"$list" >"$names"
  list=$names
  total=$(wc -l <"$list")
  present=$(grep -cxFf "$syms" "$list" || true)
  if [ $((present * 10)) -lt $((total * 9)) ]; then
    if [ "$1" = --check-names ]; then
      echo "symbol-order check: $sim has $present of the list's $total names, crate hashes aside (another rustc, or another version of the project): not checked"
    else
      echo "symbol-order check: $sim has $present of the list's $total names (another rustc, a build with other features, such as the one cargo test --release --all-features leaves in target/release, or of another version of the project): not checked"
    fi
    exit 0
  fi
  missing=$(head -10 "$list" | grep -vxFf "$syms" || true)
  if [ -n "$missing" ]; then
    echo "symbol-order check: $sim lacks $(echo "$missing" | wc -l) of the ten hottest functions" \
      "link/symbol-order.txt names (renamed since it was made), so they are laid out apart from" \
      "the rest of the hot code; regenerate the list: link/symbol-order.sh" >&2
    echo "$missing" >&2
    exit 1
  fi
  echo "symbol-order check: $sim has the list's ten hottest functions ($present of $total names$([ "$1" = --check-names ] && echo ", crate hashes aside"))"
  exit 0
fi
command -v valgrind >/dev/null || { echo "needs valgrind (apt-get install valgrind)" >&2; exit 2; }
cargo build --release
sim=$root/target/release/sim
work=$(mktemp -d "${TMPDIR:-/tmp}/symbol-order.XXXXXX")
trap 'rm -rf "$work"' EXIT

# Exit code 5 is a run stopped by its limit, as the cut run below is: a result, not a failure.
profile() {
  local name=$1 rc=0; shift
  valgrind --tool=callgrind --demangle=no --callgrind-out-file="$work/$name.cg" \
    "$sim" "$@" >"$work/$name.log" 2>&1 || rc=$?
  case $rc in 0|5) ;; *) tail -5 "$work/$name.log" >&2; exit 1 ;; esac
}
profile 1-incast run benches/i128-incast.toml --out "$work/o1" -q --plots none
profile 1-spray run benches/p128-uec.toml --out "$work/o2" -q --plots none
profile 1-pfc run scenarios/pfc-incast.toml --out "$work/o3" -q --plots none
profile 1-cc run scenarios/cc-compare.toml --out "$work/o4" -q --plots none
# A run cut into partitions, its first 30 us (the runs above are too small or too sparse to
# be cut, so they never execute the partitions' event loop, which large fabrics spend their
# time in).
profile 1-cut run benches/p1024-uec.toml --set run.max_time=30us --out "$work/o6" -q --plots none --threads 2
profile 2-plots run scenarios/leaf-spine.toml --out "$work/o5" -q
profile 2-check check scenarios/leaf-spine.toml

# Each function's own instructions (callgrind's format: `fn=(id) name` starts a function's
# lines, `ob=` names the object they are in, a cost line after `calls=` is the callee's, not
# its own; ids are defined once, with the name, on fn=, cfn=, ob= or cob= lines).
for f in "$work"/*.cg; do
  g=$(basename "$f" .cg); g=${g%%-*}
  awk -v group="$g" '
    function id(s,   m) { m = s; sub(/^\(/, "", m); sub(/\).*/, "", m); return m }
    function named(s) { return s ~ /\) / ? substr(s, index(s, ") ") + 2) : "" }
    /^c?ob=/ { v = substr($0, index($0, "=") + 1); i = id(v); n = named(v); if (n != "") obs[i] = n
               if ($0 ~ /^ob=/) ob = obs[i]; next }
    /^c?fn=/ { v = substr($0, index($0, "=") + 1); i = id(v); n = named(v); if (n != "") fns[i] = n
               if ($0 ~ /^fn=/) { fn = (ob ~ /\/sim$/) ? fns[i] : ""; if (fn != "") cost[fn] += 0 }
               next }
    /^calls=/ { skip = 1; next }
    /^[0-9+*-]/ { if (fn == "") next; if (skip) { skip = 0; next } cost[fn] += $2; next }
    END { for (f in cost) print group, cost[f], f }
  ' "$f"
done | sed "s/'[0-9]*\$//" | awk 'NF == 3 && $3 !~ /^0x/ { c[$1 " " $3] += $2 } END { for (k in c) { split(k, a, " "); print a[1], c[k], a[2] } }' |
  sort -k1,1n -k2,2nr | awk '!seen[$3]++ { print $3 }' >link/symbol-order.txt
echo "link/symbol-order.txt: $(wc -l <link/symbol-order.txt) functions"
