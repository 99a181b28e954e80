"""The closed-loop proof harness (scripts/closed-loop/, docs/closed-loop.md).

Summary and Harness need neither PyTorch nor a cluster: the verdicts on figures worked out
by hand, the search's plan, the interleaving, the knobs read back from bench-patterns'
trials, the model flags against the shape bench-patterns builds, and the job's refusals of
bad input (before PyTorch is imported). TinyJob and TinyProof run the real frameworks, on
tiny_llama's small shape, where COMMBENCH_TRACE_VENV names a venv with torch and deepspeed
(ctest label `live`); TinyProof also needs the Slurm test cluster up.
"""
import gzip
import json
import os
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
HARNESS = os.path.join(ROOT, "scripts", "closed-loop")
sys.path.insert(0, HARNESS)
import closed_loop_summary as summary  # noqa: E402
import prove  # noqa: E402

from test_live_conformance import VENV, frameworks_missing  # noqa: E402

PATTERNS = os.environ.get("COMMBENCH_BENCH_PATTERNS", "")
CLUSTER = os.path.join(ROOT, "scripts", "slurm-cluster.sh")


def side(*runs):
    return summary.side_figures(list(runs))


class Summary(unittest.TestCase):
    def test_a_recommendation_beyond_the_spread_with_most_of_the_best_gain_meets_all(self):
        start, recommended, best = side(10.0, 10.4, 10.2), side(8.2, 8.0, 8.4), side(7.9, 7.8, 8.1)
        v = summary.verdicts(start, recommended, best, True, tune_seconds=90, search_seconds=1000)
        self.assertEqual({k: x["met"] for k, x in v.items()},
                         {"faster_than_start": True, "share_of_best_gain": True, "cluster_time": True})
        # median gains: 10.2 - 8.2 = 2.0 of 10.2 - 7.9 = 2.3, 87 %.
        self.assertIn("saves 2.000 s of the search's 2.300 s (87 %", v["share_of_best_gain"]["why"])
        self.assertIn("(9.0 %, at most 10 % asked)", v["cluster_time"]["why"])

    def test_overlapping_ranges_a_small_share_or_a_long_tune_are_not_met(self):
        start, best = side(10.0, 10.4, 10.2), side(7.9, 7.8, 8.1)
        v = summary.verdicts(start, side(9.0, 10.1, 9.5), best, True, tune_seconds=101, search_seconds=1000)
        self.assertFalse(v["faster_than_start"]["met"])  # 10.1 is slower than the start's 10.0
        self.assertFalse(v["share_of_best_gain"]["met"])  # 0.7 of 2.3 s
        self.assertFalse(v["cluster_time"]["met"])

    def test_where_the_search_gains_nothing_beyond_the_spread_keeping_the_settings_is_the_answer(self):
        start, best = side(10.0, 10.4, 10.2), side(9.9, 10.3, 10.1)
        kept = summary.verdicts(start, start, best, False, tune_seconds=10, search_seconds=1000)
        self.assertEqual(set(kept), {"no_gain_said", "cluster_time"})
        self.assertTrue(kept["no_gain_said"]["met"])
        changed = summary.verdicts(start, side(9.8, 10.0, 10.1), best, True, tune_seconds=10, search_seconds=1000)
        self.assertFalse(changed["no_gain_said"]["met"])
        self.assertIn("recommended a change", changed["no_gain_said"]["why"])

    def test_a_small_grid_is_repeated_a_large_one_drawn_from(self):
        space = {"a": [1, 2], "b": ["x", "y", "z"]}
        plan = summary.search_plan(space, 8)
        self.assertEqual(plan[:6], [{"a": 1, "b": "x"}, {"a": 2, "b": "x"}, {"a": 1, "b": "y"}, {"a": 2, "b": "y"},
                                    {"a": 1, "b": "z"}, {"a": 2, "b": "z"}])
        self.assertEqual(plan[6:], plan[:2])
        large = {f"k{i}": list(range(4)) for i in range(5)}  # 1024 combinations
        drawn = summary.search_plan(large, 40, seed=3)
        self.assertEqual(len(drawn), 40)
        self.assertEqual(drawn, summary.search_plan(large, 40, seed=3))
        self.assertGreater(len({json.dumps(d, sort_keys=True) for d in drawn}), 30)

    def test_each_round_turns_the_order(self):
        self.assertEqual(summary.interleaved_order(["s", "r", "b"], 4), list("srb" "rbs" "bsr" "srb"))
        with self.assertRaises(ValueError):
            summary.side_figures([])


