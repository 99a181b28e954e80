#!/usr/bin/env bash
# Installs what is missing, builds everything, and runs every test with ctest.
#   scripts/test.sh              all tests
#   scripts/test.sh -L unit      extra arguments go to ctest (of the first three stages)
# Stages: default build; build without MPI; ASan+UBSan build; libFuzzer targets.
# COMMBENCH_SANITIZE=0 / COMMBENCH_FUZZ=0 skip the last two (quick local runs).
# Tests labelled `gpu` skip themselves (exit code 77 -> "skipped") where no GPU exists.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
# Warnings in commbench's own sources are errors in the builds here but the sanitizers'
# (COMMBENCH_WERROR: cmake/CommbenchWarnings.cmake), so the build stays free of them.
COMMBENCH_CMAKE_ARGS=(-DCOMMBENCH_BUILD_TESTS=ON -DCOMMBENCH_WERROR=ON)
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

JOBS="$(nproc 2>/dev/null || echo 2)"

# Each stage's wall time, said at the end: what to cut when CI grows.
stage_times=()
stage_began=$SECONDS
stage_done() {
  stage_times+=("$1 $((SECONDS - stage_began)) s")
  stage_began=$SECONDS
}
trap 'commbench_log "stage times: ${stage_times[*]/%/,} total ${SECONDS} s"' EXIT

# The build without MPI is what runs on a GPU node that has no MPI (one process, -g N
# GPUs): keep it building and passing its tests too. It also leaves out hwloc and
# libibverbs, so the paths that say "built without ..." are exercised.
nompi_configuration() {
  COMMBENCH_BUILD="$COMMBENCH_ROOT/build-nompi"
  COMMBENCH_CMAKE_ARGS=(-DCOMMBENCH_BUILD_TESTS=ON -DCOMMBENCH_WERROR=ON -DCOMMBENCH_WITH_MPI=OFF -DCOMMBENCH_WITH_HWLOC=OFF
                        -DCOMMBENCH_WITH_IBVERBS=OFF -DCOMMBENCH_BUILD_MICROBENCH=OFF)
}

# The sanitizer and fuzz builds: -O1 and line tables only (what their reports need) compile
# in about half the time of -O2 -g with ASan, and check the same.
checking_optimization="-O1 -g1 -DNDEBUG"

# AddressSanitizer + UndefinedBehaviorSanitizer over the same tests but those labelled speed,
# slurm or package (below), the MPI integration runs included (the instrumented binary is
# what they launch). Leak checking is off: Open MPI keeps allocations until exit by design.
# COMMBENCH_SANITIZE=0 skips this stage.
sanitize_configuration() {
  COMMBENCH_BUILD="$COMMBENCH_ROOT/build-sanitize"
  COMMBENCH_BUILD_TYPE=RelWithDebInfo
  local sanitize="-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined"
  # No -Werror here: GCC's manual advises against it with sanitizers, which make its
  # flow-based warnings (-Wmaybe-uninitialized) report false positives.
  COMMBENCH_CMAKE_ARGS=(-DCOMMBENCH_BUILD_TESTS=ON -DCOMMBENCH_WITH_CUDA=OFF -DCOMMBENCH_BUILD_MICROBENCH=OFF
                        "-DCMAKE_CXX_FLAGS=$sanitize" "-DCMAKE_EXE_LINKER_FLAGS=-fsanitize=address,undefined"
                        "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=$checking_optimization")
}

# libFuzzer over every parser of user input, each for COMMBENCH_FUZZ_SECONDS (20) from its
# seed corpus in fuzz/corpus/ (crashes found earlier stay there as regression inputs).
# COMMBENCH_FUZZ=0 skips this stage.
fuzz_configuration() {
  COMMBENCH_BUILD="$COMMBENCH_ROOT/build-fuzz"
  COMMBENCH_BUILD_TARGETS=(--target fuzzers)  # not the commands: only the parsers are fuzzed
  COMMBENCH_BUILD_TYPE=RelWithDebInfo
  COMMBENCH_CMAKE_ARGS=(-DCMAKE_CXX_COMPILER=clang++ -DCOMMBENCH_WERROR=ON -DCOMMBENCH_WITH_MPI=OFF -DCOMMBENCH_WITH_CUDA=OFF
                        -DCOMMBENCH_BUILD_TESTS=OFF -DCOMMBENCH_BUILD_MICROBENCH=OFF -DCOMMBENCH_BUILD_FUZZERS=ON
                        "-DCOMMBENCH_FUZZ_SECONDS=${COMMBENCH_FUZZ_SECONDS:-20}"
                        "-DCMAKE_CXX_FLAGS=-fsanitize=fuzzer-no-link,address,undefined"
                        "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=$checking_optimization")
}

