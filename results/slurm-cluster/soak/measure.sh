#!/bin/bash
# Healthy soaks on the project's Slurm test cluster, for the false-alarm rate of the soak's
# dip rule (docs/validate.md, "Soak runs"): RUNS soaks of SECONDS each, nothing injected,
# each run's console output and JSON kept under healthy/, then a table of every run's
# intervals, pair readings, spread, low readings and events (summary.txt).
#
#   results/slurm-cluster/soak/measure.sh [RUNS] [SECONDS]     # as root, from anywhere
#
# Needs the build (build/bench/bench-validate) and a machine that can host the cluster
# (scripts/slurm-cluster.sh says what it lacks otherwise).
set -euo pipefail
runs="${1:-6}"
seconds="${2:-60}"
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../../.." && pwd)"
"$root/scripts/slurm-cluster.sh" up
mkdir -p "$here/healthy"
cd "$here/healthy"
for run in $(seq 1 "$runs"); do
  # A soak that reports an event exits 1: that is a false alarm to count, not a failure here.
  status=0
  "$root/scripts/slurm-cluster.sh" run srun --mpi=pmix -N 4 "$root/build/bench/bench-validate" --backend mpi \
    --soak "$seconds" -b 4M -n 20 -w 1 --json "healthy-$run.json" > "healthy-$run.txt" 2>&1 || status=$?
  echo "exit $status" >> "healthy-$run.txt"
done
python3 - "$here/healthy" > "$here/summary.txt" <<'PY'
import glob, json, os, sys
rows, totals = [], [0, 0, 0, 0]
for path in sorted(glob.glob(os.path.join(sys.argv[1], "healthy-*.json")),
                   key=lambda p: int(p.rsplit("-", 1)[1].split(".")[0])):
    with open(path) as f:
        doc = json.load(f)
    soak = doc["soak"]
    pairs = [r for r in doc["intervals"] if r["what"] == "pair"]
    low = sum(r["gbps"] < soak["low_below_gbps"] for r in pairs)
    row = [soak["intervals"], len(pairs), low, len(doc["events"])]
    totals = [a + b for a, b in zip(totals, row)]
    rows.append(f"{os.path.basename(path):<18} {row[0]:>9} {row[1]:>13} {100 * soak['spread']:>9.1f} "
                f"{soak['steady_gbps']:>12.3f} {row[2]:>12} {row[3]:>6}")
print(f"{'run':<18} {'intervals':>9} {'pair readings':>13} {'spread %':>9} {'steady GB/s':>12} "
      f"{'low readings':>12} {'events':>6}")
print("\n".join(rows))
print(f"{'all':<18} {totals[0]:>9} {totals[1]:>13} {'':>9} {'':>12} {totals[2]:>12} {totals[3]:>6}")
PY
cat "$here/summary.txt"
