"""bench-replay on the traces recorded on a lent GPU machine (tests/fixtures/gpu: one H200,
PyTorch 2.11 with NCCL 2.28, one rank per case; its README says how they were recorded).

The torch.profiler traces are checked against their own `record_param_comms` events, read
here from the raw JSON. The Nsight Systems exports of the same cases must give the same
calls and sizes, by PyTorch's NVTX ranges; and, with PyTorch's ranges taken out of a copy
(a job profiled without emit_nvtx, the usual case), by NCCL's own ranges and the message
sizes in their NVTX payloads. Without the payloads (an export without --include-blobs), or
without the communicator's creation, the calls are counted, not sized, and the report says
why.
"""
import gzip
import json
import os
import shutil
import sqlite3
import struct
import unittest

from replay_test_support import BIN, HERE, FolderCase, load, run
from test_replay_nsys import raw_calls

GPU = os.path.join(HERE, "..", "fixtures", "gpu")
TORCH_CASES = ("llama-ddp", "ddp-bucket4mb")
# The element sizes of record_param_comms' "dtype" in these traces.
DTYPE_BYTES = {"Float": 4, "BFloat16": 2, "Half": 2, "Byte": 1, "Long": 8, "Int": 4}
OPS = {"allreduce": "allreduce", "broadcast": "broadcast", "allgather": "allgather",
       "_allgather_base": "allgather", "all_gather_into_tensor": "allgather", "reduce_scatter_tensor": "reducescatter",
       "_reduce_scatter_base": "reducescatter"}


def recorded_classes(case):
    """(op, bytes, calls) of PyTorch's own records of its NCCL calls in the raw trace."""
    counts = {}
    for event in load(os.path.join(GPU, case, "rank0.json.gz"))["traceEvents"]:
        if event.get("name") != "record_param_comms":
            continue
        args = event["args"]
        op = OPS.get(args["Collective name"])
        if op is None:
            continue  # "wait" and the like: no communication of their own
        elements = args["Out msg nelems"] if op == "allgather" else args["In msg nelems"]
        key = (op, elements * DTYPE_BYTES[args["dtype"]])
        counts[key] = counts.get(key, 0) + 1
    return sorted((op, size, calls) for (op, size), calls in counts.items())


def raw_nccl_range_classes(sqlite_path):
    """(op, nccl-tests bytes, calls) of NCCL's own ranges, decoded here from the raw rows:
    the payload's struct by its schema's entries, gathers and scatters times the size of
    the communicator its creation's payload gives."""
    db = sqlite3.connect(sqlite_path)
    fields = {}
    for domain, schema, name, offset in db.execute(
            "SELECT domainId, schemaId, name, coalesce(offset, 0) FROM NVTX_PAYLOAD_SCHEMA_ENTRIES"):
        fields.setdefault((domain, schema), {})[name] = offset
    names = {"ncclAllReduce": "allreduce", "ncclBroadcast": "broadcast", "ncclAllGather": "allgather",
             "ncclReduceScatter": "reducescatter", "ncclReduce": "reduce"}
    rows = db.execute("SELECT coalesce(e.text, s.value), e.domainId, e.binaryData FROM NVTX_EVENTS e LEFT JOIN "
                      "StringIds s ON e.textId = s.id WHERE e.binaryData IS NOT NULL ORDER BY e.start").fetchall()
    db.close()
    ranks, calls = {}, []
    for name, domain, blob in rows:
        count, schema, size, offset = struct.unpack_from("<QQQQ", blob)
        if count != 1 or offset + size > len(blob):
            continue  # NCCL writes one struct per range
        entries = fields[(domain, schema)]
        payload = blob[offset:offset + size]
        communicator = struct.unpack_from("<Q", payload, entries["NCCL communicator ID"])[0]
        if name.startswith("ncclComm") and "No. of ranks" in entries:
            ranks[communicator] = struct.unpack_from("<i", payload, entries["No. of ranks"])[0]
        elif name in names:
            calls.append((names[name], communicator,
                          struct.unpack_from("<Q", payload, entries["Message size [bytes]"])[0]))
    counts = {}
    for op, communicator, size in calls:
        key = (op, size * ranks[communicator] if op in ("allgather", "reducescatter") else size)
        counts[key] = counts.get(key, 0) + 1
    return sorted((op, size, n) for (op, size), n in counts.items())