later_configurations=(nompi)
[ "${COMMBENCH_SANITIZE:-1}" != 0 ] && later_configurations+=(sanitize)
[ "${COMMBENCH_FUZZ:-1}" != 0 ] && later_configurations+=(fuzz)

# The later configurations build one after another, each in a subshell (their settings
# stay there), output in build-logs/<name>.log; the first that fails is named in
# build-logs/failed.
build_later_configurations() {
  local name
  mkdir -p "$COMMBENCH_ROOT/build-logs"
  : > "$COMMBENCH_ROOT/build-logs/failed"
  for name in "${later_configurations[@]}"; do
    rm -f "$COMMBENCH_ROOT/build-logs/$name.done"
    ( COMMBENCH_BUILD_TARGETS=(); "${name}_configuration"; commbench_build "${COMMBENCH_BUILD_TARGETS[@]}" ) \
      > "$COMMBENCH_ROOT/build-logs/$name.log" 2>&1 || {
      echo "$name" > "$COMMBENCH_ROOT/build-logs/failed"; return 1; }
    : > "$COMMBENCH_ROOT/build-logs/$name.done"
  done
}

# Waits until the background builds (process $builds) have built configuration $1.
wait_for_configuration() {
  until [ -e "$COMMBENCH_ROOT/build-logs/$1.done" ]; do
    if ! kill -0 "$builds" 2>/dev/null; then
      wait "$builds" || later_builds_failed
      [ -e "$COMMBENCH_ROOT/build-logs/$1.done" ] && return 0
      commbench_log "the builds ended without the $1 configuration"
      exit 1
    fi
    sleep 2
  done
}

later_builds_failed() {
  local failed
  failed="$(cat "$COMMBENCH_ROOT/build-logs/failed")"
  tail -n 60 "$COMMBENCH_ROOT/build-logs/$failed.log" >&2
  commbench_log "the $failed configuration did not build (build-logs/$failed.log)"
  exit 1
}

ctest_here() {
  (cd "$COMMBENCH_BUILD" && ctest --output-on-failure -j "$JOBS" --timeout 900 "$@")
}

commbench_install_packages
stage_done "packages"
commbench_build
stage_done "default build"
commbench_mpi_environment
default_build="$COMMBENCH_BUILD"

nompi_tests() {
  commbench_log "configuration without MPI, hwloc and libibverbs"
  nompi_configuration
  ctest_here "$@"
  stage_done "no-MPI tests"
}

# Not here: tests that judge speed (label speed), meaningless under ASan's slowdown; the
# Slurm clusters (label slurm), whose programs the other integration tests run under ASan
# already; and the package (label package): packing the instrumented programs with their
# debug information takes minutes, and what it installs is the code the other tests run.
sanitize_tests() {
  [ "${COMMBENCH_SANITIZE:-1}" != 0 ] || return 0
  commbench_log "configuration with ASan and UBSan"
  sanitize_configuration
  ASAN_OPTIONS=detect_leaks=0:abort_on_error=0 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    ctest_here -LE "slurm|speed|package" "$@"
  stage_done "ASan tests"
}

if [ $# -eq 0 ]; then
  # The later builds keep compilers busy for minutes; the tests are mostly processes
  # waiting (launches, timeouts, heartbeats). So the builds run meanwhile at the lowest
  # priority: beside the default tests that do not judge speed, then each configuration's
  # tests as soon as it is built, beside the builds after it. The tests that judge speed
  # (label speed) run once every build is done, on a quiet machine.
  commbench_log "building ${later_configurations[*]} at nice 19 (build-logs/) beside the tests"
  ( renice -n 19 -p "$BASHPID" > /dev/null; build_later_configurations ) &
  builds=$!
  if ! ctest_here -LE speed; then
    # The failed tests are the verdict; waiting leaves no build running after this script.
    wait "$builds" || exit 1
    exit 1
  fi
  stage_done "default tests but speed"
  wait_for_configuration nompi
  stage_done "no-MPI build (what was left)"
  nompi_tests
  if [ "${COMMBENCH_SANITIZE:-1}" != 0 ]; then
    wait_for_configuration sanitize
    stage_done "ASan build (what was left)"
    sanitize_tests
  fi
  wait "$builds" || later_builds_failed
  stage_done "remaining builds"
  COMMBENCH_BUILD="$default_build"
  ctest_here -L speed
  stage_done "default tests of speed"
else
  ctest_here "$@"
  stage_done "default tests"
  build_later_configurations || later_builds_failed
  stage_done "later builds"
  nompi_tests "$@"
  sanitize_tests "$@"
fi

if [ "${COMMBENCH_FUZZ:-1}" != 0 ]; then
  commbench_log "fuzz targets (clang, libFuzzer)"
  fuzz_configuration
  ctest_here -L fuzz
  stage_done "fuzz runs"
fi
