// One collective of a sweep as a Workload: what bench-collectives measures, and the
// building block other commands time when a step is a single collective.
#pragma once

#include "commbench/backend/backend.hpp"
#include "commbench/core/op_case.hpp"
#include "commbench/runner/collective_buffers.hpp"
#include "commbench/runner/workload.hpp"

namespace commbench {

class CollectiveWorkload final : public Workload {
 public:
  // `corrupt_rank` (tests only) damages one output element on that rank before the check,
  // proving the check catches errors; -1 for never.
  CollectiveWorkload(Backend& backend, CollectiveBuffers& buffers, OpCase op_case, int corrupt_rank = -1)
      : backend_(backend), buffers_(buffers), case_(op_case), corrupt_rank_(corrupt_rank) {}

  std::string describe() const override { return commbench::describe(case_); }
  void prepare() override { held_ = &buffers_.for_collective(case_.op); }
  std::uint64_t check() override;
  double time(std::uint64_t iterations) override { return backend_.time_batch(case_, *held_, iterations); }
  // The buffers stay with CollectiveBuffers for the next case of the same collective.
  void release() override { held_ = nullptr; }

 private:
  Backend& backend_;
  CollectiveBuffers& buffers_;
  OpCase case_;
  int corrupt_rank_;
  Buffers* held_ = nullptr;
};

}  // namespace commbench