def classes(doc):
    return sorted((c["op"], c["bytes"], c["calls"]) for c in doc["collectives"])


class GpuFixtureCase(FolderCase):
    PREFIX = "commbench-replay-gpu-"

    def replay(self, folder, name):
        json_path = os.path.join(self.dir, name + ".json")
        code, out, err = run(folder, "--json", json_path, "--force")
        self.assertEqual(code, 0, out + err)
        with open(json_path) as f:
            return out, json.load(f)

    def report_copy(self, case, name, *statements):
        """A folder holding the case's export, plain, with `statements` run on it."""
        folder = os.path.join(self.dir, name)
        os.makedirs(folder, exist_ok=True)
        plain = os.path.join(folder, "rank0.sqlite")
        with gzip.open(os.path.join(GPU, case, "rank0.sqlite.gz"), "rb") as src, open(plain, "wb") as dst:
            shutil.copyfileobj(src, dst)
        db = sqlite3.connect(plain)
        for statement in statements:
            db.execute(statement)
        db.commit()
        db.close()
        return folder


# PyTorch's ranges of its operators (domain 0, the default one): what emit_nvtx adds.
WITHOUT_PYTORCH_RANGES = ("DELETE FROM NVTX_EVENTS WHERE domainId = 0 AND (text LIKE 'c10d::%' OR textId IN "
                          "(SELECT id FROM StringIds WHERE value LIKE 'c10d::%'))")
NCCL_DOMAIN = "(SELECT DISTINCT domainId FROM NVTX_EVENTS WHERE domainId != 0)"


class GpuTorchProfiler(GpuFixtureCase):
    def test_each_case_gives_what_pytorch_recorded_of_its_nccl_calls(self):
        for case in TORCH_CASES:
            with self.subTest(case=case):
                out, doc = self.replay(os.path.join(GPU, case), case)
                expected = recorded_classes(case)
                self.assertTrue(expected, "the fixture holds no NCCL call")
                self.assertEqual(classes(doc), expected)
                self.assertEqual(doc["backend"], "nccl")
                self.assertEqual(doc["world_size"], 1)
                # One rank: NCCL runs each call as a copy, with no kernel of its own to time it.
                self.assertTrue(all(c["seconds"] is None for c in doc["collectives"]), doc["collectives"])
                self.assertIn("or the job ran on one rank, where NCCL runs a call as a copy", out)


    def test_the_step_is_the_cpu_range_of_profilerstep_not_its_gpu_projection(self):
        for case in TORCH_CASES:
            with self.subTest(case=case):
                events = load(os.path.join(GPU, case, "rank0.json.gz"))["traceEvents"]
                steps = [e for e in events if str(e.get("name", "")).startswith("ProfilerStep#")]
                # A GPU trace holds the step twice: the CPU's range and the GPU's projection of it.
                self.assertEqual(sorted(e["cat"] for e in steps), ["gpu_user_annotation", "user_annotation"])
                cpu = next(e for e in steps if e["cat"] == "user_annotation")
                _, doc = self.replay(os.path.join(GPU, case), case + "-steps")
                self.assertEqual(len(doc["steps"]), 1)
                self.assertAlmostEqual(doc["steps"][0]["step_seconds"], cpu["dur"] * 1e-6, places=9)
                self.assertAlmostEqual(doc["ranks"][0]["step_seconds"], cpu["dur"] * 1e-6, places=9)
                # The schedule's first gap is from the step's start to the first call.
                schedule = os.path.join(self.dir, case + ".jsonl")
                code, _, err = run(os.path.join(GPU, case), "--dump-schedule", schedule, "--force")
                self.assertEqual(code, 0, err)
                with open(schedule) as f:
                    first = json.loads(f.readline())
                calls = sorted(e["ts"] for e in events if e.get("name") == "record_param_comms")
                self.assertEqual(first["label"], "before call 1")
                self.assertGreater(first["seconds"], 0)
                self.assertLessEqual(first["seconds"], (calls[0] - cpu["ts"]) * 1e-6 + 1e-9)


