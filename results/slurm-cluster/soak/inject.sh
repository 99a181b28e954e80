#!/bin/bash
# Soaks on the project's Slurm test cluster with a fault injected in the middle: 60 s, and
# 20 s after the soak began cb-node3's link (node) or the link between cb-node1 and
# cb-node2 (link) is shaped to 500 Mbit/s for 15 s. Keeps each run's console output, JSON
# and timeline plot, and the injection's wall-clock times, under injected/.
#
#   results/slurm-cluster/soak/inject.sh node|link     # as root, from anywhere
set -euo pipefail
kind="${1:?node or link}"
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../../.." && pwd)"
cluster="$root/scripts/slurm-cluster.sh"
case "$kind" in
  node) on=(degrade cb-node3 500mbit); off=(degrade cb-node3 off) ;;
  link) on=(degrade-link cb-node1 cb-node2 500mbit); off=(degrade-link cb-node1 cb-node2 off) ;;
  *) echo "inject.sh: node or link, not '$kind'" >&2; exit 2 ;;
esac
"$cluster" up
mkdir -p "$here/injected"
cd "$here/injected"
rm -f "$kind.json"
"$cluster" run srun --mpi=pmix -N 4 "$root/build/bench/bench-validate" --backend mpi --soak 60 -b 4M -n 20 -w 1 \
  --json "$kind.json" > "$kind.txt" 2>&1 &
soak=$!
until grep -q '^# soak:' "$kind.txt" 2>/dev/null; do sleep 0.2; done
sleep 20
echo "injected: $(date -u +%Y-%m-%dT%H:%M:%S.%NZ) $("$cluster" "${on[@]}" 2>&1)" > "$kind.injection"
sleep 15
echo "restored: $(date -u +%Y-%m-%dT%H:%M:%S.%NZ) $("$cluster" "${off[@]}" 2>&1)" >> "$kind.injection"
wait "$soak" || true
"$root/scripts/plot" "$kind.json" -o "$kind.png"
grep -E '^(soak|steady|events|FAIL|PASS|--exclude)' "$kind.txt"
cat "$kind.injection"
