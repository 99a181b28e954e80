#!/usr/bin/env bash
# The main job: install what is missing, build every program, probe the topology
# (bench-topology) and run bench-collectives, whose rows carry the theoretical busbw the
# probe implies.
#   scripts/run.sh                  default sweep (8 B - 64 MiB, allreduce, allgather,
#                                   reducescatter, broadcast) with --check
#   scripts/run.sh -e 1M --op all   extra flags go to bench-collectives
# Environment: COMMBENCH_NP (ranks; default one per GPU, or 4 on a machine without GPUs),
# COMMBENCH_RESULTS (default results/local).
# Each run writes into a folder of its own, results/local/<UTC time>/ (earlier runs are
# kept), and results/local/latest points at the newest: the tables go to stdout, CSV + JSON
# of both and the plot of the sweep (collectives.png) into the folder. It ends by printing
# commands of README.md's table to try next, as this machine starts them.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
COMMBENCH_CMAKE_ARGS=(-DCOMMBENCH_BUILD_TESTS=OFF -DCOMMBENCH_BUILD_MICROBENCH=OFF)

# Every program README.md names: the six commands and the example command.
COMMBENCH_PROGRAMS=(bench-collectives bench-topology bench-patterns bench-replay bench-p2p bench-validate
                    bench-groups)

commbench_install_packages
commbench_build --target "${COMMBENCH_PROGRAMS[@]}"
commbench_mpi_environment

np="$(commbench_default_ranks)"
results_root="${COMMBENCH_RESULTS:-$COMMBENCH_ROOT/results/local}"
results="$(commbench_new_results_folder "$results_root")"
commbench_log "results of this run: $results ($results_root/latest points here)"
mpirun_prefix="$(commbench_mpirun_prefix "$np")"

# A degraded device or an odd node (exit 1) is worth knowing but does not stop the
# benchmark; bad input or a runtime error does.
commbench_log "probing the topology of this node (bench-topology)"
topology_rc=0
$mpirun_prefix -q "$COMMBENCH_BUILD/bench/bench-topology" \
  --csv "$results/topology-links.csv" --json "$results/topology.json" || topology_rc=$?
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
bench_rc=0
$mpirun_prefix -q "$COMMBENCH_BUILD/bench/bench-collectives" \
  --backend "$backend" --check \
  --csv "$results/collectives.csv" --json "$results/collectives.json" "$@" || bench_rc=$?
commbench_log "wrote $results/collectives.csv and $results/collectives.json"

# The picture of the run, also when a check or threshold failed (exit 1) or the run was
# interrupted (130, 143): the rows measured are what the user wants to see. The JSON
# carries the provenance for the title.
plot_input="$results/collectives.json"
[ -f "$plot_input" ] || plot_input="$results/collectives.csv"
case "$bench_rc" in 0|1|130|143) plot_wanted=1 ;; *) plot_wanted=0 ;; esac
if [ "$plot_wanted" = 1 ] && [ -f "$plot_input" ]; then
  "$COMMBENCH_ROOT/scripts/plot" "$plot_input" -o "$results/collectives.png"
  commbench_log "plot of this run: $results/collectives.png (scripts/plot, docs/plots.md)"
fi
[ "$bench_rc" -eq 0 ] && commbench_print_next_steps "$mpirun_prefix" "$results_root/latest"
exit "$bench_rc"