class GpuNsysReports(GpuFixtureCase):
    def test_pytorch_ranges_give_the_calls_the_profiler_trace_gives(self):
        for case in TORCH_CASES:
            with self.subTest(case=case):
                _, doc = self.replay(os.path.join(GPU, "nsys-" + case), "nsys-" + case)
                self.assertEqual(classes(doc), recorded_classes(case))

    def test_pytorch_ranges_give_the_calls_the_raw_rows_hold(self):
        for case in TORCH_CASES:
            with self.subTest(case=case):
                folder = self.report_copy("nsys-" + case, "raw-" + case)
                counts = {}
                for op, size in raw_calls(os.path.join(folder, "rank0.sqlite")):
                    counts[(op, size)] = counts.get((op, size), 0) + 1
                _, doc = self.replay(folder, "raw-" + case)
                self.assertEqual(classes(doc), sorted((op, size, n) for (op, size), n in counts.items()))

    def test_without_pytorch_ranges_nccls_own_ranges_are_sized_by_their_payloads(self):
        folder = self.report_copy("nsys-llama-ddp", "nccl-ranges", WITHOUT_PYTORCH_RANGES)
        out, doc = self.replay(folder, "nccl-ranges")
        self.assertEqual(classes(doc), raw_nccl_range_classes(os.path.join(folder, "rank0.sqlite")))
        sized = {(c["op"], c["bytes"]) for c in doc["collectives"]}
        self.assertTrue(all(size > 0 for _, size in sized), doc["collectives"])
        # NCCL's ranges cover the whole run (the warm-up step and DDP's set-up too): every
        # call of the profiled step is among them, with the size PyTorch gave it.
        for op, size, _ in recorded_classes("llama-ddp"):
            self.assertIn((op, size), sized)
        # DDP's set-up gathers one 8-byte value per rank: NCCL's payload holds one rank's
        # part, times the communicator's size (1) from ncclCommInitRankConfig's payload.
        self.assertIn(("allgather", 8), sized)
        self.assertTrue(all(c["dtype"] is None for c in doc["collectives"]), "NCCL's payload names no type")
        self.assertEqual(doc["backend"], "nccl")  # NCCL's own ranges name the calls
        self.assertIn("every call is taken as one over all 1 process\n", out)
        self.assertNotIn("counted, not sized", out)

    def test_an_export_without_payloads_counts_the_calls_and_says_how_to_export(self):
        folder = self.report_copy("nsys-llama-ddp", "no-payloads", WITHOUT_PYTORCH_RANGES,
                                  "UPDATE NVTX_EVENTS SET binaryData = NULL")
        out, doc = self.replay(folder, "no-payloads")
        self.assertTrue(doc["collectives"])
        self.assertTrue(all(c["bytes"] is None for c in doc["collectives"]), doc["collectives"])
        self.assertEqual(out.count("the export holds no payload for them"), 1, out)
        self.assertIn("nsys export --type sqlite --include-blobs=true", out)
        # A schedule of unsized calls would fail later in bench-patterns: refused now, saying why.
        schedule = os.path.join(self.dir, "no-payloads.jsonl")
        code, out, err = run(folder, "--dump-schedule", schedule)
        self.assertEqual(code, 2, out + err)
        self.assertEqual(len(err.strip().splitlines()), 1, err)
        self.assertIn("call 1 (ncclBroadcast) has no size in the trace", err)
        self.assertIn("--include-blobs=true", err)
        self.assertFalse(os.path.exists(schedule))

    def test_payloads_of_another_shape_are_not_read_past_their_end(self):
        header = "X'0100000000000000' || X'0500000100000000' || X'1800000000000000'"
        for name, blob in (("truncated", "substr(binaryData, 1, 20)"),
                           ("offset-past-the-end", header + " || X'FFFFFFFF00000000'"),
                           ("too-many", "X'FFFFFFFFFFFFFFFF' || " + header + " || X'2000000000000000'")):
            with self.subTest(blob=name):
                folder = self.report_copy("nsys-llama-ddp", name, WITHOUT_PYTORCH_RANGES,
                                          "UPDATE NVTX_EVENTS SET binaryData = %s WHERE binaryData IS NOT NULL" % blob)
                out, doc = self.replay(folder, name)
                self.assertTrue(doc["collectives"])
                self.assertTrue(all(c["bytes"] is None for c in doc["collectives"]), doc["collectives"])
                self.assertIn("their payloads are of a schema or layout this reader does not know", out)
                self.assertNotIn("--include-blobs", out)

    def test_a_gather_whose_communicator_was_made_before_the_report_is_not_sized(self):
        folder = self.report_copy(
            "nsys-llama-ddp", "no-creation", WITHOUT_PYTORCH_RANGES,
            "DELETE FROM NVTX_EVENTS WHERE domainId IN %s AND textId IN "
            "(SELECT id FROM StringIds WHERE value LIKE 'ncclComm%%')" % NCCL_DOMAIN)
        out, doc = self.replay(folder, "no-creation")
        by_op = {}
        for c in doc["collectives"]:
            by_op.setdefault(c["op"], set()).add(c["bytes"])
        self.assertEqual(by_op["allgather"], {None})
        self.assertFalse({0, None} & by_op["allreduce"])  # an all-reduce's payload is the whole buffer
        self.assertIn("all-gathers, reduce-scatters and all-to-alls named by NCCL's ranges are counted, not sized",
                      out)
        self.assertIn("ncclCommInitRank", out)

    def test_a_split_communicators_range_gives_its_parents_size_not_its_own(self):
        # NCCL's ncclCommSplit payload names the new communicator and the parent's size:
        # the same range renamed must not size the gathers of the communicator it names.
        # Its end (ncclCommDestroy or ncclCommAbort) would give its own size: left out here.
        folder = self.report_copy("nsys-llama-ddp", "split", WITHOUT_PYTORCH_RANGES,
                                  "UPDATE StringIds SET value = 'ncclCommSplit' WHERE value LIKE 'ncclCommInitRank%'",
                                  "DELETE FROM NVTX_EVENTS WHERE textId IN (SELECT id FROM StringIds WHERE value IN "
                                  "('ncclCommDestroy', 'ncclCommAbort'))")
        out, doc = self.replay(folder, "split")
        self.assertEqual({c["bytes"] for c in doc["collectives"] if c["op"] == "allgather"}, {None})
        self.assertIn("a communicator made by ncclCommSplit names only its parent's size", out)

    def test_a_schema_table_of_another_layout_leaves_the_payloads_unread_not_the_report(self):
        folder = self.report_copy("nsys-llama-ddp", "schema-layout", WITHOUT_PYTORCH_RANGES,
                                  "ALTER TABLE NVTX_PAYLOAD_SCHEMA_ENTRIES RENAME COLUMN offset TO byteOffset")
        out, doc = self.replay(folder, "schema-layout")
        self.assertTrue(doc["collectives"])
        self.assertTrue(all(c["bytes"] is None for c in doc["collectives"]), doc["collectives"])
        self.assertIn("their payloads are of a schema or layout this reader does not know", out)


if __name__ == "__main__":
    unittest.main()
