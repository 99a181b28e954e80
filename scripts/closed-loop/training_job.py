#!/usr/bin/env python3
"""One run of a real training job, as the closed-loop proof runs it (docs/closed-loop.md).

PyTorch DDP, FSDP2 or DeepSpeed ZeRO-3 trains tests/fixtures/traces/tiny_llama.py's model
(the "proof" shape by default) on CPU with gloo, one rank per process as srun or torchrun
starts them. It runs --warmup steps, then --steps timed steps, and rank 0 prints one JSON
line: {"framework", "settings", "ranks", "step_seconds": [...], "median_seconds",
"elapsed_seconds"}, each step's time the slowest rank's. With --trace DIR, --trace-steps more
steps (default 3) run under torch.profiler and every rank writes DIR/rank<R>.json.gz, the
trace bench-replay and `bench-patterns --tune-against` read: several steps, so that
--tune-against knows how much the job's steps vary and keeps the settings for a saving
inside that.

--settings FILE (JSON) holds the knobs the proof compares:
  ddp    DistributedDataParallel's keyword arguments      {"bucket_cap_mb": 25}
  fsdp2  how fully_shard is applied, as `bench-patterns --tune-output` writes it
         {"reshard_after_forward": true, "forward_prefetch": false, "fsdp_unit_layers": 1}:
         fully_shard on each group of fsdp_unit_layers decoder layers with
         reshard_after_forward, each unit prefetching the next in forward
         (set_modules_to_forward_prefetch) when forward_prefetch is true, then
         fully_shard(model) with its defaults (the root is not resharded after forward)
  zero3  a ds_config fragment, merged over the job's own  {"zero_optimization": {...}}

Ranks come from torchrun's RANK/WORLD_SIZE/LOCAL_RANK or srun's SLURM_PROCID/SLURM_NTASKS/
SLURM_LOCALID; the rendezvous from MASTER_ADDR/MASTER_PORT or --master HOST:PORT.
Exit codes: 0 done; 2 bad arguments or settings; 3 the framework failed.
"""
import argparse
import gzip
import json
import os
import shutil
import statistics
import sys
import time

from settings_file import SettingsError, read_settings_file

HERE = os.path.dirname(os.path.abspath(__file__))
FIXTURES = os.path.join(HERE, "..", "..", "tests", "fixtures", "traces")
FRAMEWORKS = ("ddp", "fsdp2", "zero3")


def fail(code, message):
    print(f"training_job.py: {message}", file=sys.stderr, flush=True)
    sys.exit(code)


def parse_arguments(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--framework", required=True, choices=FRAMEWORKS)
    ap.add_argument("--settings", help="the knobs, JSON (see above); default: the framework's defaults")
    ap.add_argument("--shape", default="proof", help="tiny_llama's shape (default: proof)")
    ap.add_argument("--steps", type=int, default=3, help="timed steps (default 3)")
    ap.add_argument("--warmup", type=int, default=1, help="steps before timing (default 1)")
    ap.add_argument("--trace", metavar="DIR", help="profile more steps into DIR/rank<R>.json.gz")
    ap.add_argument("--trace-steps", type=int, default=3, metavar="N", help="steps --trace profiles (default 3)")
    ap.add_argument("--master", metavar="HOST:PORT", help="the rendezvous, unless MASTER_ADDR/MASTER_PORT say it")
    args = ap.parse_args(argv)
    if args.steps < 1 or args.warmup < 0:
        fail(2, "--steps must be at least 1 and --warmup at least 0")
    if args.trace_steps < 1:
        fail(2, "--trace-steps must be at least 1")
    return args


def read_settings(path, framework):
    """The knobs as the framework takes them; exit 2 naming the file when they are not."""
    try:
        return read_settings_file(path, "--settings", framework)
    except SettingsError as e:
        fail(2, str(e))


def set_rank_environment(master):
    """torchrun's variables from srun's where torchrun did not start the process."""
    if "RANK" not in os.environ and "SLURM_PROCID" in os.environ:
        os.environ["RANK"] = os.environ["SLURM_PROCID"]
        os.environ["WORLD_SIZE"] = os.environ["SLURM_NTASKS"]
        os.environ["LOCAL_RANK"] = os.environ.get("SLURM_LOCALID", "0")
    if master:
        host, _, port = master.rpartition(":")
        if not host or not port.isdigit():
            fail(2, f"--master {master}: give HOST:PORT")
        os.environ["MASTER_ADDR"], os.environ["MASTER_PORT"] = host, port
    for name in ("RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT"):
        if name not in os.environ:
            fail(2, f"{name} is not set: run under torchrun or srun, with --master HOST:PORT under srun")


def zero3_config(tiny_llama, settings):
    """The job's DeepSpeed config: Adam in fp32 on CPU, the settings' zero_optimization over stage 3."""
    zero = {"stage": 3, **settings.get("zero_optimization", {})}
    zero["stage"] = 3
    return {
        "train_micro_batch_size_per_gpu": tiny_llama.BATCH,
        "gradient_accumulation_steps": 1,
        "optimizer": {"type": "Adam", "params": {"lr": 1e-4, "torch_adam": True}},
        "fp16": {"enabled": False},
        "bf16": {"enabled": False},
        "zero_optimization": zero,
        "steps_per_print": 1_000_000_000,
        "wall_clock_breakdown": False,
    }


def build_job(torch, dist, framework, settings, shape):
    """(train_step, the settings as the framework applied them): the model wrapped, its optimizer, one batch."""
    sys.path.insert(0, FIXTURES)
    import tiny_llama
    rank = dist.get_rank()
    model = tiny_llama.build(torch, shape)
    tokens, targets = tiny_llama.batch(torch, rank, shape)

    def loss_of(logits):
        return tiny_llama.loss(torch, logits, targets)

    if framework == "zero3":
        import deepspeed
        config = zero3_config(tiny_llama, settings)
        engine, _, _, _ = deepspeed.initialize(model=model, model_parameters=model.parameters(), config=config)

        def zero3_step():
            loss = loss_of(engine(tokens))
            engine.backward(loss)
            engine.step()
        return zero3_step, config["zero_optimization"]

    if framework == "ddp":
        from torch.nn.parallel import DistributedDataParallel
        model = DistributedDataParallel(model, **settings)
    else:
        shard_fully(dist, model, settings)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-4)

    def step():
        optimizer.zero_grad(set_to_none=True)
        loss_of(model(tokens)).backward()
        optimizer.step()
    return step, settings


