#!/usr/bin/env bash
# Proving the NCCL backend on a lent GPU machine (one GPU, no MPI, no package registry):
#
#   here:   scripts/gpu-session.sh stage
#           builds bench-collectives, bench-topology, bench-patterns, bench-validate, bench-p2p,
#           bench-replay and the backend-extensions test without MPI (one process drives the
#           GPUs) and packs them into .gpu/stage.tgz, which git ignores; the device tool
#           carries it (carry: [".gpu"]) and run unpacks it.
#   there:  scripts/gpu-session.sh run "$OUT"
#           runs bench-topology's live probe, the gpu-labelled tests, the backend-extensions
#           test (spin-kernel calibration, streams and events, overlap, peer send/recv:
#           gpu-extensions.log)
#           bench-p2p --local (every GPU pair by copy engine, SM kernel and NCCL, host
#           transfers near, far and pageable, against the PCIe link: p2p-local.*),
#           the full sweep (8 B - 8 GiB, every collective, --check), five interleaved
#           launches of bench-collectives and bare-nccl-loop compared by their medians and
#           fastest launches
#           (bench/compare_with_bare_nccl.py), and of bench-collectives with its NCCL
#           profiler plugin and without (NCCL_PROFILER_PLUGIN=none), one bench-patterns
#           step per framework (ddp, fsdp, zero3), a --tune run (zero3, 120 s budget) and
#           bench-validate on the one node, --profile-range on the CUDA context (and
#           under nsys where one is found, on the PATH or under /opt/nvidia: the NVTX
#           summary), then records bench-replay's GPU fixtures (tests/fixtures/gpu: one
#           step of each case, DDP, and FSDP2 on two GPUs or more, with NCCL under
#           torch.profiler and under nsys, with and without PyTorch's operator ranges, by the
#           machine's own PyTorch, into
#           gpu-traces/), reads each with bench-replay and
#           replays the DDP step on the GPU (replay-*), and writes the programs'
#           own CSV/JSON/tables and logs to the folder.
#
# Results then go, unedited, to results/gpu/<gpu-model>/ with their provenance; the
# traces of gpu-traces/ to tests/fixtures/gpu/ (its README.md).
#
# The lent machine has a driver, CUDA and NCCL (the image's Python nvidia-nccl-cu13) but no
# package registry: every other shared library the binaries need (hwloc, libibverbs, libnl,
# libudev, pugixml, {fmt}, ...) is copied into .gpu/lib here and found there through
# LD_LIBRARY_PATH.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
stage="$root/.gpu"

# Copies into DEST every shared library the given binaries load that a bare GPU machine
# may lack: all but the C/C++ runtime (always there) and the GPU stack (the machine's own
# driver, CUDA and NCCL must be used, never copies from here).
collect_libraries() {
  local dest="$1"; shift
  mkdir -p "$dest"
  ldd "$@" | awk '$2 == "=>" && $3 ~ /^\// { print $1, $3 }' | sort -u | while read -r name path; do
    case "$name" in
      libc.so*|libm.so*|libstdc++.so*|libgcc_s.so*|ld-linux*|libpthread.so*|libdl.so*|librt.so*) ;;
      libcuda.so*|libnvidia-*|libnccl.so*|libcudart.so*) ;;  # libnvidia-* includes NVML
      *) cp -L "$path" "$dest/$name" ;;
    esac
  done
}

