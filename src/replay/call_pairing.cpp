#include "call_pairing.hpp"

#include <algorithm>
#include <utility>

namespace commbench {

namespace {

// NCCL runs these in kernels of another operation's name.
bool nccl_runs_as(const std::string& call_op, const std::string& kernel_op) {
  if (kernel_op == "sendrecv")
    return call_op == "send" || call_op == "recv" || call_op == "alltoall" || call_op == "gather" ||
           call_op == "scatter";
  return call_op == "barrier" && kernel_op == "allreduce";
}

// Whether `run` can be the backend's run of `call`: its operation, or (gloo) a reduce-scatter
// run as an allreduce of the whole input, or an NCCL kernel of the operation NCCL runs the
// call as. NCCL's generic kernel names no operation: it can run any call of an operation
// that gloo does not run in this trace (a job may run gloo and NCCL side by side).
bool can_run(const PytorchCommEvents::Call& run, const PytorchCommEvents::Call& call,
             const std::set<std::string>& gloo_ops, RunKind kind) {
  const bool kernel = is_nccl_kernel(run);
  if ((kind == RunKind::nccl && !kernel) || (kind == RunKind::gloo && run.name.rfind("gloo:", 0) != 0)) return false;
  if (run.op == call.op) return true;
  if (!kernel) return call.op == "reducescatter" && run.op == "allreduce";
  if (nccl_runs_as(call.op, run.op)) return true;
  return run.op.empty() && (kind == RunKind::nccl || gloo_ops.count(call.op) == 0);
}

// The range the backend ran a call in: the first one not yet taken that started after the
// call (and not after `until`) and can run it. A process group runs its work in the order
// it was called, so in a job of one group this is the k-th range for the k-th call.
const PytorchCommEvents::Call* backend_range_of(const PytorchCommEvents::Call& call,
                                                const std::vector<PytorchCommEvents::Call>& runs,
                                                const std::set<std::string>& gloo_ops, RunKind kind, double until,
                                                std::vector<bool>& paired, std::size_t& first_open) {
  while (first_open < paired.size() && paired[first_open]) ++first_open;
  for (std::size_t i = first_open; i < runs.size() && runs[i].ts <= until; ++i) {
    const PytorchCommEvents::Call& run = runs[i];
    if (paired[i] || run.ts < call.ts || !can_run(run, call, gloo_ops, kind)) continue;
    paired[i] = true;
    return &run;
  }
  return nullptr;
}

}  // namespace

bool is_nccl_kernel(const PytorchCommEvents::Call& run) { return !run.algo.empty() || run.name.rfind("nccl", 0) == 0; }

CallPairing::CallPairing(std::vector<PytorchCommEvents::Call> events) : events_(std::move(events)) {
  std::stable_sort(events_.begin(), events_.end(), [](const auto& a, const auto& b) { return a.ts < b.ts; });
  paired_.assign(events_.size(), false);
  for (std::size_t i = 0; i < events_.size(); ++i) {
    if (events_[i].name.rfind("gloo:", 0) == 0) gloo_ops_.insert(events_[i].op);
    if (events_[i].external_id) by_external_id_.emplace(*events_[i].external_id, i);
  }
}

const PytorchCommEvents::Call* CallPairing::take(const PytorchCommEvents::Call& call, RunKind kind, double until) {
  return backend_range_of(call, events_, gloo_ops_, kind, until, paired_, first_open_);
}

const PytorchCommEvents::Call* CallPairing::take_linked(std::int64_t external_id) {
  const auto [first, last] = by_external_id_.equal_range(external_id);
  for (auto at = first; at != last; ++at)
    if (!paired_[at->second]) {
      paired_[at->second] = true;
      return &events_[at->second];
    }
  return nullptr;
}

std::vector<const PytorchCommEvents::Call*> CallPairing::untaken() const {
  std::vector<const PytorchCommEvents::Call*> untaken;
  for (std::size_t i = 0; i < events_.size(); ++i)
    if (!paired_[i]) untaken.push_back(&events_[i]);
  return untaken;
}

const PytorchCommEvents::Call* run_of(const PytorchCommEvents::Call& call, const PytorchCommEvents::Call* param,
                                      bool records_in_trace, CallPairing& runs) {
  if (param != nullptr && param->external_id && runs.linked()) return runs.take_linked(*param->external_id);
  const RunKind kind = param != nullptr ? RunKind::nccl : records_in_trace ? RunKind::gloo : RunKind::any;
  return runs.take(call, kind);
}

}  // namespace commbench
