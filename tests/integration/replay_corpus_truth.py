"""What a torch.profiler trace says of its communication, read from its raw JSON alone (by
the rules of bench-replay's JSON, schema commbench.replay/3, not by bench-replay's code):
the calls, the NCCL kernels and which call each belongs to, which calls the trace gives a
size and a group.

Calls: one per collective marker, a marker nested in another on the same thread being the
same call. Markers: `c10d::*` operators (cpu_op), `nccl:*` ranges (user_annotation) and
`record_param_comms` naming a collective. A gloo trace whose only markers are `gloo:*`
ranges (gloo's own, on its worker threads) counts each range as a call.
Kernels: `kernel` events named nccl*, linked to a call through the launch with the same
correlation id (the outermost marker on the launch's thread holding the launch), or,
without a launch, through the `record_param_comms` of the same External id.
"""
import bisect
import gzip
import json

# The ops as the test names them, from each marker's name (record_param_comms: its
# "Collective name"; c10d:: and nccl: names without prefix and trailing underscore).
OPS = {
    "allreduce": "allreduce", "all_reduce": "allreduce", "allreduce_coalesced": "allreduce",
    "allgather": "allgather", "all_gather": "allgather", "_allgather_base": "allgather",
    "_all_gather_base": "allgather", "allgather_into_tensor_coalesced": "allgather",
    "allgather_coalesced": "allgather",
    "reduce_scatter": "reducescatter", "_reduce_scatter_base": "reducescatter",
    "reduce_scatter_tensor_coalesced": "reducescatter",
    "alltoall": "alltoall", "alltoall_base": "alltoall", "all_to_all": "alltoall",
    "broadcast": "broadcast", "reduce": "reduce", "gather": "gather", "scatter": "scatter",
    "barrier": "barrier", "send": "send", "recv": "recv", "recv_any_source": "recv", "recvAnySource": "recv",
}
# record_param_comms records that are no collective call: a work's wait, a communicator's creation.
NOT_CALLS = {"wait", "init", ""}
LAUNCH_CATS = {"cuda_runtime", "cuda_driver"}


