"""What the GPU tests ask of the machine and the build: how many GPUs nvidia-smi lists,
and which backends a commbench binary was built with (its --version says)."""
import subprocess
import sys


def gpu_count():
    try:
        out = subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return 0
    return sum(1 for line in out.stdout.splitlines() if line.startswith("GPU ")) if out.returncode == 0 else 0


def built_backends(binary):
    out = subprocess.run([binary, "--version"], capture_output=True, text=True, check=True).stdout
    lines = [line for line in out.splitlines() if line.startswith("backends: ")]
    return lines[0][len("backends: "):].split(", ") if lines else []


SKIP = 77  # ctest's SKIP_RETURN_CODE for the gpu tests


def gpus_or_skip(binary):
    """The GPUs to test on; without CUDA in `binary`'s build or without a GPU here, says
    why and exits 77, so CPU-only CI reports the test skipped rather than failed."""
    if "nccl" not in built_backends(binary):
        print("SKIP: this build has no CUDA and NCCL (configure where both are present)")
        sys.exit(SKIP)
    count = gpu_count()
    if count == 0:
        print("SKIP: no CUDA device on this machine (nvidia-smi -L lists no GPU)")
        sys.exit(SKIP)
    return count
