"""bench-replay on bad input: traces cut short, of another format, of different runs or
without communication, folders without traces, result files that would overwrite what is
read, flags that make no sense together. Bad input is exit 2 with one line naming the file
and no result file left behind.
"""
import gzip
import json
import os
import shutil
import tempfile
import unittest

from replay_test_support import HERE, TRACES, load, rank_files, run


class BadInput(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="commbench-replay-bad-")
        self.outputs = [os.path.join(self.dir, "r.csv"), os.path.join(self.dir, "r.json")]

    def tearDown(self):
        shutil.rmtree(self.dir, ignore_errors=True)

    def refused(self, *traces):
        code, out, err = run(*traces, "--csv", self.outputs[0], "--json", self.outputs[1])
        self.assertEqual(code, 2, out + err)
        self.assertEqual(len(err.splitlines()), 1, err)
        self.assertTrue(err.startswith("bench-replay: error: "), err)
        for path in self.outputs:
            self.assertFalse(os.path.exists(path), f"{path} left behind")
        return err.strip()

    def path(self, name):
        return os.path.join(self.dir, name)

    def test_a_schedule_of_calls_on_a_group_of_some_ranks(self):
        # HSDP on gloo: groups of 2 and of 4; an all-gather's output over its input says 2.
        dump = self.path("h.jsonl")
        err = self.refused(os.path.join(TRACES, "llama-hsdp"), "--dump-schedule", dump)
        self.assertRegex(err, r"^bench-replay: error: --dump-schedule: .*llama-hsdp/rank0\.json\.gz: call 1 "
                              r"\(c10d::_allgather_base_\) runs on a group of 2 of the 4 ranks")
        self.assertFalse(os.path.exists(dump))

    def test_the_fabric_is_not_measured_on_one_process(self):
        # A collective of one process is a copy, and says nothing of the fabric.
        self.assertEqual(self.refused(os.path.join(TRACES, "straggler"), "--measure-fabric", "--backend", "mpi"),
                         "bench-replay: error: --measure-fabric: measures the job's collectives between this job's "
                         "ranks, and this job has one; run it under mpirun or srun on 2 or more ranks (the traced "
                         "job had 4)")

    def test_the_flags_of_a_replayed_run_are_refused_without_it_and_a_reading_s_with_it(self):
        traces = os.path.join(TRACES, "zero3")
        self.assertEqual(self.refused(traces, "--backend", "mpi"),
                         "bench-replay: error: --backend: only with --replay or --measure-fabric (they run a job)")
        self.assertEqual(self.refused(traces, "-n", "3"),
                         "bench-replay: error: --iters: only with --replay or --measure-fabric (they run a job)")
        self.assertEqual(self.refused(traces, "--trace", self.path("t.json")),
                         "bench-replay: error: --trace: only with --replay (a run of the traced step)")
        self.assertEqual(self.refused(traces, "--measure-fabric", "--trace", self.path("t.json")),
                         "bench-replay: error: --trace: only with --replay (a run of the traced step)")
        with open(self.path("s.csv"), "w") as f:
            f.write("op,bytes,ranks,nodes,time_us,busbw_gbps\n")
        self.assertEqual(self.refused(traces, "--measure-fabric", "--fabric", self.path("s.csv")),
                         "bench-replay: error: --measure-fabric: measures the fabric here; --fabric reads it from "
                         "a file (give one)")
        self.assertIn("--measure-fabric: measures the fabric; --dump-schedule and the model flags",
                      self.refused(traces, "--measure-fabric", "--dump-schedule", self.path("s.jsonl")))
        self.assertEqual(self.refused(traces, "--measure-fabric", "--replay"),
                         "bench-replay: error: --measure-fabric: not with --replay (run them one after the other)")
        self.assertIn("--replay: runs the traced step; --fabric, --dump-schedule and the model flags",
                      self.refused(traces, "--replay", "--dump-schedule", self.path("s.jsonl")))
        self.assertIn("--replay: runs the traced step",
                      self.refused(traces, "--replay", "--pattern", "zero3", "--layers", "2"))
        self.assertFalse(os.path.exists(self.path("t.json")))

    def test_a_file_to_read_that_is_not_there_is_named_first(self):
        # Before the model flags are checked: the file would have said what they ask for.
        self.assertEqual(self.refused(os.path.join(TRACES, "llama-zero3"), "--deepspeed-config", self.path("none.json")),
                         f"bench-replay: error: --deepspeed-config {self.path('none.json')}: cannot read (No such file "
                         "or directory)")
        self.assertEqual(self.refused(os.path.join(TRACES, "llama-zero3"), "--schedule", self.path("none.jsonl"),
                                      "--tp", "2"),
                         f"bench-replay: error: --schedule {self.path('none.jsonl')}: cannot read (No such file or "
                         "directory)")

    def test_help_says_what_dtype_and_schedule_mean_here(self):
        code, out, err = run("--help")
        self.assertEqual(code, 0, err)
        text = " ".join(out.split())
        self.assertIn("also the type of the calls an Nsight Systems report gives only element counts for (default "
                      "float32)", text)
        self.assertIn("to compare the job's traced step with, instead of a modelled pattern", text)
        self.assertNotIn("to run, predict or trace instead of a modelled pattern", text)

    def test_a_model_flag_without_a_model_is_refused_not_passed_over(self):
        traces = os.path.join(TRACES, "straggler")
        for flag in (["--tp", "2"], ["--tflops", "100"], ["--compute-scale", "0.5"], ["--tie-embeddings"],
                     ["--hidden", "10"], ["--first-bucket-mb", "1"]):
            with self.subTest(flag=flag):
                self.assertEqual(self.refused(traces, *flag),
                                 f"bench-replay: error: {flag[0]}: describes the step to compare the job's with; give "
                                 "--pattern, --preset, --layers, --deepspeed-config or --schedule too")
        # With a run of the traced step, a model flag has no place either.
        self.assertIn("--replay: runs the traced step", self.refused(traces, "--replay", "--tp", "2"))
        # --dtype also types the calls of a report that gives only counts.
        code, _, err = run(traces, "--dtype", "float")
        self.assertEqual(code, 0, err)

    def test_a_topology_that_is_not_bench_topologys(self):
        sweep = os.path.join(HERE, "..", "..", "results", "mpi-host-2core", "replay-fabric", "sweep.csv")
        dump = self.path("s.jsonl")
        err = self.refused(os.path.join(TRACES, "llama-ddp"), "--topology", sweep, "--dump-schedule", dump)
        self.assertTrue(err.endswith("sweep.csv: not a file bench-topology --json wrote (no \"nodes\")"), err)
        self.assertFalse(os.path.exists(dump))
        self.assertIn("--topology", self.refused(os.path.join(TRACES, "llama-ddp"), "--topology", self.path("none")))

    def test_a_gzip_cut_short_names_the_file_and_offset(self):
        with open(rank_files("fsdp2")[0], "rb") as f:
            data = f.read()
        cut = self.path("cut.json.gz")
        with open(cut, "wb") as f:
            f.write(data[: len(data) // 2])
        err = self.refused(cut)
        self.assertRegex(err, r"cut\.json\.gz: cannot read at byte [0-9]+ of its text \(.+\)$")

    def test_a_json_cut_short_names_the_byte(self):
        with gzip.open(rank_files("ddp-default")[0], "rb") as f:
            text = f.read()
        cut = self.path("cut.json")
        with open(cut, "wb") as f:
            f.write(text[:5000])
        self.assertTrue(self.refused(cut).endswith("cut.json: not a whole JSON trace: cut short after byte 5000"))

    def test_a_file_of_another_format(self):
        other = self.path("sweep.csv")
        with open(other, "w") as f:
            f.write("op,bytes\nallreduce,8\n")
        # Not named .json: read as a DeepSpeed comms log, which it is not either.
        self.assertTrue(self.refused(other).endswith(
            "sweep.csv: neither a DeepSpeed log_summary() table nor a verbose comms_logger line in it (and not a "
            ".json trace)"))
        misnamed = self.path("trace.json")
        shutil.copy(other, misnamed)
        self.assertIn("trace.json: not a whole JSON trace: malformed at byte 1", self.refused(misnamed))

    def test_a_deepspeed_log_without_ranks_cut_short_or_with_traces(self):
        log = os.path.join(TRACES, "zero3", "comms-summary.txt")
        self.assertTrue(self.refused(log).endswith(
            "comms-summary.txt: a DeepSpeed comms log does not say the world size: give --ranks N"))
        self.assertIn("a DeepSpeed comms log is read on its own", self.refused(log, os.path.join(TRACES, "zero3")))
        self.assertEqual(self.refused(os.path.join(TRACES, "zero3"), "--ranks", "4"),
                         "bench-replay: error: --ranks: only for a DeepSpeed comms log (a trace says its world size)")
        with open(log) as f:
            text = f.read()
        cut_at = text.index("32.03 MB") + 30
        cut = self.path("cut.log")
        with open(cut, "w") as f:
            f.write(text[:cut_at])
        line_start = text.rindex("\n", 0, cut_at) + 1
        self.assertTrue(self.refused(cut, "--ranks", "4").endswith(
            f"cut.log: line {text[:cut_at].count(chr(10)) + 1} (byte offset {line_start}): the file ends inside a "
            "log_summary row (a cut log?)"))
        self.assertIn("--ranks", self.refused(log, "--ranks", "0"))

    def test_a_trace_without_communication(self):
        doc = load(rank_files("ddp-default")[0])
        doc["traceEvents"] = [e for e in doc["traceEvents"]
                              if not e.get("name", "").startswith(("c10d::", "gloo:"))]
        quiet = self.path("quiet.json")
        with open(quiet, "w") as f:
            json.dump(doc, f)
        self.assertRegex(self.refused(quiet), r"quiet\.json: no communication in the trace of rank 0 \([0-9]+ events read\)$")
        # A real one: FSDP2 on a single rank runs its hooks (FSDP::pre_forward, ...) but no
        # collective, as a one-GPU machine runs it.
        one_rank = os.path.join(TRACES, "llama-fsdp2-1rank")
        doc = load(rank_files("llama-fsdp2-1rank")[0])
        self.assertEqual(doc["distributedInfo"]["world_size"], 1)
        self.assertTrue(any(e.get("name", "").startswith("FSDP::pre_forward") for e in doc["traceEvents"]))
        self.assertRegex(self.refused(one_rank), r"llama-fsdp2-1rank/rank0\.json\.gz: no communication in the trace "
                                                 r"of rank 0 \([0-9]+ events read\)$")

    def test_ranks_of_different_runs_or_twice(self):
        ddp, fsdp = rank_files("ddp-default"), rank_files("fsdp2")
        self.assertIn("the traces do not line up", self.refused(ddp[0], *fsdp[1:]))
        self.assertIn("are both rank 0", self.refused(ddp[0], ddp[0]))
        # The same job and step, recorded half an hour apart: the calls never met.
        straggler = rank_files("straggler")
        self.assertRegex(self.refused(ddp[0], ddp[1], *straggler[2:]),
                         r"call 1 \(allreduce\) ended in .*ddp-default/rank0\.json\.gz [0-9]+ s before "
                         r".*straggler/rank[23]\.json\.gz called it: traces of different runs")

    def test_some_of_the_ranks_name_no_straggler(self):
        code, out, err = run(rank_files("straggler")[0], "--json", self.outputs[1])
        self.assertEqual(code, 0, err)
        self.assertIn("verdict: no straggler can be named: 1 of the job's 4 ranks was read", out)
        with open(self.outputs[1]) as f:
            doc = json.load(f)
        self.assertIsNone(doc["straggler"])
        self.assertEqual(doc["provenance"]["nodes"], 0)  # not known from one rank of four
        # Every rank: the hosts are the traces'.
        code, out, err = run(os.path.join(TRACES, "straggler"), "--json", self.outputs[1], "--force")
        self.assertEqual(code, 0, err)
        with open(self.outputs[1]) as f:
            doc = json.load(f)
        self.assertEqual(doc["straggler"], 2)
        self.assertEqual(doc["provenance"]["rank_hosts"], ["vm"] * 4)
        self.assertEqual(doc["provenance"]["nodes"], 1)

    def test_a_result_file_that_is_a_file_read_or_another_result_file(self):
        folder = self.path("job")
        shutil.copytree(os.path.join(TRACES, "straggler"), folder)
        rank0 = os.path.join(folder, "rank0.json.gz")
        with open(rank0, "rb") as f:
            before = f.read()
        sweep = self.path("sweep.csv")
        shutil.copy(os.path.join(HERE, "..", "..", "results", "mpi-host-2core", "replay-fabric", "sweep.csv"), sweep)
        cases = [
            ([folder, "--csv", rank0, "--force"], f"--csv {rank0}: a file this run reads (TRACE {rank0})"),
            ([folder, "--json", os.path.join(folder, "..", "job", "rank0.json.gz"), "--force"], "a file this run reads"),
            ([folder, "--fabric", sweep, "--csv", sweep, "--force"], f"--csv {sweep}: a file this run reads (--fabric"),
            ([folder, "--dump-schedule", self.path("d.out"), "--csv", self.path("d.out")],
             f"--dump-schedule: same file as --csv ({self.path('d.out')})"),
        ]
        for args, message in cases:
            code, out, err = run(*args)
            self.assertEqual(code, 2, out + err)
            self.assertEqual(len(err.splitlines()), 1, err)
            self.assertIn(message, err)
        self.assertFalse(os.path.exists(self.path("d.out")), "the schedule was written before the refusal")
        with open(rank0, "rb") as f:
            self.assertEqual(f.read(), before, "the trace was overwritten")
        with open(sweep) as f, open(os.path.join(HERE, "..", "..", "results", "mpi-host-2core", "replay-fabric",
                                                 "sweep.csv")) as original:
            self.assertEqual(f.read(), original.read(), "the sweep was overwritten")
        # A result file in the traces' folder that is not one of them is fine.
        code, out, err = run(folder, "--csv", os.path.join(folder, "replay.csv"))
        self.assertEqual(code, 0, out + err)

    def test_a_fabric_file_that_cannot_be_read(self):
        code, _, err = run(os.path.join(TRACES, "ddp-default"), "--fabric", self.path("none.csv"))
        self.assertEqual(code, 2)
        self.assertEqual(err.strip(), f"bench-replay: error: --fabric {self.path('none.csv')}: cannot read "
                                      "(No such file or directory)")

    def test_a_folder_of_json_but_no_trace(self):
        folder = self.path("configs")
        os.mkdir(folder)
        shutil.copy(os.path.join(TRACES, "zero3", "ds_config.json"), folder)
        self.assertRegex(self.refused(folder), r"no trace among the files given \(.*ds_config\.json passed over: "
                                               r"not a Chrome trace\)$")
        # Named on the command line, a file that is no trace is an error of its own.
        self.assertTrue(self.refused(os.path.join(folder, "ds_config.json")).endswith(
            "ds_config.json: not a Chrome trace (no traceEvents array)"))

    def test_json_that_is_no_object_in_a_folder_is_passed_over(self):
        folder = self.path("job")
        shutil.copytree(os.path.join(TRACES, "straggler"), folder)
        with open(os.path.join(folder, "list.json"), "w") as f:
            f.write("[1, 2]\n")
        code, out, err = run(folder)
        self.assertEqual(code, 0, err)
        self.assertIn(f"# note: {folder}/list.json passed over: not a Chrome trace\n", out)
        self.assertTrue(self.refused(os.path.join(folder, "list.json")).endswith(
            "list.json: not a Chrome trace (its JSON is not an object with a traceEvents array)"))

    def test_a_pipe_is_refused_not_waited_on(self):
        fifo = self.path("trace.json")
        os.mkfifo(fifo)
        self.assertTrue(self.refused(fifo).endswith(
            "trace.json: not a file or folder of traces (a pipe or device is not read)"))

    def test_a_folder_without_traces_and_no_trace_at_all(self):
        empty = self.path("empty")
        os.mkdir(empty)
        self.assertTrue(self.refused(empty).endswith(
            "empty: no trace (.json, .json.gz) or Nsight Systems report (.sqlite, .sqlite.gz, .nsys-rep) in this folder"))
        code, _, err = run()
        self.assertEqual(code, 2)
        self.assertIn("TRACE", err)


if __name__ == "__main__":
    unittest.main()