def shard_fully(dist, model, settings):
    """FSDP2 as its users write it: fully_shard on each unit of decoder layers, then on the
    model; the root keeps fully_shard's default, which does not reshard it after forward."""
    from torch.distributed.device_mesh import init_device_mesh
    from torch.distributed.fsdp import fully_shard
    mesh = init_device_mesh("cpu", (dist.get_world_size(),))
    per_unit = settings.get("fsdp_unit_layers", 1)
    layers = list(model.layers)
    units = []
    for first in range(0, len(layers), per_unit):
        group = layers[first:first + per_unit]
        fully_shard(group if len(group) > 1 else group[0], mesh=mesh,
                    reshard_after_forward=settings.get("reshard_after_forward", True))
        units.append(group[0])
    if settings.get("forward_prefetch", False):
        for unit, following in zip(units, units[1:]):
            unit.set_modules_to_forward_prefetch([following])
    fully_shard(model, mesh=mesh)


def timed_steps(torch, dist, train_step, steps):
    """Each step's seconds, the slowest rank's: the step ends for the job when its last rank is done."""
    times = []
    for _ in range(steps):
        dist.barrier()
        started = time.perf_counter()
        train_step()
        took = torch.tensor([time.perf_counter() - started], dtype=torch.float64)
        dist.all_reduce(took, op=dist.ReduceOp.MAX)
        times.append(float(took.item()))
    return times


def trace_steps(torch, dist, train_step, folder, steps):
    """`steps` steps under torch.profiler, written gzipped as rank<R>.json.gz. A schedule (one
    step of the profiler's warm-up, then the traced ones) is what makes the profiler mark
    each step as ProfilerStep#N, which bench-replay and --tune-against take the job's steps
    from."""
    from torch.profiler import ProfilerActivity, profile, schedule
    os.makedirs(folder, exist_ok=True)
    rank = dist.get_rank()
    plain = os.path.join(folder, f"rank{rank}.json")
    exported = []

    def export(prof):
        prof.export_chrome_trace(plain)
        exported.append(plain)

    dist.barrier()
    with profile(activities=[ProfilerActivity.CPU], record_shapes=True,
                 schedule=schedule(wait=0, warmup=1, active=steps, repeat=1), on_trace_ready=export) as prof:
        for _ in range(1 + steps):
            train_step()
            prof.step()
    if not exported:
        raise RuntimeError("the profiler wrote no trace")
    with open(plain, "rb") as source, gzip.open(plain + ".gz.part", "wb") as target:
        shutil.copyfileobj(source, target)
    os.replace(plain + ".gz.part", plain + ".gz")
    os.remove(plain)


def main(argv=None):
    args = parse_arguments(argv)
    settings = read_settings(args.settings, args.framework)
    set_rank_environment(args.master)
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    if args.framework == "zero3":
        os.environ.setdefault("DS_ACCELERATOR", "cpu")
    import torch
    import torch.distributed as dist
    torch.set_num_threads(1)
    started = time.perf_counter()
    try:
        if args.framework == "zero3":
            import deepspeed
            deepspeed.init_distributed(dist_backend="gloo")
        else:
            dist.init_process_group(backend="gloo")
        train_step, applied = build_job(torch, dist, args.framework, settings, args.shape)
        for _ in range(args.warmup):
            train_step()
        times = timed_steps(torch, dist, train_step, args.steps)
        if args.trace:
            trace_steps(torch, dist, train_step, args.trace, args.trace_steps)
        dist.barrier()
    except Exception as e:  # a framework's failure, whatever its class: one line and exit 3, not a traceback
        fail(3, f"rank {os.environ['RANK']}: {args.framework}: {str(e).splitlines()[0] if str(e) else type(e).__name__}")
    if dist.get_rank() == 0:
        print(json.dumps({"framework": args.framework, "settings": applied, "ranks": dist.get_world_size(),
                          "shape": args.shape, "step_seconds": times, "median_seconds": statistics.median(times),
                          "elapsed_seconds": time.perf_counter() - started}), flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
