"""bench-replay on real Nsight Systems reports (tests/fixtures/nsys: each of 4 gloo ranks on
CPU under its own `nsys profile`, PyTorch's NVTX ranges on, exported to SQLite by nsys).

What the command reports is checked against the raw reports, read here with Python's own
sqlite3: the calls per operation and their sizes come from the `c10d::` NVTX ranges, their
runs from gloo's ranges, the exposed time from the `aten::` ranges of the calling thread, the
ranks from the files' names; the same job recorded by torch.profiler
(tests/fixtures/traces/llama-ddp) gives the same calls and sizes. Bad input is exit 2 with
one line naming the file and no result file left behind. A .nsys-rep, exported by nsys
for bench-replay, is test_replay_nsys_export's.
"""
import gzip
import json
import os
import re
import shutil
import sqlite3
import unittest

from replay_test_support import C10D_OPS, TRACES, FolderCase, merged, run

NSYS = os.path.join(os.path.dirname(TRACES), "nsys")
CASES = ("nsys-llama-ddp", "nsys-straggler")


def report_files(case):
    folder = os.path.join(NSYS, case)
    return sorted(os.path.join(folder, name) for name in os.listdir(folder) if name.endswith(".sqlite.gz"))


def open_report(path, folder):
    """The gzipped export as an SQLite file in `folder` (Python's sqlite3 reads files)."""
    plain = os.path.join(folder, os.path.basename(path)[:-3])
    with gzip.open(path, "rb") as src, open(plain, "wb") as dst:
        shutil.copyfileobj(src, dst)
    return plain


def raw_calls(sqlite_path):
    """(op, bytes as float32) of every c10d:: range, in start order, from the raw rows."""
    db = sqlite3.connect(sqlite_path)
    rows = db.execute("SELECT coalesce(e.text, s.value) FROM NVTX_EVENTS e LEFT JOIN StringIds s ON e.textId = s.id "
                      "WHERE e.eventType = 59 ORDER BY e.start").fetchall()
    db.close()
    calls = []
    for (text,) in rows:
        name = text.split(",")[0]
        if name not in C10D_OPS:
            continue
        first = json.loads(re.search(r"sizes = (\[.*?\]\]|\[\])", text).group(1))[0]
        elements = 1
        for d in first:
            elements *= d
        calls.append((C10D_OPS[name], 0 if name == "c10d::barrier" else 4 * elements))
    return calls


def classes(doc):
    return sorted((c["op"], c["bytes"], c["calls"]) for c in doc["collectives"])