class Harness(unittest.TestCase):
    def test_the_knobs_are_read_back_as_the_frameworks_take_them(self):
        self.assertIs(prove.knob_value("true"), True)
        self.assertEqual(prove.knob_value("26214400"), 26214400)
        self.assertEqual(prove.knob_value("0.5"), 0.5)
        tuned = {"trials": [
            {"trial": 0, "zero_optimization.overlap_comm": "false", "zero_optimization.reduce_bucket_size": "26214400"},
            {"trial": 1, "zero_optimization.overlap_comm": "true", "zero_optimization.reduce_bucket_size": "26214400"},
            {"trial": 2, "zero_optimization.overlap_comm": "false", "zero_optimization.reduce_bucket_size": "1"}]}
        space = prove.search_space(tuned, {})
        self.assertEqual(space, {"zero_optimization.overlap_comm": [False, True],
                                 "zero_optimization.reduce_bucket_size": [26214400, 1]})
        start = prove.read_start(None, "zero3")
        self.assertEqual(start, {"zero_optimization": {"stage": 3}})
        trial = prove.as_settings("zero3", {"zero_optimization.reduce_bucket_size": 1}, start)
        self.assertEqual(trial, {"zero_optimization": {"stage": 3, "reduce_bucket_size": 1}})
        fragment = {"zero_optimization": {"stage": 3, "overlap_comm": True}}
        self.assertEqual(prove.with_fragment("zero3", fragment, trial),
                         {"zero_optimization": {"stage": 3, "reduce_bucket_size": 1, "overlap_comm": True}})
        self.assertEqual(prove.with_fragment("ddp", {"bucket_cap_mb": 50}, {}), {"bucket_cap_mb": 50})

    def test_fully_shards_knobs_become_bench_patterns_flags_and_trials(self):
        # bench-patterns' FSDP2 trial records and --tune-output use training_job.py's keys.
        tuned = {"trials": [
            {"trial": 0, "reshard_after_forward": "true", "forward_prefetch": "false", "fsdp_unit_layers": "1"},
            {"trial": 1, "reshard_after_forward": "false", "forward_prefetch": "false", "fsdp_unit_layers": "1"},
            {"trial": 2, "reshard_after_forward": "false", "forward_prefetch": "true", "fsdp_unit_layers": "2"}]}
        self.assertEqual(prove.search_space(tuned, {}), {"reshard_after_forward": [True, False],
                                                         "forward_prefetch": [False, True],
                                                         "fsdp_unit_layers": [1, 2]})
        self.assertEqual(prove.settings_flags("fsdp2", {}, None),
                         ["--fsdp-version", "2", "--fsdp-sharding", "full_shard", "--forward-prefetch", "0",
                          "--fsdp-unit", "1"])
        kept = {"reshard_after_forward": False, "forward_prefetch": True, "fsdp_unit_layers": 2}
        self.assertEqual(prove.settings_flags("fsdp2", kept, None),
                         ["--fsdp-version", "2", "--fsdp-sharding", "shard_grad_op", "--forward-prefetch", "1",
                          "--fsdp-unit", "2"])
        self.assertEqual(prove.as_settings("fsdp2", {"fsdp_unit_layers": 4}, kept), {**kept, "fsdp_unit_layers": 4})
        self.assertEqual(prove.with_fragment("fsdp2", {"reshard_after_forward": True}, kept),
                         {**kept, "reshard_after_forward": True})

    def test_a_command_past_its_bound_is_one_line_and_exit_4(self):
        p = subprocess.run([sys.executable, "-c", "import prove; prove.bounded(['sleep', '5'], 0.2, 'tune')"],
                           cwd=HARNESS, capture_output=True, text=True, timeout=60)
        self.assertEqual(p.returncode, 4, p.stderr)
        self.assertEqual(p.stderr.strip(), "prove.py: tune: no end after 0.2 s")

    def test_a_resumed_proof_takes_the_tunings_time_from_its_record(self):
        with tempfile.TemporaryDirectory() as folder:
            commands = os.path.join(folder, "commands.txt")
            with open(commands, "w") as f:
                f.write("# trace-start: exit 0, 77.1 s\nsrun ...\n# tune: exit 1, 3.0 s\nsrun ...\n"
                        "# tune: exit 0, 573.4 s\nsrun ...\n# search-1: exit 0, 60.0 s\nsrun ...\n")
            self.assertEqual(prove.tune_seconds_recorded(commands), 573.4)
            p = subprocess.run([sys.executable, os.path.join(HARNESS, "prove.py"), "--framework", "ddp", "--rate",
                                "1gbit", "--out", folder, "--resume"], capture_output=True, text=True, timeout=60)
            self.assertEqual(p.returncode, 2, p.stderr)
            self.assertIn("--resume: ", p.stderr)
            self.assertIn("holds no runs.jsonl", p.stderr)

    @unittest.skipUnless(PATTERNS and os.environ.get("COMMBENCH_MPIEXEC"),
                         "COMMBENCH_BENCH_PATTERNS or COMMBENCH_MPIEXEC is not set (ctest sets both in an MPI build)")
    def test_the_model_flags_describe_the_shape_bench_patterns_counts(self):
        # tiny_llama's proof shape: embedding and head 16000 x 512 each, 4 layers of
        # 2 x 512^2 + 2 x 512 x 256 + 3 x 512 x 1408 + 2 x 512, the final norm 512; DDP on
        # 2 ranks allreduces every one of them once, in fp32.
        from test_bench_patterns import run as run_patterns
        with tempfile.TemporaryDirectory() as folder:
            dump = os.path.join(folder, "s.jsonl")
            code, _, err = run_patterns(2, "--pattern", "ddp", *prove.model_flags("proof"), "--dry-run",
                                        "--dump-schedule", dump)
            self.assertEqual(code, 0, err)
            with open(dump) as f:
                steps = [json.loads(line) for line in f]
        reduced = sum(s["bytes"] for s in steps if s["rank"] == 0 and s["op"] == "allreduce")
        per_layer = 2 * 512 * 512 + 2 * 512 * 256 + 3 * 512 * 1408 + 2 * 512
        self.assertEqual(reduced, 4 * (2 * 16000 * 512 + 4 * per_layer + 512))

    def test_a_bad_start_file_is_one_line_and_exit_2_before_the_cluster_is_asked(self):
        # prove.py reads --start as training_job.py reads --settings (settings_file.py).
        with tempfile.TemporaryDirectory() as folder:
            odd = os.path.join(folder, "odd.json")
            with open(odd, "w") as f:
                f.write('{"zero_optimization": 3}')
            p = subprocess.run([sys.executable, os.path.join(HARNESS, "prove.py"), "--framework", "zero3", "--start",
                                odd, "--rate", "500mbit", "--out", os.path.join(folder, "out")],
                               capture_output=True, text=True, timeout=60)
            self.assertEqual(p.returncode, 2, p.stderr)
            self.assertEqual(p.stderr.strip(), f"prove.py: --start {odd}: zero_optimization is not an object")
            self.assertFalse(os.path.exists(os.path.join(folder, "out")))

    def test_bad_settings_are_one_line_and_exit_2_before_any_framework_loads(self):
        with tempfile.TemporaryDirectory() as folder:
            listed = os.path.join(folder, "list.json")
            with open(listed, "w") as f:
                f.write("[1, 2]")
            # The wrapper's keyword, which fully_shard does not take; a unit of no layers.
            fsdp2_odd, fsdp2_unit = os.path.join(folder, "odd.json"), os.path.join(folder, "unit.json")
            with open(fsdp2_odd, "w") as f:
                f.write('{"limit_all_gathers": true}')
            with open(fsdp2_unit, "w") as f:
                f.write('{"fsdp_unit_layers": 0}')
            for args, message in [
                (["--settings", os.path.join(folder, "none.json")], "--settings "),
                (["--settings", listed], "not a JSON object"),
                (["--steps", "0"], "--steps must be at least 1"),
                (["--trace", folder, "--trace-steps", "0"], "--trace-steps must be at least 1"),
                ([], "RANK is not set"),
                (["--framework", "fsdp2", "--settings", fsdp2_odd], "'limit_all_gathers' is not one of"),
                (["--framework", "fsdp2", "--settings", fsdp2_unit], "fsdp_unit_layers must be a whole number"),
            ]:
                with self.subTest(args=args):
                    env = {k: v for k, v in os.environ.items() if k not in ("RANK", "SLURM_PROCID")}
                    framework = [] if "--framework" in args else ["--framework", "ddp"]
                    p = subprocess.run([sys.executable, os.path.join(HARNESS, "training_job.py"), *framework, *args],
                                       capture_output=True, text=True, timeout=60, env=env)
                    self.assertEqual(p.returncode, 2, p.stderr)
                    self.assertEqual(len(p.stderr.strip().splitlines()), 1, p.stderr)
                    self.assertIn(message, p.stderr)


