#include "commbench/runner/collective_workload.hpp"

namespace commbench {

std::uint64_t CollectiveWorkload::check() {
  backend_.fill_inputs(case_, *held_);
  // One operation, eagerly (never a replayed graph of several): what the check verifies.
  backend_.run_single(case_, *held_);
  if (corrupt_rank_ == backend_.group().rank()) backend_.corrupt_output(case_, *held_);
  return backend_.count_wrong(case_, *held_);
}

}  // namespace commbench
