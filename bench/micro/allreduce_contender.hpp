// The ways this micro-benchmark runs the same batch of allreduces (float, sum,
// out-of-place), so that the only difference between two of them is the code path
// commbench puts around the MPI call.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <memory>
#include <string_view>

#include "commbench/backend/backend.hpp"

namespace commbench::micro {

enum class Variant {
  bare,             // a plain MPI_Allreduce loop, as OSU-style benchmarks time it
  harness,          // Backend::time_batch, the path every timed commbench batch takes
  runner_reported,  // the time Runner::run reports for fixed iterations (informational)
};

std::string_view name_of(Variant variant);  // "bare", "harness", "runner_reported"

// Owns the buffers for one message size and runs one batch per call.
class AllreduceContender {
 public:
  virtual ~AllreduceContender() = default;
  AllreduceContender() = default;
  AllreduceContender(const AllreduceContender&) = delete;
  AllreduceContender& operator=(const AllreduceContender&) = delete;

  // Runs the batch and returns this rank's seconds for it. Collective: every rank of
  // the group must call it the same number of times.
  virtual double timed_batch() = 0;
};

// `backend` is used by the harness and runner variants; the bare variant talks to
// `bare_comm` directly. Collective (buffer allocation agrees across ranks).
std::unique_ptr<AllreduceContender> make_contender(Variant variant, Backend& backend, MPI_Comm bare_comm,
                                                   std::uint64_t bytes, std::uint64_t ops_per_batch);

}  // namespace commbench::micro
