"""bench-replay under mpirun: the ranks divide the traces between them, and what they
write is what one process writes (provenance's time, command line and launcher
environment aside); a bad file among them is one error line and exit 2 from the job,
with no file left."""
import gzip
import json
import os
import shutil
import subprocess
import tempfile
import unittest

from replay_test_support import BIN, MPI_ENV, MPIEXEC, TRACES

# Fields of the provenance that say when and how the command was started, not what it read.
STARTED = ("started_at", "command_line", "environment")


def masked(path):
    with open(path) as f:
        document = json.load(f)
    for field in STARTED:
        document["provenance"].pop(field)
    return document


def without_timing(stdout):
    """The printed report less the lines that say how long the reading took: the last
    line, and in a divided reading, the slowest rank's share after it."""
    lines = stdout.splitlines()
    if lines[-1].startswith("# divided over "):
        lines.pop()
    assert lines[-1].startswith("# ") and " read in " in lines[-1], lines[-1]
    return lines[:-1]


def replay(folder, args, ranks=None):
    cmd = [BIN, *args] if ranks is None else [MPIEXEC, "-q", "--oversubscribe", "-np", str(ranks), BIN, *args]
    return subprocess.run(cmd, capture_output=True, text=True, env=MPI_ENV, cwd=folder, timeout=180)


