# Shared by run.sh and test.sh: installs what the build needs, configures and builds.
# Sourced, not executed.

COMMBENCH_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
COMMBENCH_BUILD="${COMMBENCH_BUILD:-$COMMBENCH_ROOT/build}"

# Debian packages the build and tests use. hwloc and ibverbs are for the topology work;
# they are optional to the build (COMMBENCH_WITH_*=AUTO) but installed so it is complete.
COMMBENCH_PACKAGES=(build-essential cmake pkg-config python3 libopenmpi-dev openmpi-bin
                    libcli11-dev libfmt-dev libgtest-dev libgmock-dev libbenchmark-dev nlohmann-json3-dev
                    libpugixml-dev zlib1g-dev libsqlite3-dev
                    libhwloc-dev libibverbs-dev clang libclang-rt-14-dev
                    python3-matplotlib python3-pandas ninja-build ccache)
# python3-matplotlib and python3-pandas: scripts/plot and scripts/compare (run.sh plots its run).
# libsqlite3-dev: bench-replay reads Nsight Systems reports (nsys export --type sqlite).
# ninja-build and ccache: faster builds and rebuilds (commbench_build), used where present.

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

# Ninja where it is installed, unless the build folder was configured with another
# generator (CMake refuses to switch); ccache in front of the compilers where it is
# installed, so a rebuild of unchanged sources, in this clone or another one of the same
# tree (CCACHE_BASEDIR makes the paths relative; CCACHE_NOHASHDIR leaves the folder out of
# the hash of -g builds), is a cache hit. Neither is required.
commbench_generator_args() {
  if [ -f "$COMMBENCH_BUILD/CMakeCache.txt" ] || ! command -v ninja >/dev/null 2>&1; then
    return 0
  fi
  printf '%s\n' -G Ninja
}

commbench_launcher_args() {
  command -v ccache >/dev/null 2>&1 || return 0
  printf '%s\n' -DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_CUDA_COMPILER_LAUNCHER=ccache
}

commbench_build() {
  local jobs generator=() launcher=()
  jobs="$(nproc 2>/dev/null || echo 2)"
  mapfile -t generator < <(commbench_generator_args)
  mapfile -t launcher < <(commbench_launcher_args)
  # Read by ccache at compile time: exported here, in the shell the build runs from.
  export CCACHE_BASEDIR="$COMMBENCH_ROOT" CCACHE_NOHASHDIR=1
  cmake -S "$COMMBENCH_ROOT" -B "$COMMBENCH_BUILD" "${generator[@]}" "${launcher[@]}" \
        -DCMAKE_BUILD_TYPE="${COMMBENCH_BUILD_TYPE:-Release}" "${COMMBENCH_CMAKE_ARGS[@]}" >/dev/null
  cmake --build "$COMMBENCH_BUILD" -j "$jobs" "$@"
}

# GPUs on this node, as `nvidia-smi -L` lists them (0 without a driver). The one place the
# scripts read the device count: tests put a stand-in nvidia-smi first on PATH.
commbench_gpu_count() {
  command -v nvidia-smi >/dev/null 2>&1 || { echo 0; return 0; }
  local listing
  listing="$(nvidia-smi -L 2>/dev/null)" || { echo 0; return 0; }
  printf '%s\n' "$listing" | awk '/^GPU / { n++ } END { print n + 0 }'
}

# Ranks of the main job: COMMBENCH_NP when set; else one per GPU on GPU machines (NCCL
# cannot put two ranks on one GPU); else 4 host ranks.
commbench_default_ranks() {
  if [ -n "${COMMBENCH_NP:-}" ]; then
    case "$COMMBENCH_NP" in
      ''|*[!0-9]*|0) commbench_log "COMMBENCH_NP='$COMMBENCH_NP' is not a positive whole number"; return 2 ;;
    esac
    echo "$COMMBENCH_NP"
    return 0
  fi
  local gpus
  gpus="$(commbench_gpu_count)"
  if [ "$gpus" -gt 0 ]; then echo "$gpus"; else echo 4; fi
}

# A new folder for one run under $1, named by the UTC time it began (a suffix when two runs
# begin in the same second), and $1/latest pointed at it. Prints the folder.
commbench_new_results_folder() {
  local root="$1" stamp folder suffix=1
  mkdir -p "$root"
  stamp="$(date -u +%Y-%m-%dT%H-%M-%SZ)"
  folder="$root/$stamp"
  until mkdir "$folder" 2>/dev/null; do
    suffix=$((suffix + 1))
    [ "$suffix" -le 100 ] || { commbench_log "cannot make a results folder under $root"; return 2; }
    folder="$root/$stamp-$suffix"
  done
  ln -sfn "$(basename "$folder")" "$root/latest"
  printf '%s\n' "$folder"
}

# How this machine starts $1 local ranks: Open MPI refuses root without
# --allow-run-as-root, and more ranks than it counts cores without --oversubscribe (it
# counts physical cores, so it is always given: harmless where the cores suffice).
commbench_mpirun_prefix() {
  local prefix=(mpirun)
  if [ "$(id -u)" -eq 0 ]; then prefix+=(--allow-run-as-root); fi
  prefix+=(--oversubscribe -np "$1")
  printf '%s\n' "${prefix[*]}"
}

# What to try after run.sh: commands of README.md's table (tests/integration/test_scripts.py
# checks they are there), started as $1 starts them, from the repository root.
commbench_print_next_steps() {
  local mpirun="$1" latest="$2" build
  build="${COMMBENCH_BUILD#"$COMMBENCH_ROOT"/}"
  latest="${latest#"$COMMBENCH_ROOT"/}"
  commbench_log "what to try next (README.md's table of commands; each command takes --help):"
  printf '  %s\n' \
    "$mpirun $build/bench/bench-p2p --schedule ring --both-ways --fail-on-outlier" \
    "$mpirun $build/examples/bench-groups -k 2,4" \
    "$mpirun $build/bench/bench-patterns --pattern zero3 --preset llama-3-8b" \
    "scripts/plot $latest/collectives.json -o sweep.png" >&2
}
