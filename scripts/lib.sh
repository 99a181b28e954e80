# Shared by run.sh and test.sh: installs what the build needs, configures and builds.
# Sourced, not executed.

COMMBENCH_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
COMMBENCH_BUILD="${COMMBENCH_BUILD:-$COMMBENCH_ROOT/build}"

# Debian packages the build and tests use. hwloc and ibverbs are for the topology work;
# they are optional to the build (COMMBENCH_WITH_*=AUTO) but installed so it is complete.
COMMBENCH_PACKAGES=(build-essential cmake pkg-config python3 libopenmpi-dev openmpi-bin
                    libcli11-dev libfmt-dev libgtest-dev libgmock-dev libbenchmark-dev nlohmann-json3-dev
                    libhwloc-dev libibverbs-dev clang libclang-rt-14-dev)

commbench_log() { printf '[commbench] %s\n' "$*" >&2; }

commbench_install_packages() {
  if ! command -v dpkg-query >/dev/null 2>&1; then
    commbench_log "not a Debian-like system: install the equivalents of: ${COMMBENCH_PACKAGES[*]}"
    commbench_log "continuing; CMake will say what it cannot find"
    return 0
  fi
  local missing=()
  for pkg in "${COMMBENCH_PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  if [ "$(id -u)" -ne 0 ]; then
    commbench_log "missing Debian packages: ${missing[*]}"
    commbench_log "install them with: sudo apt-get install -y ${missing[*]}"
    exit 2
  fi
  commbench_log "installing: ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

# Open MPI refuses to start as root unless told that this is intended (containers, CI).
commbench_mpi_environment() {
  if [ "$(id -u)" -eq 0 ]; then
    export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
  fi
}

commbench_build() {
  local jobs
  jobs="$(nproc 2>/dev/null || echo 2)"
  cmake -S "$COMMBENCH_ROOT" -B "$COMMBENCH_BUILD" -DCMAKE_BUILD_TYPE="${COMMBENCH_BUILD_TYPE:-Release}" \
        "${COMMBENCH_CMAKE_ARGS[@]}" >/dev/null
  cmake --build "$COMMBENCH_BUILD" -j "$jobs" "$@"
}