@unittest.skipUnless(MPIEXEC, "COMMBENCH_MPIEXEC not set")
class Distributed(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp()

    def tearDown(self):
        shutil.rmtree(self.dir)

    def assert_ranks_write_the_one_processs(self, inputs, ranks):
        alone = replay(self.dir, [*inputs, "--json", "one.json", "--force"])
        self.assertEqual(alone.returncode, 0, alone.stderr)
        job = replay(self.dir, [*inputs, "--json", "job.json", "--force"], ranks)
        self.assertEqual(job.returncode, 0, job.stdout + job.stderr)
        self.assertEqual(job.stderr, "")
        self.assertEqual(without_timing(job.stdout), without_timing(alone.stdout))
        self.assertEqual(masked(os.path.join(self.dir, "job.json")), masked(os.path.join(self.dir, "one.json")))
        return masked(os.path.join(self.dir, "job.json"))

    def test_four_ranks_write_the_json_one_process_writes(self):
        document = self.assert_ranks_write_the_one_processs([os.path.join(TRACES, "llama-ddp")], 4)
        job = replay(self.dir, [os.path.join(TRACES, "llama-ddp")], 4)
        self.assertRegex(job.stdout.splitlines()[-1],
                         r"^# divided over 4 ranks: the slowest, rank [0-3], read 1 file of [0-9.]+KiB in ")
        # One process under mpirun reads alone, as without it.
        alone = replay(self.dir, [os.path.join(TRACES, "llama-ddp")], 1)
        self.assertEqual(alone.returncode, 0, alone.stderr)
        self.assertRegex(alone.stdout.splitlines()[-1], r"^# 4 traces read in ")
        self.assertEqual([rank["rank"] for rank in document["ranks"]], [0, 1, 2, 3])
        self.assertEqual(document["world_size"], 4)

    def test_the_straggler_is_named_from_the_readings_sent(self):
        # Arrival from when each rank called, on the epoch: issue times, threads and epoch
        # offsets travel with the readings.
        document = self.assert_ranks_write_the_one_processs([os.path.join(TRACES, "ddp-sleep-before-backward")], 3)
        self.assertEqual(document["straggler"], 2)

    def test_a_folder_with_a_file_passed_over_and_more_ranks_than_traces(self):
        # zero3's folder holds ds_config.json and DeepSpeed's logs beside the traces.
        folder = os.path.join(self.dir, "zero3")
        shutil.copytree(os.path.join(TRACES, "zero3"), folder)
        for name in os.listdir(folder):
            if not name.endswith(".json") and not name.endswith(".json.gz"):
                os.remove(os.path.join(folder, name))
        document = self.assert_ranks_write_the_one_processs([folder], 6)
        self.assertTrue(any("ds_config.json passed over" in note for note in document["provenance"]["notes"]))
        public = os.path.join(TRACES, "public", "hta-nccl2.17-2ranks")
        self.assertEqual(self.assert_ranks_write_the_one_processs([public], 3)["backend"], "nccl")

    def test_the_summary_ends_the_job_as_it_ends_one_process(self):
        # Two ranks of a 128-rank job, whatever the summary makes of them (an error, where
        # their calls do not line up): said once, as one process says it.
        public = os.path.join(TRACES, "public", "hta-128ranks")
        alone = replay(self.dir, [public, "--json", "one.json"])
        job = replay(self.dir, [public, "--json", "job.json"], 2)
        self.assertEqual(job.returncode, alone.returncode, job.stderr)
        self.assertEqual(job.stderr, alone.stderr)
        printed = [without_timing(p.stdout) if p.stdout else [] for p in (job, alone)]
        self.assertEqual(printed[0], printed[1])
        self.assertEqual(os.path.exists(os.path.join(self.dir, "job.json")),
                         os.path.exists(os.path.join(self.dir, "one.json")))

    def test_the_schedule_dumped_and_the_model_compared_are_the_one_processs(self):
        model = ["--pattern", "ddp", "--layers", "2", "--hidden", "256", "--ffn", "512", "--heads", "4",
                 "--kv-heads", "2", "--vocab", "1000", "--seq", "32", "--micro-batch", "4", "--dtype", "float32"]
        traces = os.path.join(TRACES, "llama-ddp")
        alone = replay(self.dir, [traces, "--dump-schedule", "one.jsonl", *model])
        job = replay(self.dir, [traces, "--dump-schedule", "job.jsonl", *model], 2)
        self.assertEqual((alone.returncode, job.returncode), (0, 0), alone.stderr + job.stderr)
        self.assertEqual(without_timing(job.stdout), without_timing(alone.stdout))
        with open(os.path.join(self.dir, "one.jsonl")) as one, open(os.path.join(self.dir, "job.jsonl")) as two:
            self.assertEqual(two.read(), one.read())

    def test_a_deepspeed_log_is_read_by_one_rank_as_one_process_reads_it(self):
        log = os.path.join(TRACES, "zero3", "comms-summary.txt")
        document = self.assert_ranks_write_the_one_processs([log, "--ranks", "4"], 3)
        self.assertEqual(document["world_size"], 4)

    def test_a_bad_file_among_them_is_one_line_and_exit_2(self):
        folder = os.path.join(self.dir, "bad")
        shutil.copytree(os.path.join(TRACES, "llama-ddp"), folder)
        with gzip.open(os.path.join(folder, "rank2.json.gz"), "wt") as f:
            f.write('{"traceEvents": [')
        alone = replay(self.dir, [folder, "--json", "one.json"])
        self.assertEqual(alone.returncode, 2, alone.stderr)
        for ranks in (2, 4):
            job = replay(self.dir, [folder, "--json", "job.json"], ranks)
            self.assertEqual(job.returncode, 2, job.stdout + job.stderr)
            self.assertEqual(job.stderr.splitlines(), alone.stderr.splitlines())
            self.assertRegex(job.stderr, r"^bench-replay: error: .*rank2\.json\.gz: not a whole JSON trace")
            self.assertEqual(job.stdout, "")
            self.assertFalse(os.path.exists(os.path.join(self.dir, "job.json")))

    def test_a_file_that_is_not_there_is_named_once(self):
        missing = os.path.join(self.dir, "rank9.json")
        job = replay(self.dir, [os.path.join(TRACES, "llama-ddp", "rank0.json.gz"), missing, "--json", "job.json"], 4)
        self.assertEqual(job.returncode, 2, job.stdout + job.stderr)
        self.assertEqual(job.stderr, f"bench-replay: error: {missing}: cannot read (No such file or directory)\n")
        self.assertFalse(os.path.exists(os.path.join(self.dir, "job.json")))


if __name__ == "__main__":
    unittest.main()