# Nsight Systems: on the PATH, else a copy the image ships inside Nsight Compute or Nsight
# Systems under /opt/nvidia (the lent machines have no nsys on the PATH, but Nsight
# Compute's folder carries one). Prints nothing when there is none.
find_nsys() {
  if command -v nsys; then return; fi
  local candidate
  for candidate in /opt/nvidia/nsight-systems*/*/bin/nsys /opt/nvidia/nsight-systems*/bin/nsys \
                   /opt/nvidia/nsight-compute/*/host/target-linux-x64/nsys; do
    if [ -x "$candidate" ]; then echo "$candidate"; return 0; fi
  done
  return 0
}

# Runs a command under a time limit; a stall is the project's exit 4 (timeout), not
# timeout(1)'s 124, and a command that ignores SIGTERM is killed 10 s later.
within() {
  local seconds=$1 code=0
  shift
  timeout -k 10 "$seconds" "$@" || code=$?
  if [ "$code" -eq 124 ] || [ "$code" -eq 137 ]; then return 4; fi
  return "$code"
}

# The "Total GPU Ops" of the NVTX range whose name contains $2, from nsys's
# nvtx_gpu_proj_sum CSV ($1; its first lines are nsys's own messages); 0 when absent.
gpu_ops_in_range() {
  python3 - "$1" "$2" <<'PY'
import csv, sys
try:
    lines = open(sys.argv[1], errors="replace").read().splitlines()
except OSError:
    lines = []
start = next((i for i, line in enumerate(lines) if line.startswith("Range,")), None)
ops = 0
if start is not None:
    for row in csv.DictReader(lines[start:]):
        if sys.argv[2] in row.get("Range", ""):
            try:
                ops = int(float(row.get("Total GPU Ops") or 0))
            except ValueError:
                ops = 0
print(ops)
PY
}

case "${1:-}" in
  stage)
    source "$root/scripts/lib.sh"
    # libdw1: what the lent machines' Nsight Systems importer lacks (carried below).
    COMMBENCH_PACKAGES+=(libdw1)
    commbench_install_packages
    COMMBENCH_BUILD="$root/build-gpu-stage"
    # Tests on only for the extensions test's target; nothing else of them is built.
    COMMBENCH_CMAKE_ARGS=(-DCOMMBENCH_WITH_MPI=OFF -DCOMMBENCH_WITH_NCCL=ON -DCOMMBENCH_BUILD_TESTS=ON
                          -DCOMMBENCH_BUILD_MICROBENCH=OFF)
    commbench_build --target bench-collectives bench-topology bench-patterns bench-validate bench-p2p \
      bench-replay commbench-gpu-extensions-test bare-nccl-loop
    # Staged in the build folder, then packed into .gpu: the tree the device tool carries is
    # limited (64 MiB), and six programs of about 9 MB each with their libraries pass it.
    unpacked="$COMMBENCH_BUILD/staged"
    rm -rf "$unpacked"
    mkdir -p "$unpacked"
    cp "$COMMBENCH_BUILD/bench/bench-collectives" "$COMMBENCH_BUILD/bench/bench-topology" \
       "$COMMBENCH_BUILD/bench/bench-patterns" "$COMMBENCH_BUILD/bench/bench-validate" \
       "$COMMBENCH_BUILD/bench/bench-p2p" "$COMMBENCH_BUILD/bench/bench-replay" "$COMMBENCH_BUILD/bench/bare-nccl-loop" \
       "$COMMBENCH_BUILD/tests/gpu/commbench-gpu-extensions-test" "$unpacked/"
    collect_libraries "$unpacked/lib" "$unpacked"/bench-* "$unpacked/commbench-gpu-extensions-test"
    echo "carried libraries: $(ls "$unpacked/lib" | tr '\n' ' ')"
    # The nsys inside Nsight Compute's folder on the lent machines captures, but its
    # QdstrmImporter cannot load without libdw.so.1, which those machines lack
    # (results/gpu/h100-80gb-hbm3/2026-11-26-65b7784/PROVENANCE.md): carried apart from the
    # programs' own libraries, for nsys alone.
    libdw="$(ldconfig -p | awk '$1 == "libdw.so.1" && $NF ~ /^\// { print $NF; exit }')"
    mkdir -p "$unpacked/nsys-lib"
    cp -L "$libdw" "$unpacked/nsys-lib/"
    collect_libraries "$unpacked/nsys-lib" "$libdw"
    echo "carried for nsys: $(ls "$unpacked/nsys-lib" | tr '\n' ' ')"
    "$unpacked/bench-collectives" --version
    rm -rf "$stage"
    mkdir -p "$stage"
    tar czf "$stage/stage.tgz" -C "$unpacked" .
    # du goes on past a tracked file deleted here (and then fails): the total is still right.
    tree=$( (cd "$root" && git ls-files -z --cached --others --exclude-standard | du -cb --files0-from=- 2>/dev/null |
             tail -n 1 | cut -f1) || true)
    packed=$(stat -c %s "$stage/stage.tgz")
    echo "staged $stage/stage.tgz ($((packed >> 20)) MiB; with the working tree $(((packed + tree) >> 20)) MiB of the" \
         "64 MiB that travel); carry .gpu (and run from the repository root)"
    ;;
  run)
    out="${2:?usage: scripts/gpu-session.sh run OUTDIR}"
    mkdir -p "$out"
    bin="$stage/bench-collectives"
    [ -x "$bin" ] || [ ! -f "$stage/stage.tgz" ] || tar xzf "$stage/stage.tgz" -C "$stage"
    [ -x "$bin" ] || { echo "no $bin: run 'scripts/gpu-session.sh stage' here first and carry .gpu" >&2; exit 2; }
    machine_library_path="${LD_LIBRARY_PATH:-}"  # PyTorch's programs below run without the carried libraries
    export LD_LIBRARY_PATH="$stage/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
    # NCCL comes with the image's Python (nvidia-nccl-cu13) when no system copy exists.
    if ! ldconfig -p 2>/dev/null | grep -q libnccl.so.2; then
      nccl_lib="$(python3 -c 'import nvidia.nccl, os; print(os.path.join(list(nvidia.nccl.__path__)[0], "lib"))' 2>/dev/null || true)"
      [ -n "$nccl_lib" ] && export LD_LIBRARY_PATH="$nccl_lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
    fi
    { nvidia-smi -L; nvidia-smi --query-gpu=name,pci.bus_id,driver_version,memory.total --format=csv; } \
      > "$out/gpu.txt" 2>&1 || { echo "no GPU here (nvidia-smi failed)" >&2; cat "$out/gpu.txt" >&2; exit 3; }
    "$bin" --version | tee "$out/version.txt"
    status=0
    # The live probe: NVML, the CUDA device list, PCIe links (exit 1 = a finding, shown).
    topology=0
    "$stage/bench-topology" --json "$out/topology.json" --csv "$out/topology-links.csv" --force \
      > "$out/topology.txt" 2>&1 || topology=$?
    echo "bench-topology: exit $topology (topology.txt)"
    [ "$topology" -le 1 ] || status=$topology
    COMMBENCH_BENCH_COLLECTIVES="$bin" PYTHONUNBUFFERED=1 \
      python3 "$root/tests/gpu/test_gpu_collectives.py" > "$out/gpu-tests.log" 2>&1 || status=$?
    echo "gpu tests: exit $status (log: gpu-tests.log)"
    # bench-p2p --local under its GPU test, which keeps the run's CSV, JSON and console.
    p2p=0
    COMMBENCH_BENCH_P2P="$stage/bench-p2p" COMMBENCH_P2P_OUT="$out" PYTHONUNBUFFERED=1 \
      python3 "$root/tests/gpu/test_gpu_p2p.py" > "$out/gpu-p2p-tests.log" 2>&1 || p2p=$?
    echo "bench-p2p --local tests: exit $p2p (gpu-p2p-tests.log, p2p-local.txt)"
    [ "$p2p" -eq 0 ] || status=$p2p
    extensions=0
    "$stage/commbench-gpu-extensions-test" > "$out/gpu-extensions.log" 2>&1 || extensions=$?
    echo "backend extensions: exit $extensions (log: gpu-extensions.log)"; grep -E "^(FAIL|worst)" "$out/gpu-extensions.log" || true
    [ "$extensions" -eq 0 ] || status=$extensions
    "$bin" --backend nccl --op all -b 8 -e 8G -c 1 --csv "$out/sweep.csv" --json "$out/sweep.json" --force \
      > "$out/sweep.txt" 2> "$out/sweep.err" || status=$?
    echo "sweep: exit $status"; tail -5 "$out/sweep.txt"
    # Printed times against a bare NCCL loop on the same GPUs: five launches of each,
    # interleaved, medians and fastest launches compared (exit 1 = a case slower by more than
    # 10 % in both; one launch of either can be a third or more off at small sizes on a
    # one-GPU VM: bench/compare_with_bare_nccl.py says why).
    bare=0 plugin=0  # the first failure of each comparison's launches, then its own exit
    mkdir -p "$out/bare-nccl"
    sizes=8,4096,262144,16777216,134217728,1073741824  # on bench-collectives' -b 8 -f 8 ladder
    comparison_args=()
    plugin_args=()
    for launch in 1 2 3 4 5; do
      # The loop has no watchdog of its own: within() ends a stall (exit 4), named below.
      # Its stderr (NCCL warnings included) stays out of the file the comparison parses.
      for op in allreduce allgather reducescatter broadcast; do
        step=0
        within 120 "$stage/bare-nccl-loop" "$op" "$sizes" > "$out/bare-nccl/$op-$launch.txt" \
          2> "$out/bare-nccl/$op-$launch.err" || step=$?
        [ "$step" -eq 0 ] || { echo "bare-nccl-loop $op, launch $launch: exit $step (bare-nccl/$op-$launch.txt)"; bare=$step; }
        comparison_args+=(--bare "$out/bare-nccl/$op-$launch.txt")
      done
      # bench-collectives as users run it (the plugin on), and the same sweep without commbench's
      # NCCL profiler plugin (NCCL finds no libnccl-profiler-none.so and records nothing, and
      # the nccl_* columns stay empty), in turn first and second from launch to launch.
      for variant in $( ((launch % 2)) && echo "on off" || echo "off on"); do
        step=0
        if [ "$variant" = on ]; then
          within 300 "$bin" --backend nccl --op allreduce,allgather,reducescatter,broadcast -b 8 -e 1G -f 8 \
            --csv "$out/bare-nccl/commbench-$launch.csv" --force > /dev/null 2>> "$out/bare-nccl/commbench.err" || step=$?
          [ "$step" -eq 0 ] ||
            { echo "bench-collectives, launch $launch: exit $step (bare-nccl/commbench.err)"; bare=$step; plugin=$step; }
        else
          within 300 env NCCL_PROFILER_PLUGIN=none "$bin" --backend nccl --op allreduce,allgather,reducescatter,broadcast \
            -b 8 -e 1G -f 8 --csv "$out/bare-nccl/commbench-noplugin-$launch.csv" --force > /dev/null \
            2>> "$out/bare-nccl/commbench.err" || step=$?
          [ "$step" -eq 0 ] || { echo "bench-collectives without the plugin, launch $launch: exit $step"; plugin=$step; }
        fi
      done
      comparison_args+=(--sweep "$out/bare-nccl/commbench-$launch.csv")
      plugin_args+=(--sweep "$out/bare-nccl/commbench-$launch.csv")
      plugin_args+=(--reference-sweep "$out/bare-nccl/commbench-noplugin-$launch.csv")
    done
    [ "$bare" -ne 0 ] || python3 "$root/bench/compare_with_bare_nccl.py" "${comparison_args[@]}" \
      > "$out/bare-nccl-comparison.md" 2>&1 || bare=$?
    echo "against a bare NCCL loop: exit $bare (bare-nccl-comparison.md)"
    [ ! -f "$out/bare-nccl-comparison.md" ] || cat "$out/bare-nccl-comparison.md"
    [ "$bare" -eq 0 ] || status=$bare
    # Does recording NCCL's choices change the printed times? The same medians, plugin on
    # against plugin off, beyond 2 % or either side's launch-to-launch spread (exit 1).
    [ "$plugin" -ne 0 ] || python3 "$root/bench/compare_with_bare_nccl.py" "${plugin_args[@]}" \
      --reference "plugin-off sweep" --tolerance 0.02 > "$out/plugin-on-off.md" 2>&1 || plugin=$?
    echo "with the NCCL profiler plugin against without: exit $plugin (plugin-on-off.md)"
    [ ! -f "$out/plugin-on-off.md" ] || tail -n 3 "$out/plugin-on-off.md"
    [ "$plugin" -eq 0 ] || status=$plugin
    # One step per framework on this process's GPUs: the NCCL streams, the spin kernel and
    # the event recycling under the executor (one GPU: no data-parallel collective).
    for pattern in ddp fsdp zero3; do
      patterns=0
      "$stage/bench-patterns" --backend nccl --pattern "$pattern" --preset llama-3-8b --layers 4 -n 5 \
        --json "$out/patterns-$pattern.json" --csv "$out/patterns-$pattern.csv" --force \
        > "$out/patterns-$pattern.txt" 2>&1 || patterns=$?
      echo "bench-patterns $pattern: exit $patterns (patterns-$pattern.txt)"
      [ "$patterns" -eq 0 ] || status=$patterns
    done
    # --tune on the GPU: trials on NCCL communicators reused across trials, the fitted
    # model's pruning, and the ds_config fragment, within a budget that fits the session.
    tune=0
    "$stage/bench-patterns" --backend nccl --pattern zero3 --preset llama-3-8b --layers 4 --tune-budget 120 \
      --tune-output "$out/tune-zero3-ds.json" --json "$out/tune-zero3.json" --csv "$out/tune-zero3.csv" --force \
      --tune=1 > "$out/tune-zero3.txt" 2>&1 || tune=$?
    echo "bench-patterns --tune zero3: exit $tune (tune-zero3.txt)"
    [ "$tune" -eq 0 ] || status=$tune
    # bench-validate on one node: its node-local checks read the GPU through NVML (one
    # rank: no intra-node collective, no pairs).
    validate=0
    "$stage/bench-validate" --backend nccl --json "$out/validate.json" --csv "$out/validate.csv" --force \
      > "$out/validate.txt" 2>&1 || validate=$?
    echo "bench-validate: exit $validate (validate.txt)"
    [ "$validate" -eq 0 ] || status=$validate
    # --profile-range on a real CUDA context (cudaProfilerStart/Stop must not fail without a
    # profiler), then under Nsight Systems where one is installed: the NVTX summary of the
    # captured case is kept (docs/profiling.md), the report itself is not.
    profile=0
    "$bin" --backend nccl --op allreduce -b 64M -e 64M --profile-range 'allreduce 64MiB'       > "$out/profile-range.txt" 2>&1 || profile=$?
    echo "--profile-range: exit $profile (profile-range.txt)"
    [ "$profile" -eq 0 ] || status=$profile
    nsys_bin="$(find_nsys)"
    if [ -n "$nsys_bin" ]; then
      echo "nsys: $nsys_bin ($("$nsys_bin" --version 2>&1 | head -1))"
      nsys_status=0
      # A profiler that cannot attach must not hold the session: 180 s is 30 times what the
      # capture takes without it.
      LD_LIBRARY_PATH="$stage/nsys-lib:$LD_LIBRARY_PATH" timeout -k 10 180 "$nsys_bin" profile --trace=cuda,nvtx --capture-range=cudaProfilerApi --capture-range-end=stop \
        -o "$out/profile" --force-overwrite true \
        "$bin" --backend nccl --op allreduce -b 8 -e 256M --profile-range 'allreduce 64MiB' \
        > "$out/nsys.txt" 2>&1 || nsys_status=$?
      if [ "$nsys_status" -eq 124 ] || [ "$nsys_status" -eq 137 ]; then nsys_status=4; fi
      # nvtx_sum: each range's time and count; nvtx_gpu_proj_sum: the GPU work that runs
      # inside each range (its "Total GPU Ops" column), which tells which kernels belong to
      # which case and batch.
      for report in nvtx_sum nvtx_gpu_proj_sum; do
        [ "$nsys_status" -ne 0 ] || within 120 "$nsys_bin" stats --force-export=true --report "$report" \
          --format csv "$out/profile.nsys-rep" > "$out/nsys-$report.csv" 2>>"$out/nsys.txt" || nsys_status=$?
      done
      # The captured case must be named in the profile, with GPU work inside its range.
      if [ "$nsys_status" -eq 0 ]; then
        captured='allreduce 64MiB float sum out-of-place (capture range)'
        ops=$(gpu_ops_in_range "$out/nsys-nvtx_gpu_proj_sum.csv" "$captured")
        if [ "$ops" -gt 0 ]; then
          echo "nsys: the captured case's range is in the profile, with $ops GPU operations"
        else
          echo "nsys: no range '$captured' with GPU operations in the profile" >&2
          status=1
        fi
      else
        status=$nsys_status  # a profiler that failed or stalled fails the session
      fi
      # The report is kept out of the results (hundreds of MB); where nsys could not import
      # its capture, the raw stream (.qdstrm) is left behind instead.
      rm -f "$out/profile.nsys-rep" "$out/profile.sqlite" "$out/profile.qdstrm"
      echo "nsys: exit $nsys_status (nsys-nvtx_sum.csv, nsys-nvtx_gpu_proj_sum.csv)"
    else
      echo "nsys: not on PATH nor under /opt/nvidia; the Nsight Systems capture is skipped"
    fi
    # bench-replay's GPU fixtures: the machine's PyTorch records one step of each case
    # with NCCL, under torch.profiler and, where nsys was found, under nsys.
    traces=0
    LD_LIBRARY_PATH="$machine_library_path" within 300 "$root/tests/fixtures/gpu/record-gpu-traces.sh" \
      --out "$out/gpu-traces" --nsys "${nsys_bin:-none}" --nsys-libraries "$stage/nsys-lib" \
      > "$out/gpu-traces.log" 2>&1 || traces=$?
    echo "GPU traces for bench-replay: exit $traces (gpu-traces.log, gpu-traces/)"
    [ "$traces" -eq 0 ] || { tail -n 20 "$out/gpu-traces.log"; status=$traces; }
    # bench-replay on them: each case read (the CUDA kernels, NCCL's kernels and ranges), and
    # the DDP step replayed on this GPU through the patterns executor.
    for case_dir in "$out"/gpu-traces/*/; do
      [ -d "$case_dir" ] || continue
      name="$(basename "$case_dir")"
      replay=0
      within 60 "$stage/bench-replay" "$case_dir" --json "$out/replay-$name.json" --force \
        > "$out/replay-$name.txt" 2>&1 || replay=$?
      echo "bench-replay $name: exit $replay (replay-$name.txt)"
      [ "$replay" -eq 0 ] || status=$replay
    done
    if [ -d "$out/gpu-traces/llama-ddp" ]; then
      replay=0
      within 120 "$stage/bench-replay" "$out/gpu-traces/llama-ddp" --replay --backend nccl -n 5 \
        --json "$out/replay-run-llama-ddp.json" --force > "$out/replay-run-llama-ddp.txt" 2>&1 || replay=$?
      echo "bench-replay --replay llama-ddp: exit $replay (replay-run-llama-ddp.txt)"
      [ "$replay" -eq 0 ] || status=$replay
    fi
    exit "$status"
    ;;
  *)
    sed -n '2,/^set -euo pipefail/{/^set/!p}' "$0" >&2
    exit 2
    ;;
esac