class TinyJob(unittest.TestCase):
    def test_ddp_fsdp2_and_zero3_train_and_say_each_steps_time(self):
        why = frameworks_missing()
        if why:
            self.skipTest(why)
        # FSDP2 with every knob away from its default: two layers to a unit, kept gathered
        # to backward, the next unit prefetched.
        fsdp2 = {"reshard_after_forward": False, "forward_prefetch": True, "fsdp_unit_layers": 2}
        for framework, settings in (("ddp", {}), ("fsdp2", fsdp2), ("zero3", {})):
            with self.subTest(framework=framework), tempfile.TemporaryDirectory() as folder:
                settings_path = os.path.join(folder, "settings.json")
                with open(settings_path, "w") as f:
                    json.dump(settings, f)
                traces = os.path.join(folder, "trace")
                p = subprocess.run([os.path.join(VENV, "bin", "torchrun"), "--standalone", "--nproc-per-node", "2",
                                    os.path.join(HARNESS, "training_job.py"), "--framework", framework, "--shape",
                                    "small", "--settings", settings_path, "--steps", "2", "--trace", traces,
                                    "--trace-steps", "3"],
                                   capture_output=True, text=True, timeout=900)
                self.assertEqual(p.returncode, 0, p.stderr[-2000:])
                result = json.loads([line for line in p.stdout.splitlines() if line.startswith("{")][-1])
                self.assertEqual(result["ranks"], 2)
                self.assertEqual(len(result["step_seconds"]), 2)
                self.assertTrue(all(t > 0 for t in result["step_seconds"]))
                self.assertEqual(sorted(os.listdir(traces)), ["rank0.json.gz", "rank1.json.gz"])
                # Each traced step is marked as the profiler marks a step: --tune-against takes
                # the job's step and its step-to-step spread from them.
                with gzip.open(os.path.join(traces, "rank0.json.gz"), "rt") as f:
                    events = json.load(f)["traceEvents"]
                names = {event.get("name", "") for event in events}
                self.assertEqual(len({name for name in names if name.startswith("ProfilerStep#")}), 3, names)
                if framework == "fsdp2":
                    # The small shape's two layers are one unit, kept gathered to backward:
                    # a step gathers the root and that unit once each, in forward only.
                    gathers = [e for e in events if e.get("name") == "c10d::_allgather_base_"]
                    self.assertEqual(len(gathers), 2 * 3, sorted(names))
                    self.assertIn("FSDP::pre_forward (layers.0, layers.1)", names)


if __name__ == "__main__":
    unittest.main()
