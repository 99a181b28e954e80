#!/usr/bin/env bash
# The main job: install what is missing, build, probe the topology (bench-topology) and
# run bench-collectives, whose rows carry the theoretical busbw the probe implies.
#   scripts/run.sh                  default sweep (8 B - 64 MiB, allreduce, allgather,
#                                   reducescatter, broadcast) with --check
#   scripts/run.sh -e 1M --op all   extra flags go to bench-collectives
# Environment: COMMBENCH_NP (ranks; default one per GPU, or 4 on a machine without GPUs),
# COMMBENCH_RESULTS (default results/local).
# Writes the tables to stdout and CSV + JSON of both under results/local/.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
COMMBENCH_CMAKE_ARGS=(-DCOMMBENCH_BUILD_TESTS=OFF -DCOMMBENCH_BUILD_MICROBENCH=OFF)

commbench_install_packages
commbench_build --target bench-collectives bench-topology
commbench_mpi_environment

np="$(commbench_default_ranks)"
results="${COMMBENCH_RESULTS:-$COMMBENCH_ROOT/results/local}"
mkdir -p "$results"

# A degraded device or an odd node (exit 1) is worth knowing but does not stop the
# benchmark; bad input or a runtime error does.
commbench_log "probing the topology of this node (bench-topology)"
topology_rc=0
mpirun -q --oversubscribe -np "$np" "$COMMBENCH_BUILD/bench/bench-topology" \
  --csv "$results/topology-links.csv" --json "$results/topology.json" --force || topology_rc=$?
if [ "$topology_rc" -eq 1 ]; then
  commbench_log "bench-topology found a degraded device or an odd node (see FAIL lines above); continuing"
elif [ "$topology_rc" -ne 0 ]; then
  exit "$topology_rc"
fi

# --backend auto takes NCCL on GPUs when this build has it and a CUDA device is present,
# and the MPI host backend on local ranks otherwise (more ranks than cores is fine:
# --oversubscribe). The table's header names the backend that ran.
backend=auto
commbench_log "running bench-collectives on $np local ranks (backend: $backend)"
mpirun -q --oversubscribe -np "$np" "$COMMBENCH_BUILD/bench/bench-collectives" \
  --backend "$backend" --check \
  --csv "$results/collectives.csv" --json "$results/collectives.json" --force "$@"
commbench_log "wrote $results/collectives.csv and $results/collectives.json"
