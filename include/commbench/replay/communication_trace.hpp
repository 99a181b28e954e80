// A training job's communication as its own trace recorded it, one rank per file: every
// collective the rank called, with its size in the nccl-tests convention and when it ran,
// and the profiler's step windows. Readers (pytorch_trace_reader.hpp) fill it; the
// summary (trace_summary.hpp) holds the ranks against each other.
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "commbench/core/collective.hpp"

namespace commbench {

struct TracedCollective {
  std::string op;                        // "allreduce", "allgather", ..., "barrier", "send", "recv"
  std::optional<Collective> collective;  // the bus factor's collective; none for barrier, send, recv, ...
  std::string dtype;                     // "float32", "bfloat16", ...; empty when the trace does not say
  std::uint64_t bytes = 0;               // nccl-tests' size: see docs/replay.md
  bool bytes_known = true;               // false: the trace records no size for it (bytes is then 0)
  int group_ranks = 0;                   // 0 when the trace does not say
  double issued_us = 0;                  // when the training thread called it (the trace's clock)
  std::optional<std::int64_t> thread;    // the thread that called it (the trace's tid); none unknown
  // PyTorch's number of the call in its process group (record_param_comms' "Seq") and the
  // group's name: the same call on every rank, whatever each rank's window. None, empty
  // where the trace does not write them.
  std::optional<std::int64_t> sequence;
  std::string process_group;
  double start_us = 0;                   // when it ran: the backend's own event, else the call's
  double end_us = 0;
  int step = -1;     // the profiler step (ProfilerStep#N) it was called in; -1 none
  std::string name;  // the trace's event name, for messages
  // The NCCL kernel that ran it, as its name says ("RING", "LL"); empty without one.
  std::string nccl_algo, nccl_proto;
  // Its time is the backend's own (gloo's range, NCCL's kernel), not the call's: false for
  // a call that found no run of its own (NCCL runs a group's calls in one kernel).
  bool timed_by_backend = false;
  // The time its runs covered: a call NCCL ran in several kernels is busy for their union,
  // not from the first's start to the last's end. 0 without runs.
  double run_us = 0;

  // Its time in seconds: what its runs covered, else its own range.
  double seconds() const {
    if (timed_by_backend && run_us > 0) return run_us * 1e-6;
    return std::max(0.0, end_us - start_us) * 1e-6;
  }
};

struct StepWindow {
  int number = 0;  // N of ProfilerStep#N
  double start_us = 0;
  double end_us = 0;
};

struct RankTrace {
  std::string path;
  int rank = -1;
  int world_size = 0;
  std::string backend;  // "gloo", "nccl", ...
  std::string host;
  // What puts the trace's times on the UTC epoch (torch.profiler's baseTimeNanoseconds); none unwritten.
  std::optional<double> epoch_offset_us;
  std::vector<TracedCollective> collectives;  // in the order the rank called them
  std::vector<StepWindow> steps;
  // The calls' times are the calls themselves, not the backend's run (Nsight Systems' NVTX
  // ranges on CPU): an async call's time is its queueing, and ranks are matched by when
  // they called.
  bool call_times_only = false;
  // The communication no compute hid: its NCCL kernels' time not overlapped by its compute
  // kernels on the GPU; without them, on CPU, the backend's ranges (gloo's) while the thread
  // that called the collectives ran no aten:: operator. None where the trace has neither.
  std::optional<double> exposed_seconds;
  bool exposed_on_the_training_thread = false;  // the CPU's reading of exposed_seconds
  // What the backend ran in all (its NCCL kernels, else gloo's ranges), as merged [start,
  // end) intervals: the rank's communication time, whichever call each run belongs to.
  // Empty where the trace holds no runs of the backend.
  std::vector<std::pair<double, double>> backend_busy_us;
  std::size_t unclaimed_runs = 0;  // runs of the backend no call claimed, and their time
  double unclaimed_seconds = 0;
  std::string pairing;  // how calls found their runs: "launch", "external id", "order", ""
};

}  // namespace commbench
