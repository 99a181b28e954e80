// The collective calls of a rank as PyTorch marks them. Each generation marks a call its
// own way, often several ways at once, nested on the thread that called it: the c10d::
// dispatcher operator, ProcessGroupNCCL's `nccl:all_reduce` range, and record_param_comms
// (which, in newer traces, names the operation and its sizes). Markers nested in another
// on one thread are one call; a call is counted once, whichever of them the trace holds.
#pragma once

#include <cstdint>
#include <vector>

#include "pytorch_comm_events.hpp"

namespace commbench {

struct MarkedCall {
  const PytorchCommEvents::Call* op = nullptr;          // c10d::allreduce_, ...
  const PytorchCommEvents::Call* annotation = nullptr;  // nccl:all_reduce, ...
  const PytorchCommEvents::Call* record = nullptr;      // record_param_comms naming the operation
  const PytorchCommEvents::Call* outer = nullptr;       // the outermost: when the call was made, and its name
  std::vector<const PytorchCommEvents::Call*> runs;     // the backend's runs of it: NCCL kernels, gloo ranges
};

// The calls the markers make, in the order they were called.
std::vector<MarkedCall> marked_calls(const PytorchCommEvents::CallList& ops,
                                     const PytorchCommEvents::CallList& annotations,
                                     const PytorchCommEvents::CallList& records);

// Links each NCCL kernel to the call whose markers hold its launch on the CPU (the launch
// and the kernel share a correlation id): the link the trace itself records. A kernel whose
// launch is not in the trace goes to the record_param_comms with its External id, where
// that id is not merely its correlation id again. Returns the runs no call claimed; none
// when no kernel's launch is in the trace (`linked` false: the trace has no such links).
struct LaunchLinks {
  bool linked = false;
  bool by_external_id = false;  // some kernel was linked by its External id
  std::vector<const PytorchCommEvents::Call*> unclaimed;
};
LaunchLinks link_kernels_by_launch(std::vector<MarkedCall>& calls,
                                   const std::vector<const PytorchCommEvents::Call*>& kernels,
                                   const std::vector<PytorchCommEvents::Launch>& launches);

}  // namespace commbench