class NsysReports(FolderCase):
    PREFIX = "commbench-replay-nsys-"

    def replay(self, *paths, name="r"):
        json_path = os.path.join(self.dir, name + ".json")
        code, out, err = run(*paths, "--json", json_path, "--force")
        self.assertEqual(code, 0, err)
        self.assertEqual(err, "")
        with open(json_path) as f:
            return out, json.load(f)

    def test_calls_and_sizes_per_operation_are_the_reports(self):
        for case in CASES:
            with self.subTest(case=case):
                out, doc = self.replay(os.path.join(NSYS, case), name=case)
                raw = [raw_calls(open_report(path, self.dir)) for path in report_files(case)]
                for other in raw[1:]:
                    self.assertEqual(other, raw[0])
                expected = {}
                for call in raw[0]:
                    expected[call] = expected.get(call, 0) + 1
                self.assertEqual(classes(doc), sorted((op, size, n) for (op, size), n in expected.items()))
                self.assertEqual(doc["calls_per_rank"], len(raw[0]))
                self.assertEqual(doc["world_size"], 4)
                self.assertEqual([r["rank"] for r in doc["ranks"]], [0, 1, 2, 3])
                self.assertEqual(doc["provenance"]["settings"]["format"], "nsys")
                self.assertIn("# 4 reports read in", out)
                self.assertIn("calls are sized as float32 (--dtype)", out)

    def test_the_same_job_under_torch_profiler_gives_the_same_calls(self):
        _, from_nsys = self.replay(os.path.join(NSYS, "nsys-llama-ddp"), name="nsys")
        _, from_torch = self.replay(os.path.join(TRACES, "llama-ddp"), name="torch")
        self.assertEqual(classes(from_nsys), classes(from_torch))

    def test_each_rank_is_the_number_in_its_files_name(self):
        files = report_files("nsys-straggler")
        _, doc = self.replay(*reversed(files), name="reversed")
        self.assertEqual({r["rank"]: os.path.basename(r["file"]) for r in doc["ranks"]},
                         {n: f"rank{n}.sqlite.gz" for n in range(4)})

    def test_on_one_host_who_arrived_last_is_read_from_when_each_rank_called(self):
        """The 4 reports are of one host, whose clock (each report's own, put on the UTC clock
        by its capture's start) they share: a rank arrives at a call when its c10d:: range
        starts, and waits from then to the last rank's start, time when two of its calls
        waited at once counted once. Held against the raw rows. Rank 2 slept 50 ms before its
        backward, yet on this 2-core host rank 1's compute was slower still: rank 2 is last
        at the first bucket, 2.5 ms after rank 1, and rank 1 at the second, 54 ms after the
        others' median, so no rank is named and the verdict says which cost the most."""
        out, doc = self.replay(os.path.join(NSYS, "nsys-straggler"), name="straggler")
        issued = []
        for path in report_files("nsys-straggler"):
            db = sqlite3.connect(open_report(path, self.dir))
            epoch = db.execute("SELECT utcEpochNs FROM TARGET_INFO_SESSION_START_TIME").fetchone()[0]
            issued.append([(epoch + start) * 1e-9 for (start,) in db.execute(
                "SELECT start FROM NVTX_EVENTS WHERE text LIKE 'c10d::%' ORDER BY start")])
            db.close()
        self.assertEqual(len(issued[0]), doc["calls_per_rank"])
        last = [max(range(4), key=lambda r: issued[r][i]) for i in range(len(issued[0]))]
        self.assertEqual(last, [2, 1])
        ranks = {r["rank"]: r for r in doc["ranks"]}
        for rank in range(4):
            self.assertEqual(ranks[rank]["last_arrivals"], last.count(rank))
            waits = [(issued[rank][i], issued[last[i]][i]) for i in range(len(last)) if last[i] != rank]
            waited = sum(end - start for start, end in merged(waits))
            self.assertAlmostEqual(ranks[rank]["wait_seconds"], waited, places=5)
        caused = sum(issued[1][1] - issued[r][1] for r in (0, 2, 3))
        self.assertIsNone(doc["straggler"])
        self.assertTrue(doc["verdict"].startswith(
            f"no straggler named: rank 1 (vm) caused the most waiting, {caused * 1e3:.3g} ms"), doc["verdict"])
        self.assertIn("but it arrives last at one call only", doc["verdict"])
        self.assertEqual(doc["backend"], "gloo")
        self.assertIn("arrival is when each rank called, on the clock of the one host the ranks ran on, vm:", out)
        self.assertNotIn("waits and the straggler are from when each rank called", out)

    def test_without_gloos_ranges_who_called_last_is_read_from_the_ranks_clocks(self):
        """Without the backend's ranges (a report of PyTorch's operators alone) the ranges are
        the calls (DDP's async buckets: their queueing), so the rank that arrives last at a
        call is the one that called last. Each report's clock starts at its own capture; on
        the UTC clock the ranks' calls line up."""
        folder = os.path.join(self.dir, "calls-only")
        os.makedirs(folder, exist_ok=True)
        issued = []
        for index, path in enumerate(report_files("nsys-straggler")):
            plain = open_report(path, folder)
            db = sqlite3.connect(plain)
            db.execute("DELETE FROM NVTX_EVENTS WHERE text LIKE 'gloo:%'")
            if index == 3:  # as if on another node: its clock is another host's
                db.execute("UPDATE TARGET_INFO_SYSTEM_ENV SET value = 'node-b' WHERE name = 'Hostname'")
            db.commit()
            epoch = db.execute("SELECT utcEpochNs FROM TARGET_INFO_SESSION_START_TIME").fetchone()[0]
            issued.append([(epoch + start) * 1e-9 for (start,) in db.execute(
                "SELECT start FROM NVTX_EVENTS WHERE text LIKE 'c10d::%' ORDER BY start")])
            db.close()
        out, doc = self.replay(folder, name="calls-only")
        last = [max(range(4), key=lambda r: issued[r][i]) for i in range(len(issued[0]))]
        ranks = {r["rank"]: r for r in doc["ranks"]}
        for rank in range(4):
            self.assertEqual(ranks[rank]["last_arrivals"], last.count(rank))
            waited = sum(max(issued[r][i] for r in range(4)) - issued[rank][i] for i in range(len(last)))
            self.assertAlmostEqual(ranks[rank]["wait_seconds"], waited, places=5)
            self.assertIsNone(ranks[rank]["exposed_seconds"])
            # Nothing timed the calls: their ranges are their queueing, no time of the transfer.
            self.assertIsNone(ranks[rank]["communication_seconds"])
        for c in doc["collectives"]:
            self.assertIsNone(c["seconds"], c)
            self.assertIsNone(c["busbw_gbps"], c)
        self.assertIn("no call has a time of its own", out)
        self.assertIn("waits and the straggler are from when each rank called", out)
        self.assertIn("the ranks ran on several hosts (", out)
        self.assertIn("node-b", out)
        self.assertIn("so the clocks' offset is in their waits and the straggler", out)

    def test_exposed_time_is_gloos_while_the_calling_thread_ran_no_operator(self):
        """As in a torch.profiler trace of a CPU job, from the raw rows: the time gloo's ranges
        ran (once where they overlap) less the time the thread that called the c10d::
        operators ran an aten:: operator."""
        out, doc = self.replay(os.path.join(NSYS, "nsys-llama-ddp"), name="exposed")
        for path, record in zip(report_files("nsys-llama-ddp"), doc["ranks"]):
            db = sqlite3.connect(open_report(path, self.dir))
            rows = db.execute("SELECT coalesce(e.text, s.value), e.start, e.end, e.globalTid FROM NVTX_EVENTS e "
                              "LEFT JOIN StringIds s ON e.textId = s.id WHERE e.eventType = 59").fetchall()
            db.close()
            callers = {tid for name, _, _, tid in rows if name.startswith("c10d::")}
            comm = merged((start, end) for name, start, end, _ in rows if name.startswith("gloo:"))
            busy = merged((start, end) for name, start, end, tid in rows
                          if name.startswith("aten::") and tid in callers)
            covered = sum(max(0, min(e, b) - max(s, a)) for s, e in comm for a, b in busy)
            exposed = (sum(e - s for s, e in comm) - covered) * 1e-9
            self.assertGreater(exposed, 0)
            # On the UTC clock, in microseconds, a double keeps a quarter of a microsecond.
            self.assertAlmostEqual(record["exposed_seconds"], exposed, delta=1e-5)
        self.assertIn("exposed ms of a CPU job", out)

    def test_a_report_of_gloos_ranges_alone_is_sized_by_them(self):
        """Without the c10d:: ranges (an older PyTorch), gloo's own ranges are the calls, sized
        by their shapes: the same classes, and no note that they are unsized."""
        folder = os.path.join(self.dir, "gloo-only")
        os.makedirs(folder, exist_ok=True)
        for path in report_files("nsys-llama-ddp"):
            db = sqlite3.connect(open_report(path, folder))
            db.execute("DELETE FROM NVTX_EVENTS WHERE text LIKE 'c10d::%'")
            db.commit()
            db.close()
        out, gloo_only = self.replay(folder, name="gloo-only")
        _, whole = self.replay(os.path.join(NSYS, "nsys-llama-ddp"), name="whole")
        self.assertEqual(classes(gloo_only), classes(whole))
        self.assertEqual(gloo_only["backend"], "gloo")
        self.assertNotIn("not sized", out)

    def test_dtype_sizes_the_counts(self):
        _, float32 = self.replay(os.path.join(NSYS, "nsys-llama-ddp"), name="f32")
        _, bf16 = self.replay(os.path.join(NSYS, "nsys-llama-ddp"), "--dtype", "bfloat16", name="bf16")
        self.assertEqual([(op, size // 2, n) for op, size, n in classes(float32)], classes(bf16))


    def test_nccl_kernels_time_the_calls_and_name_the_algorithm(self):
        """A CUDA trace adds each GPU kernel to the report (CUPTI_ACTIVITY_KIND_KERNEL, its
        name in StringIds). Here NCCL kernel rows are added to copies of the real CPU reports,
        each 0.1 ms after its call starts and as long as 1 ms times the rank plus one, in the
        exporter's layout: the calls take their times from the kernels, and the kernels'
        names give NCCL's algorithm and protocol."""
        folder = os.path.join(self.dir, "with-kernels")
        os.makedirs(folder, exist_ok=True)
        names = {"allreduce": "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)",
                 "broadcast": "ncclDevKernel_Broadcast_RING_SIMPLE(ncclDevKernelArgsStorage<4096ul>)"}
        for rank, path in enumerate(report_files("nsys-llama-ddp")):
            plain = open_report(path, folder)
            db = sqlite3.connect(plain)
            db.execute("CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER NOT NULL, end INTEGER NOT NULL, "
                       "deviceId INTEGER, streamId INTEGER, correlationId INTEGER, globalPid INTEGER, "
                       "demangledName INTEGER, shortName INTEGER)")
            first_id = db.execute("SELECT max(id) FROM StringIds").fetchone()[0] + 1
            for i, name in enumerate(names.values()):
                db.execute("INSERT INTO StringIds VALUES (?, ?)", (first_id + i, name))
            calls = db.execute("SELECT start, text, globalTid FROM NVTX_EVENTS WHERE text LIKE 'c10d::%' "
                               "ORDER BY start").fetchall()
            for start, text, tid in calls:
                op = C10D_OPS[text.split(",")[0]]
                name_id = first_id + list(names).index(op)
                db.execute("INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (?, ?, 0, 7, 0, ?, ?, ?)",
                           (start + 100_000, start + 100_000 + 1_000_000 * (rank + 1), tid & ~0xFFFFFF, name_id,
                            name_id))
            db.commit()
            db.close()
        out, doc = self.replay(folder, name="with-kernels")
        self.assertEqual(sorted((c["op"], c["nccl_algo"], c["nccl_proto"]) for c in doc["collectives"]),
                         [("allreduce", "RING", "LL"), ("allreduce", "RING", "LL"), ("broadcast", "RING", "SIMPLE")])
        for c in doc["collectives"]:
            # With the kernels' times, a call's time is the shortest rank's (the last to arrive
            # waits least): rank 0's 1 ms here.
            self.assertAlmostEqual(c["seconds"], 0.001, places=9)
        self.assertIn("RING/LL", out)
        self.assertNotIn("a call's time is its NVTX range", out)
        # No compute kernel beside them: every NCCL kernel's time is exposed.
        for r in doc["ranks"]:
            self.assertAlmostEqual(r["exposed_seconds"], doc["calls_per_rank"] * 0.001 * (r["rank"] + 1), places=9)
        self.assertIn("exposed ms", out)


KERNEL_TABLE = ("CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER NOT NULL, end INTEGER NOT NULL, "
                "deviceId INTEGER, streamId INTEGER, correlationId INTEGER, globalPid INTEGER, demangledName INTEGER, "
                "shortName INTEGER)")
NCCL_RANGES = {"allreduce": "ncclAllReduce", "broadcast": "ncclBroadcast"}
NCCL_KERNELS = {"allreduce": "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)",
                "broadcast": "ncclDevKernel_Generic_1(ncclDevKernelArgsStorage<4096ul>)"}
COMPUTE_KERNEL = "ampere_sgemm_128x64_nn"


def nccl_job_reports(case, folder, nccl_ranges, grouped_last=False):
    """Copies of a case's real reports made into what nsys records of an NCCL job without
    PyTorch's ranges: its c10d::, gloo: and aten:: ranges are removed; in their place, in the
    exporter's layout, each call becomes NCCL's own range (ncclAllReduce, a registered string
    in domain NCCL; left out when `nccl_ranges` is false) and an NCCL kernel 0.1 ms after it,
    1 ms x (rank + 1) long (a broadcast runs in NCCL's generic kernel, which names no
    operation), with a compute kernel over the first half of each. With `grouped_last` the
    last call runs in the kernel before it (one NCCL group) and has none of its own. Returns
    the calls' ops."""
    os.makedirs(folder, exist_ok=True)
    for rank, path in enumerate(report_files(case)):
        db = sqlite3.connect(open_report(path, folder))
        calls = [(start, C10D_OPS[text.split(",")[0]], tid) for start, text, tid in db.execute(
            "SELECT start, text, globalTid FROM NVTX_EVENTS WHERE text LIKE 'c10d::%' ORDER BY start")]
        db.execute("DELETE FROM NVTX_EVENTS WHERE text LIKE 'c10d::%' OR text LIKE 'gloo:%' OR text LIKE 'aten::%'")
        db.execute(KERNEL_TABLE)
        next_id = db.execute("SELECT max(id) FROM StringIds").fetchone()[0] + 1
        ids = {}
        for name in [*NCCL_RANGES.values(), *NCCL_KERNELS.values(), COMPUTE_KERNEL]:
            db.execute("INSERT INTO StringIds VALUES (?, ?)", (next_id, name))
            ids[name] = next_id
            next_id += 1
        if nccl_ranges:  # NCCL's domain, as nsys writes its creation
            db.execute("INSERT INTO NVTX_EVENTS (start, eventType, text, globalTid, domainId) VALUES (?, 75, 'NCCL', "
                       "?, 1)", (calls[0][0] - 1000, calls[0][2]))
        for index, (start, op, tid) in enumerate(calls):
            if nccl_ranges:
                db.execute("INSERT INTO NVTX_EVENTS (start, end, eventType, globalTid, textId, domainId) "
                           "VALUES (?, ?, 59, ?, ?, 1)", (start, start + 20_000, tid, ids[NCCL_RANGES[op]]))
            if grouped_last and index == len(calls) - 1:
                continue
            kernel_start, length = start + 100_000, 1_000_000 * (rank + 1)
            db.execute("INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (?, ?, 0, 7, 0, ?, ?, ?)",
                       (kernel_start, kernel_start + length, tid & ~0xFFFFFF, ids[NCCL_KERNELS[op]],
                        ids[NCCL_KERNELS[op]]))
            db.execute("INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (?, ?, 0, 8, 0, ?, ?, ?)",
                       (kernel_start, kernel_start + length // 2, tid & ~0xFFFFFF, ids[COMPUTE_KERNEL],
                        ids[COMPUTE_KERNEL]))
        db.commit()
        db.close()
    return [op for _, op, _ in calls]


class NsysNcclJob(FolderCase):
    """A report of an NCCL job that PyTorch did not annotate (emit_nvtx off, the usual case):
    NCCL's own ranges name the calls, or without them its kernels do; the sizes are not in
    the report, and it says so, but the times, the overlap and NCCL's choices are."""
    PREFIX = "commbench-replay-nsys-nccl-"

    def replay(self, folder):
        json_path = folder + ".json"
        code, out, err = run(folder, "--json", json_path, "--force")
        self.assertEqual(code, 0, err)
        with open(json_path) as f:
            return out, json.load(f)

    def test_nccl_own_ranges_are_the_calls_timed_by_the_kernels(self):
        folder = os.path.join(self.dir, "nccl-ranges")
        ops = nccl_job_reports("nsys-llama-ddp", folder, nccl_ranges=True)
        out, doc = self.replay(folder)
        self.assertEqual(doc["calls_per_rank"], len(ops))
        self.assertEqual(sorted((c["op"], c["calls"]) for c in doc["collectives"]),
                         sorted((op, ops.count(op)) for op in set(ops)))
        for c in doc["collectives"]:
            self.assertIsNone(c["bytes"])  # the report holds no size for them
            # The last to arrive waits least: rank 0's kernel, 1 ms, is the call's time.
            self.assertAlmostEqual(c["seconds"], 0.001, places=9)
        algos = {c["op"]: (c["nccl_algo"], c["nccl_proto"]) for c in doc["collectives"]}
        self.assertEqual(algos["allreduce"], ("RING", "LL"))
        self.assertEqual(algos["broadcast"], ("", ""))  # the generic kernel names neither
        self.assertEqual(doc["backend"], "nccl")
        # Half of each NCCL kernel runs beside a compute kernel: the other half is exposed.
        for r in doc["ranks"]:
            self.assertAlmostEqual(r["exposed_seconds"], len(ops) * 0.0005 * (r["rank"] + 1), places=9)
        self.assertEqual(out.count("calls named by NCCL's own NVTX ranges (ncclAllReduce, ...) are counted, not sized: "
                                   "the export holds no payload for them"), 1, out)
        self.assertIn("--include-blobs=true", out)
        self.assertNotIn("a call's time is its NVTX range", out)
        self.assertNotIn("PyTorch's NVTX ranges give element counts", out)

    def test_a_call_without_a_kernel_of_its_own_is_counted_not_timed_and_said(self):
        folder = os.path.join(self.dir, "grouped")
        ops = nccl_job_reports("nsys-llama-ddp", folder, nccl_ranges=True, grouped_last=True)
        out, doc = self.replay(folder)
        self.assertEqual(doc["calls_per_rank"], len(ops))
        self.assertIn(f"4 of {4 * len(ops)} calls found no kernel or backend range of their own", out)
        self.assertIn("they are counted, not timed", out)
        # Every class's time is its kernels' (rank 0's, 1 ms), never the last call's range;
        # a class of that call alone has none.
        last_alone = ops.count(ops[-1]) == 1
        for c in doc["collectives"]:
            if c["op"] == ops[-1] and last_alone:
                self.assertIsNone(c["seconds"], c)
            else:
                self.assertAlmostEqual(c["seconds"], 0.001, places=9)
        # Each rank's communication is its own kernels' time: len(ops) - 1 of 1 ms x (rank + 1).
        for r in doc["ranks"]:
            self.assertAlmostEqual(r["communication_seconds"], (len(ops) - 1) * 0.001 * (r["rank"] + 1), places=9)

    def test_without_any_range_nccl_kernels_are_the_calls(self):
        folder = os.path.join(self.dir, "kernels-only")
        ops = nccl_job_reports("nsys-llama-ddp", folder, nccl_ranges=False)
        out, doc = self.replay(folder)
        # The generic kernel's broadcast cannot be named: only the all-reduces are calls.
        self.assertEqual([(c["op"], c["calls"]) for c in doc["collectives"]], [("allreduce", ops.count("allreduce"))])
        self.assertEqual(doc["collectives"][0]["nccl_algo"], "RING")
        self.assertIn("no NVTX range names the calls: NCCL's kernels are the calls", out)


class NsysBadInput(FolderCase):
    PREFIX = "commbench-replay-nsys-bad-"

    def refused(self, *args):
        outputs = [os.path.join(self.dir, "r.csv"), os.path.join(self.dir, "r.json")]
        code, out, err = run(*args, "--csv", outputs[0], "--json", outputs[1])
        self.assertEqual(code, 2, out + err)
        self.assertEqual(len(err.splitlines()), 1, err)
        self.assertTrue(err.startswith("bench-replay: error: "), err)
        for path in outputs:
            self.assertFalse(os.path.exists(path), f"{path} left behind")
        return err.strip()

    def edited(self, name, sql):
        """A copy of rank 0's report with `sql` run on it."""
        path = open_report(report_files("nsys-llama-ddp")[0], self.dir)
        target = os.path.join(self.dir, name)
        os.replace(path, target)
        db = sqlite3.connect(target)
        db.executescript(sql)
        db.close()
        return target

    def test_a_gzip_cut_short_names_the_file_and_offset(self):
        with open(report_files("nsys-llama-ddp")[0], "rb") as f:
            data = f.read()
        cut = os.path.join(self.dir, "cut.sqlite.gz")
        with open(cut, "wb") as f:
            f.write(data[: len(data) // 2])
        self.assertRegex(self.refused(cut), r"cut\.sqlite\.gz: cannot read at byte [0-9]+ of its text \(.+\)$")

    def test_a_rank_given_twice(self):
        files = report_files("nsys-straggler")
        err = self.refused(files[0], files[0], *files[1:3])
        self.assertRegex(err, r"rank0\.sqlite\.gz: process [0-9]+ on vm is also in .*rank0\.sqlite\.gz: one rank "
                              r"given twice$")
        # A copy under another rank's name: the same process of the same host.
        folder = os.path.join(self.dir, "copy")
        shutil.copytree(os.path.join(NSYS, "nsys-straggler"), folder)
        shutil.copy(os.path.join(folder, "rank1.sqlite.gz"), os.path.join(folder, "rank9.sqlite.gz"))
        self.assertRegex(self.refused(folder), r"rank9\.sqlite\.gz: process [0-9]+ on vm is also in .*rank1\.sqlite"
                                               r"\.gz: one rank given twice$")

    def test_a_file_that_is_no_database_or_not_nsys(self):
        text = os.path.join(self.dir, "notes.sqlite")
        with open(text, "w") as f:
            f.write("not a database\n")
        self.assertTrue(self.refused(text).endswith(
            "notes.sqlite: not an SQLite database (`nsys export --type sqlite` writes one)"))
        other = os.path.join(self.dir, "other.sqlite")
        db = sqlite3.connect(other)
        db.execute("create table t (x)")
        db.close()
        self.assertTrue(self.refused(other).endswith(
            "other.sqlite: an SQLite database, but not one `nsys export --type sqlite` wrote"))

    def test_a_report_without_ranges_or_without_communication(self):
        no_nvtx = self.edited("no-nvtx.sqlite", "drop table NVTX_EVENTS;")
        self.assertIn("no-nvtx.sqlite: no NVTX ranges and no CUDA kernels in this report: record with `nsys profile "
                      "--trace=nvtx,cuda`", self.refused(no_nvtx))
        no_comm = self.edited("no-comm.sqlite",
                              "delete from NVTX_EVENTS where text like 'c10d::%' or text like 'gloo:%';")
        self.assertIn("no-comm.sqlite: no communication in this report: no NVTX range of a c10d:: operator or of "
                      "NCCL, and no NCCL kernel", self.refused(no_comm))

    def test_reports_of_different_runs(self):
        mixed = [report_files("nsys-llama-ddp")[0]] + report_files("nsys-straggler")[1:]
        self.assertIn("the traces do not line up", self.refused(*mixed))

    def test_a_report_is_not_read_with_traces(self):
        trace = os.path.join(TRACES, "llama-ddp", "rank0.json.gz")
        self.assertIn("Nsight Systems reports are read on their own", self.refused(report_files("nsys-llama-ddp")[0],
                                                                                   trace))

    def test_an_unknown_dtype(self):
        self.assertIn("--dtype", self.refused(os.path.join(NSYS, "nsys-llama-ddp"), "--dtype", "float7"))


if __name__ == "__main__":
    unittest.main()
