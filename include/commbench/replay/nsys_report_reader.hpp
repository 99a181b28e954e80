// Nsight Systems' report of a training job's ranks, as `nsys export --type sqlite` writes
// it (plain or gzip-compressed), or a `.nsys-rep`, exported on the fly when `nsys` is on
// the PATH. Each process in it that communicated is one rank. PyTorch's NVTX ranges
// (torch.autograd.profiler.emit_nvtx: `c10d::` operators with their input shapes, gloo's
// runs of them, `aten::` operators) say what it called and when; without them NCCL's own
// ranges (ncclAllReduce, ...) or NCCL's kernels name the calls, unsized. NCCL's kernels and
// the other kernels on the GPU time them. Ranges named `ProfilerStep#N`, `step N` or
// `iteration N` mark its steps. docs/replay.md says what such a report holds and lacks.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "commbench/replay/communication_trace.hpp"

namespace commbench {

struct NsysProcess {
  std::int64_t pid = 0;
  RankTrace trace;  // rank and world size -1 and 0: a report does not say them
};

struct NsysReport {
  std::vector<NsysProcess> processes;  // in pid order
  std::vector<std::string> notes;      // what the report lacks
  // Some calls were sized by PyTorch's ranges' shapes, which give no type (`element_type`).
  bool sized_by_pytorch_ranges = false;
};

// `element_type`: the type ("float32", "bfloat16", ...) of the calls whose ranges give
// element counts but no type (PyTorch's NVTX ranges never do). UsageError naming the file:
// unreadable, no nsys export, no NVTX ranges, no communication in it, a .nsys-rep without
// nsys on the PATH. A .nsys-rep's export may take `export_limit_seconds` (0: no limit);
// past it the export is stopped and an Error with exit 4 names the file.
constexpr double kDefaultNsysExportSeconds = 600;
NsysReport read_nsys_report(const std::string& path, const std::string& element_type,
                            double export_limit_seconds = kDefaultNsysExportSeconds);

// .sqlite, .sqlite.gz, .nsys-rep (and the older .qdrep).
bool is_nsys_report_name(std::string_view name);

// PyTorch's NVTX range for an operator: "c10d::allreduce_, seq = 3, op_id = 7, sizes =
// [[1000], []], input_op_ids = [...]" gives its name and, with record_shapes, its inputs'
// shapes as JSON text ("[[1000], []]"); empty when the range has none.
struct PytorchNvtxRange {
  std::string name;
  std::string sizes;
};
PytorchNvtxRange parse_pytorch_nvtx_range(std::string_view text);

// N of a step range: "ProfilerStep#N", "step N", "Step#N", "iteration N"; none for others.
std::optional<int> nvtx_step_number(std::string_view text);

}  // namespace commbench
