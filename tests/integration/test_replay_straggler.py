"""bench-replay's straggler and its matching of ranks whose windows differ, on real traces.

tests/fixtures/traces/ddp-sleep-before-backward: 4 gloo ranks of DDP on one host, rank 2
sleeping 50 ms between forward and backward in each of 3 profiled steps. DDP issues its
buckets asynchronously, so rank 2 issues every bucket late while only the first bucket's
duration shows it: the ranks share the host's clock, and the straggler is read from when
each rank called. The truth is computed here from the raw JSON (the c10d:: operators'
start times, gloo's ranges). Windows that do not line up are cut from the fixtures in the
test's own folder: one rank whose profiler started a step later.
"""
import gzip
import json
import os
import re
import unittest

from replay_test_support import C10D_OPS, TRACES, FolderCase, load, merged, rank_files, run

SLEEPER = "ddp-sleep-before-backward"
PUBLIC_PAIR = os.path.join(TRACES, "public", "hta-128ranks")


def issue_times(path):
    """The rank's c10d:: calls' start times in seconds, on the epoch the trace names."""
    doc = load(path)
    base = doc["baseTimeNanoseconds"] * 1e-9
    return [base + ts * 1e-6 for ts in sorted(e["ts"] for e in doc["traceEvents"]
                                               if e.get("name", "").startswith("c10d::"))]


def gloo_durations(path):
    return [e["dur"] for e in sorted((e for e in load(path)["traceEvents"] if e.get("name", "").startswith("gloo:")),
                                     key=lambda e: e["ts"])]


class Straggler(FolderCase):
    def replay(self, folder, name):
        path = os.path.join(self.dir, name + ".json")
        code, out, err = run(folder, "--json", path, "--force")
        self.assertEqual(code, 0, err)
        with open(path) as f:
            return out, json.load(f)

    def test_the_rank_that_slept_before_every_backward_is_named_with_the_time_it_cost(self):
        out, doc = self.replay(os.path.join(TRACES, SLEEPER), "sleeper")
        issued = [issue_times(path) for path in rank_files(SLEEPER)]
        calls = len(issued[0])
        self.assertEqual(doc["calls_per_rank"], calls)
        last = [max(range(4), key=lambda r: issued[r][i]) for i in range(calls)]
        self.assertGreaterEqual(last.count(2), 0.8 * calls)
        # Each other rank waits from its call to the last rank's, its overlapping waits once.
        caused = sum(sum(end - start for start, end in merged(
            [(issued[r][i], issued[2][i]) for i in range(calls) if last[i] == 2])) for r in (0, 1, 3))
        self.assertEqual(doc["straggler"], 2)
        self.assertTrue(doc["verdict"].startswith(f"straggler: rank 2 (vm) cost the others {caused * 1e3:.3g} ms of "
                                                  f"waiting"), doc["verdict"])
        self.assertRegex(doc["verdict"], rf"it arrives last at {last.count(2)} of {calls} calls, ")
        self.assertRegex(doc["verdict"], r"by chance alone one of 4 ranks is last at .* under 0\.1 % of the time\)$")
        ranks = {r["rank"]: r for r in doc["ranks"]}
        self.assertEqual(ranks[2]["last_arrivals"], last.count(2))
        self.assertIn("# note: arrival is when each rank called, on the epoch, where torch.profiler's baseTimeNanoseconds puts "
                      "every trace's times:", out)
        # Read from durations, rank 2's gloo run is the shortest at no more than half the calls:
        # after a step's first buckets the others' buckets queue behind one another. Last at
        # no more than twice its share of the calls, it was not named by how often it was last.
        runs = [gloo_durations(path) for path in rank_files(SLEEPER)]
        shortest = [min(range(4), key=lambda r: runs[r][i]) for i in range(calls)]
        self.assertLessEqual(shortest.count(2), calls / 2)

    def test_ranks_of_several_hosts_without_the_epoch_are_read_from_durations(self):
        """Without one host or baseTimeNanoseconds the ranks' clocks do not compare: who came
        last is read from the durations. Rank 2 is last at fewer calls there, but still the
        one whose lateness cost the others the most waiting."""
        folder = os.path.join(self.dir, "no-common-clock")
        os.makedirs(folder, exist_ok=True)
        for path in rank_files(SLEEPER):
            doc = load(path)
            doc["host_name"] = "node" + str(doc["distributedInfo"]["rank"])
            del doc["baseTimeNanoseconds"]
            with gzip.open(os.path.join(folder, os.path.basename(path)), "wt") as f:
                json.dump(doc, f)
        out, doc = self.replay(folder, "no-common-clock")
        self.assertEqual(doc["straggler"], 2)
        self.assertNotIn("arrival is when each rank called", out)
        runs = [gloo_durations(path) for path in rank_files(SLEEPER)]
        shortest = [min(range(4), key=lambda r: runs[r][i]) for i in range(len(runs[0]))]
        ranks = {r["rank"]: r for r in doc["ranks"]}
        self.assertEqual(ranks[2]["last_arrivals"], shortest.count(2))


