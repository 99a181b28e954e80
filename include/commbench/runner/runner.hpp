// Measures one case at a time on a backend's group of ranks: correctness check, warm-up,
// timed batches until the stopping rule is satisfied on every rank, then the cross-rank
// combination into a ResultRow. Every decision is collective, so ranks never diverge.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "commbench/backend/backend.hpp"
#include "commbench/core/result_row.hpp"
#include "commbench/core/stopping_rule.hpp"
#include "commbench/runner/watchdog.hpp"

namespace commbench {

struct RunnerSettings {
  StoppingCriteria stopping;
  std::uint64_t warmup_iterations = 1;
  bool check = false;
  // Batches are sized to last about this long, so timer and agreement overhead stay
  // small for small messages while large messages still get many samples. Short
  // batches reach a given noise of the mean sooner where the noise comes in bursts
  // (scheduling): 1 ms needed a quarter of the time of 5 ms (docs/performance.md).
  double target_batch_seconds = 1e-3;
  int corrupt_rank = -1;  // testing only: damage one output element on this rank before checking
};

// Buffer sizes for a set of cases (in-place collectives keep their input in the receive
// buffer).
struct BufferRequirement {
  std::uint64_t send_bytes = 0;
  std::uint64_t recv_bytes = 0;
  std::uint64_t total() const { return send_bytes + recv_bytes; }
  bool operator==(const BufferRequirement&) const = default;
};
BufferRequirement buffers_needed(std::span<const OpCase> plan);
// The same, for the cases of `plan` that run collective `op`.
BufferRequirement buffers_needed(std::span<const OpCase> plan, Collective op);

class Runner {
 public:
  Runner(Backend& backend, RunnerSettings settings, Watchdog* watchdog = nullptr);

  // Allocates the largest buffers any collective of `plan` needs (collective; UsageError
  // on every rank when the memory cannot be had), so an impossible size fails before
  // the sweep. Buffers are then sized per collective: the memory a run holds is what
  // its current collective needs, not the sum over all of them.
  void prepare(std::span<const OpCase> plan);
  ResultRow run(const OpCase& c);

  // One message per case whose check found wrong elements, naming op, size and rank.
  const std::vector<std::string>& check_failures() const { return check_failures_; }

 private:
  std::uint64_t checked_wrong_elements(const OpCase& c);
  double timed(const OpCase& c, std::uint64_t iterations, const char* phase);
  std::uint64_t batch_for(double seconds_per_iteration) const;
  [[noreturn]] void throw_interrupted(const OpCase& c);
  // Runs one agreement step between ranks (barrier, allreduce) under the watchdog: a
  // rank that never arrives stalls these, not the operations.
  template <typename Step>
  auto agreed(const OpCase& c, const char* what, Step&& step) {
    if (watchdog_ == nullptr) return step();
    auto guard = watchdog_->guard(describe(c) + " (" + what + ")");
    return step();
  }

  Backend& backend_;
  RunnerSettings settings_;
  Watchdog* watchdog_;
  void use_buffers_for(Collective op);

  std::unique_ptr<Buffers> buffers_;
  BufferRequirement held_;
  std::vector<std::pair<Collective, BufferRequirement>> per_op_;
  std::vector<std::string> check_failures_;
};

}  // namespace commbench
