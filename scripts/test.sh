#!/usr/bin/env bash
# Installs what is missing, builds everything, and runs every test with ctest.
#   scripts/test.sh              all tests
#   scripts/test.sh -L unit      extra arguments go to ctest (of the first three stages)
# Stages: default build; build without MPI; ASan+UBSan build; libFuzzer targets.
# COMMBENCH_SANITIZE=0 / COMMBENCH_FUZZ=0 skip the last two (quick local runs).
# Tests labelled `gpu` skip themselves (exit code 77 -> "skipped") where no GPU exists.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
COMMBENCH_CMAKE_ARGS=(-DCOMMBENCH_BUILD_TESTS=ON)
# Only the tests need a browser: the HTML report is checked in headless Chromium
# (tests/integration/test_plots.py). Heavy, so not in run.sh's list.
COMMBENCH_PACKAGES+=(chromium)
# The files every command writes are validated against docs/schema/records.schema.json
# (tests/integration/test_results.py) with a real JSON Schema implementation.
COMMBENCH_PACKAGES+=(python3-jsonschema)
# A real Slurm for tests/integration/test_slurm.py (scripts/slurm-cluster.sh): its daemons,
# munge, and ip/tc for the namespaced nodes and their links.
COMMBENCH_PACKAGES+=(slurm-wlm munge iproute2)
# CPack's .deb (tests/integration/test_package.py): dpkg-shlibdeps finds its dependencies.
COMMBENCH_PACKAGES+=(dpkg-dev file)

commbench_install_packages
commbench_build
commbench_mpi_environment

(cd "$COMMBENCH_BUILD" && ctest --output-on-failure -j "$(nproc 2>/dev/null || echo 2)" --timeout 900 "$@")

# The build without MPI is what runs on a GPU node that has no MPI (one process, -g N
# GPUs): keep it building and passing its tests too. It also leaves out hwloc and
# libibverbs, so the paths that say "built without ..." are exercised.
commbench_log "configuration without MPI, hwloc and libibverbs"
COMMBENCH_BUILD="$COMMBENCH_ROOT/build-nompi"
COMMBENCH_CMAKE_ARGS=(-DCOMMBENCH_BUILD_TESTS=ON -DCOMMBENCH_WITH_MPI=OFF -DCOMMBENCH_WITH_HWLOC=OFF
                      -DCOMMBENCH_WITH_IBVERBS=OFF -DCOMMBENCH_BUILD_MICROBENCH=OFF)
commbench_build
(cd "$COMMBENCH_BUILD" && ctest --output-on-failure -j "$(nproc 2>/dev/null || echo 2)" --timeout 900 "$@")

# AddressSanitizer + UndefinedBehaviorSanitizer over the same tests but those labelled speed
# or slurm (below), the MPI integration runs included (the instrumented binary is what
# they launch). Leak checking is off:
# Open MPI keeps allocations until exit by design. COMMBENCH_SANITIZE=0 skips this stage.
if [ "${COMMBENCH_SANITIZE:-1}" != 0 ]; then
  commbench_log "configuration with ASan and UBSan"
  COMMBENCH_BUILD="$COMMBENCH_ROOT/build-sanitize"
  # Not here: tests that judge speed (label speed), meaningless under ASan's slowdown, and
  # the Slurm clusters (label slurm), whose programs the other integration tests run under
  # ASan already. They ran one after another at the end of the stage.
  sanitize_skips="slurm|speed"
  COMMBENCH_BUILD_TYPE=RelWithDebInfo
  sanitize="-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined"
  COMMBENCH_CMAKE_ARGS=(-DCOMMBENCH_BUILD_TESTS=ON -DCOMMBENCH_WITH_CUDA=OFF -DCOMMBENCH_BUILD_MICROBENCH=OFF
                        "-DCMAKE_CXX_FLAGS=$sanitize" "-DCMAKE_EXE_LINKER_FLAGS=-fsanitize=address,undefined")
  commbench_build
  (cd "$COMMBENCH_BUILD" &&
   ASAN_OPTIONS=detect_leaks=0:abort_on_error=0 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
     ctest --output-on-failure -j "$(nproc 2>/dev/null || echo 2)" --timeout 900 -LE "$sanitize_skips" "$@")
fi

# libFuzzer over every parser of user input, each for COMMBENCH_FUZZ_SECONDS (20) from its
# seed corpus in fuzz/corpus/ (crashes found earlier stay there as regression inputs).
# COMMBENCH_FUZZ=0 skips this stage.
if [ "${COMMBENCH_FUZZ:-1}" != 0 ]; then
  commbench_log "fuzz targets (clang, libFuzzer)"
  COMMBENCH_BUILD="$COMMBENCH_ROOT/build-fuzz"
  COMMBENCH_BUILD_TYPE=RelWithDebInfo
  COMMBENCH_CMAKE_ARGS=(-DCMAKE_CXX_COMPILER=clang++ -DCOMMBENCH_WITH_MPI=OFF -DCOMMBENCH_WITH_CUDA=OFF
                        -DCOMMBENCH_BUILD_TESTS=OFF -DCOMMBENCH_BUILD_MICROBENCH=OFF -DCOMMBENCH_BUILD_FUZZERS=ON
                        "-DCOMMBENCH_FUZZ_SECONDS=${COMMBENCH_FUZZ_SECONDS:-20}"
                        "-DCMAKE_CXX_FLAGS=-fsanitize=fuzzer-no-link,address,undefined")
  commbench_build
  (cd "$COMMBENCH_BUILD" && ctest --output-on-failure -j "$(nproc 2>/dev/null || echo 2)" --timeout 900 -L fuzz)
fi