class MisalignedWindows(FolderCase):
    def test_a_rank_whose_profiler_started_a_step_later_is_matched_on_the_common_steps(self):
        """llama-fsdp2-3steps with rank 1's first profiled step cut out of its trace: the ranks
        are matched on steps 2 and 3, and the note says what was left out."""
        case = "llama-fsdp2-3steps"
        folder = os.path.join(self.dir, "late-profiler")
        os.makedirs(folder, exist_ok=True)
        per_step = {}
        for path in rank_files(case):
            doc = load(path)
            steps = {e["name"]: e["ts"] for e in doc["traceEvents"] if e.get("name", "").startswith("ProfilerStep#")}
            if doc["distributedInfo"]["rank"] == 1:
                doc["traceEvents"] = [e for e in doc["traceEvents"] if e.get("ts", steps["ProfilerStep#2"]) >=
                                      steps["ProfilerStep#2"]]
            else:
                per_step = {n: sum(1 for e in doc["traceEvents"] if e.get("name", "").startswith("c10d::") and
                                   ts <= e["ts"] < ts + next(x["dur"] for x in doc["traceEvents"] if x.get("name") == n))
                            for n, ts in steps.items()}
            with gzip.open(os.path.join(folder, os.path.basename(path)), "wt") as f:
                json.dump(doc, f)
        json_path = os.path.join(self.dir, "late-profiler.json")
        code, out, err = run(folder, "--json", json_path, "--force")
        self.assertEqual(code, 0, err)
        with open(json_path) as f:
            doc = json.load(f)
        shared = per_step["ProfilerStep#2"] + per_step["ProfilerStep#3"]
        total = shared + per_step["ProfilerStep#1"]
        self.assertEqual(doc["calls_per_rank"], shared)
        self.assertEqual({s["step"]: s["calls"] for s in doc["steps"]},
                         {1: 0, 2: per_step["ProfilerStep#2"], 3: per_step["ProfilerStep#3"]})
        for rank in (0, 2, 3):
            self.assertIn(f"# note: matched {shared} of {total} calls of rank {rank}; {total - shared} outside the "
                          f"common window\n", out)
        self.assertNotRegex(out, r"calls of rank 1;")
        self.assertIn("they are matched on the calls they share", out)
        self.assertEqual(sum(c["calls"] for c in doc["collectives"]), shared)

    def test_two_ranks_of_a_128_rank_job_calling_from_two_threads_are_matched_thread_by_thread(self):
        """Ranks 0 and 1 of a real 128-rank job: allreduces from one thread, all-to-alls and
        all-gathers from another, in a different order on each rank and one all-to-all on
        the other thread of rank 1. Each thread's calls are matched with the other rank's
        thread that shares the longest run of calls of one operation and size (an
        all-to-all's by operation alone; an allreduce's size is its nccl: range's tensor),
        computed here from the raw JSON."""
        threads = []
        for name in ("rank0.json.gz", "rank1.json.gz"):
            calls = {}
            for e in sorted(load(os.path.join(PUBLIC_PAIR, name))["traceEvents"], key=lambda e: e.get("ts", 0)):
                op = {**C10D_OPS, "c10d::alltoall_base_": "alltoall"}.get(e.get("name"))
                if op:
                    size = None if op == "alltoall" else json.dumps(e["args"]["Input Dims"][0])
                    calls.setdefault(e["tid"], []).append((op, size))
                elif e.get("cat") == "user_annotation" and e.get("name", "").startswith("nccl:"):
                    # An allreduce's operator holds a TensorList with no shape: the nccl:
                    # range nested in it holds the tensor, and sizes the call.
                    last = calls.get(e["tid"], [])
                    if last and last[-1][1] == "[]":
                        last[-1] = (last[-1][0], json.dumps(e["args"]["Input Dims"][0]))
            threads.append(list(calls.values()))

        def longest_run(a, b):
            best, previous = 0, [0] * (len(b) + 1)
            for x in a:
                current = [0] + [previous[j] + 1 if x == y else 0 for j, y in enumerate(b)]
                best, previous = max(best, *current), current
            return best

        pairs = sorted(((longest_run(a, b), i, j) for i, a in enumerate(threads[0]) for j, b in enumerate(threads[1])),
                       reverse=True)
        shared, used = 0, set()
        for length, i, j in pairs:
            if ("a", i) not in used and ("b", j) not in used:
                used |= {("a", i), ("b", j)}
                shared += length
        json_path = os.path.join(self.dir, "hta-128ranks.json")
        code, out, err = run(PUBLIC_PAIR, "--json", json_path, "--force")
        self.assertEqual(code, 0, err)
        with open(json_path) as f:
            doc = json.load(f)
        self.assertEqual(doc["calls_per_rank"], shared)
        for rank in (0, 1):
            total = sum(len(t) for t in threads[rank])
            self.assertIn(f"# note: matched {shared} of {total} calls of rank {rank}; {total - shared} outside the "
                          f"common window\n", out)
        self.assertTrue(doc["verdict"].startswith("no straggler can be named: 2 of the job's 128 ranks were read"))


if __name__ == "__main__":
    unittest.main()
