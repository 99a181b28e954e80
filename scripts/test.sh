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

cd "$COMMBENCH_BUILD"
ctest --output-on-failure -j "$(nproc 2>/dev/null || echo 2)" --timeout 900 "$@"
