// Which event of a trace ran which call: the backend's own events (gloo's ranges, NCCL's
// kernels) and PyTorch's NCCL records are paired with the c10d:: operators that caused
// them, by PyTorch's External id where the trace links them, else in the order a process
// group runs its work.
#pragma once

#include <cstdint>
#include <limits>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "pytorch_comm_events.hpp"

namespace commbench {

// Which backend's runs a call may take: under PyTorch's NCCL backend a call holds a
// record_param_comms, so in a trace that has them a call without one ran on gloo.
enum class RunKind { any, nccl, gloo };

// An NCCL kernel: it names its algorithm, or its name is NCCL's.
bool is_nccl_kernel(const PytorchCommEvents::Call& run);

// Pairs calls with the events that ran them: by PyTorch's External id where the events
// carry it, else in order, each call taking the first event not yet taken that can run it
// and started after it.
class CallPairing {
 public:
  explicit CallPairing(std::vector<PytorchCommEvents::Call> events);
  // The first event not yet taken that can run `call`, started after it and not after
  // `until`; none when there is none.
  const PytorchCommEvents::Call* take(const PytorchCommEvents::Call& call, RunKind kind = RunKind::any,
                                      double until = std::numeric_limits<double>::infinity());
  // Whether the events say which call launched them: then they are paired by that alone.
  bool linked() const { return !by_external_id_.empty(); }
  // The event that the call with this External id launched.
  const PytorchCommEvents::Call* take_linked(std::int64_t external_id);
  const std::vector<PytorchCommEvents::Call>& events() const { return events_; }
  // The events no call took.
  std::vector<const PytorchCommEvents::Call*> untaken() const;

 private:
  std::vector<PytorchCommEvents::Call> events_;
  std::set<std::string> gloo_ops_;  // operations gloo's own ranges ran
  std::multimap<std::int64_t, std::size_t> by_external_id_;
  std::vector<bool> paired_;
  std::size_t first_open_ = 0;
};

// The backend's run of a call that PyTorch's NCCL record `param` (nested in it) describes.
const PytorchCommEvents::Call* run_of(const PytorchCommEvents::Call& call, const PytorchCommEvents::Call* param,
                                      bool records_in_trace, CallPairing& runs);

}  // namespace commbench