def load(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        return json.load(f)


def op_of_name(name):
    """The op a c10d::, nccl: or gloo: event's name stands for; None for no collective."""
    bare = name.split("::", 1)[1] if name.startswith("c10d::") else name.split(":", 1)[1]
    bare = bare.rstrip("_")
    return OPS.get(bare, OPS.get(bare.lstrip("_")))


def marker_op(event, gloo_markers):
    """The op of a call marker, or None when the event marks no call."""
    if event.get("ph") != "X":
        return None
    name, cat = event.get("name", ""), event.get("cat")
    if cat == "cpu_op" and name == "record_param_comms":
        collective = event.get("args", {}).get("Collective name")
        if collective is None or collective in NOT_CALLS:
            return None
        if collective not in OPS:
            raise ValueError(f"record_param_comms names an unknown collective {collective!r}")
        return OPS[collective]
    if (cat == "cpu_op" and name.startswith("c10d::")) or (cat == "user_annotation" and name.startswith("nccl:")):
        op = op_of_name(name)
        if op is None:
            raise ValueError(f"unknown communication marker {name!r}")
        return op
    if gloo_markers and cat == "user_annotation" and name.startswith("gloo:"):
        return op_of_name(name)
    return None


def span(event):
    return float(event["ts"]), float(event["ts"]) + float(event.get("dur", 0))


def union_seconds(intervals):
    """The time the intervals cover (microseconds in, seconds out), each instant once."""
    total, end = 0.0, None
    for start, stop in sorted(intervals):
        if end is None or start > end:
            total += stop - start
            end = stop
        elif stop > end:
            total += stop - end
            end = stop
    return total / 1e6


class Call:
    def __init__(self, thread, start, end):
        self.thread, self.start, self.end = thread, start, end
        self.ops, self.events, self.kernels = [], [], []

    def holds(self, ts):
        return self.start <= ts <= self.end


def thread_of(event):
    return event.get("pid"), event.get("tid")


def calls_of(events, gloo_markers):
    """The calls: markers grouped by thread, a marker inside an earlier outer one joining it."""
    by_thread = {}
    for event in events:
        op = marker_op(event, gloo_markers)
        if op is not None:
            by_thread.setdefault(thread_of(event), []).append((span(event), op, event))
    calls = []
    for thread, markers in by_thread.items():
        markers.sort(key=lambda m: (m[0][0], -m[0][1]))
        current = None
        for (start, end), op, event in markers:
            if current is None or not (current.start <= start and end <= current.end):
                current = Call(thread, start, end)
                calls.append(current)
            current.ops.append(op)
            current.events.append(event)
    return calls


def index_by_thread(calls):
    """Each thread's calls by start, with their starts, for outermost_holding."""
    by_thread = {}
    for call in calls:
        by_thread.setdefault(call.thread, []).append(call)
    return {thread: (sorted(cs, key=lambda c: c.start), sorted(c.start for c in cs)) for thread, cs in by_thread.items()}


def outermost_holding(calls_by_thread, thread, ts):
    """The call on the thread whose span holds ts (the latest started, calls on one thread being disjoint)."""
    calls, starts = calls_by_thread.get(thread, ((), ()))
    at = bisect.bisect_right(starts, ts) - 1
    return calls[at] if at >= 0 and calls[at].holds(ts) else None


def link_kernels(events, kernels, calls):
    """Each NCCL kernel's call (None: unattributed), by correlation, else by External id."""
    calls_by_thread = index_by_thread(calls)
    launches = {}
    for event in events:
        if event.get("cat") in LAUNCH_CATS and "correlation" in event.get("args", {}):
            launches[event["args"]["correlation"]] = event
    records = {}  # External id of a record_param_comms: the call holding it
    for event in events:
        if event.get("name") == "record_param_comms" and event.get("ph") == "X":
            call = outermost_holding(calls_by_thread, thread_of(event), float(event["ts"]))
            records[event.get("args", {}).get("External id")] = call
    links = []
    for kernel in kernels:
        args = kernel.get("args", {})
        launch = launches.get(args.get("correlation"))
        if launch is not None:
            call = outermost_holding(calls_by_thread, thread_of(launch), float(launch["ts"]))
        else:
            call = records.get(args.get("External id"))
        links.append(call)
    return links


def size_of(event):
    """The elements a marker (or record_param_comms) gives its call, None when it gives none."""
    args = event.get("args", {})
    for key in ("In msg nelems", "In msg size"):  # the second: its name in PyTorch builds of late 2023
        if key in args:
            return int(args[key])
    dims, types = args.get("Input Dims"), args.get("Input type")
    if dims and types and dims[0] and types[0] and types[0] not in ("Scalar", "TensorList"):
        return elements(dims[0])
    return None


def elements(dims):
    count = 1
    for d in dims:
        count *= d
    return count


def group_of(call, events_of_call, single_group):
    """The call's group size when the trace holds it, else None."""
    for event in events_of_call:
        args = event.get("args", {})
        if "Group size" in args:
            return int(args["Group size"])
        if "Process Group Ranks" in args:
            return len(json.loads(args["Process Group Ranks"]))
    if any(op in ("allgather", "reducescatter") for op in call.ops):
        for event in events_of_call:
            dims = event.get("args", {}).get("Input Dims", [])
            if len(dims) >= 2 and dims[0] and dims[1]:
                small, large = sorted((elements(dims[0]), elements(dims[1])))
                if small and large % small == 0 and large != small:
                    return large // small
    return single_group


def single_group_size(doc):
    """The group size every call ran on when distributedInfo lists exactly one group."""
    groups = doc.get("distributedInfo", {}).get("pg_config") or []
    return groups[0].get("pg_size", len(groups[0].get("ranks", []))) if len(groups) == 1 else None


def records_by_call(events, calls):
    """The record_param_comms events inside each call (by the call's id)."""
    calls_by_thread = index_by_thread(calls)
    inside = {}
    for event in events:
        if event.get("name") == "record_param_comms" and event.get("ph") == "X":
            call = outermost_holding(calls_by_thread, thread_of(event), float(event["ts"]))
            if call is not None and event not in call.events:
                inside.setdefault(id(call), []).append(event)
    return inside


class Truth:
    """What one trace file says, in seconds."""

    def __init__(self, doc):
        events = doc["traceEvents"]
        self.gloo = not any(marker_op(e, False) for e in events)
        self.calls = calls_of(events, self.gloo)
        kernels = [e for e in events if e.get("ph") == "X" and e.get("cat") == "kernel"
                   and e.get("name", "").startswith("nccl")]
        links = link_kernels(events, kernels, self.calls)
        for kernel, call in zip(kernels, links):
            if call is not None:
                call.kernels.append(span(kernel))
        if self.gloo:  # gloo runs a call on its own thread, inside its range: the range is its time
            for call in self.calls:
                call.kernels = [span(e) for e in call.events]
        gloo_ranges = [span(e) for e in events if e.get("ph") == "X" and e.get("name", "").startswith("gloo:")]
        self.communication_seconds = union_seconds([span(k) for k in kernels] if kernels else gloo_ranges)
        unattributed = [k for k, call in zip(kernels, links) if call is None]
        self.unattributed_kernels = len(unattributed)
        self.unattributed_seconds = sum(float(k.get("dur", 0)) for k in unattributed) / 1e6
        self.call_seconds = [union_seconds(c.kernels) for c in self.calls if c.kernels]
        self.calls_seconds = sum(self.call_seconds)
        self.timed_calls = len(self.call_seconds)
        single = single_group_size(doc)
        self.sized_ops, self.unsized_ops, self.empty_ops, self.groups = set(), set(), set(), {}
        records = records_by_call(events, self.calls)
        for call in self.calls:
            inside = call.events + records.get(id(call), [])
            op = call.ops[0]
            sizes = [s for s in map(size_of, inside) if s is not None]
            (self.sized_ops if sizes else self.unsized_ops).add(op)
            if sizes and not any(sizes):
                self.empty_ops.add(op)
            self.groups.setdefault(op, set()).add(group_of(call, inside, single))

    def ops_without_size(self):
        """Ops no call of which the trace gives a size."""
        return self.unsized_ops - self.sized_ops

    def ops_always_sized(self):
        """Ops every call of which the trace gives a size, none of them zero."""
        return self.sized_ops - self.unsized_ops - self.empty_ops

    def group_of_op(self, op):
        """The one group size every call of op ran on, when the trace holds it for each."""
        groups = self.groups.get(op, set())
        return next(iter(groups)) if len(groups) == 1 and None not in groups else None


def truth_of(path):
    return Truth(load(path))
