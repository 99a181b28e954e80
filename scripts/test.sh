#!/usr/bin/env bash
# Installs what is missing, builds everything, and runs every test with ctest.
#   scripts/test.sh              all tests
#   scripts/test.sh -L unit      extra arguments go to ctest
# Tests labelled `gpu` skip themselves (exit code 77 -> "skipped") where no GPU exists.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
COMMBENCH_CMAKE_ARGS=(-DCOMMBENCH_BUILD_TESTS=ON)

commbench_install_packages
commbench_build
commbench_mpi_environment

(cd "$COMMBENCH_BUILD" && ctest --output-on-failure -j "$(nproc 2>/dev/null || echo 2)" --timeout 900 "$@")

# The build without MPI is what runs on a GPU node that has no MPI (one process, -g N
# GPUs): keep it building and passing its tests too.
commbench_log "configuration without MPI"
COMMBENCH_BUILD="$COMMBENCH_ROOT/build-nompi"
COMMBENCH_CMAKE_ARGS=(-DCOMMBENCH_BUILD_TESTS=ON -DCOMMBENCH_WITH_MPI=OFF -DCOMMBENCH_BUILD_MICROBENCH=OFF)
commbench_build
(cd "$COMMBENCH_BUILD" && ctest --output-on-failure -j "$(nproc 2>/dev/null || echo 2)" --timeout 900 "$@")
