// Runs one rank's schedule of a training step on the real engine, as a Workload the one
// measurement loop times (runner/measurement.hpp): every step enqueued on its named stream
// of one StreamSet — collectives over their group's sub-communicator, peer rounds through
// their PeerExchange, compute through the calibrated stand-in — with `waits_for` turned
// into recorded events and waits, and an event after every item so each step's time can
// be taken apart (step_accounting.hpp).
//
// prepare() (collective, under the loop's watchdog guard) allocates one pair of buffers
// per group sized for the largest collective over it, creates the peer exchanges of
// schedule.peer_rounds in order on their groups, creates the streams and calibrates the
// compute stand-in. time(N) runs N steps back to back, each ending when every stream has
// drained (a training step ends with its optimizer step), and keeps each step's breakdown.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "commbench/backend/compute_standin.hpp"
#include "commbench/backend/peer_exchange.hpp"
#include "commbench/backend/stream_set.hpp"
#include "commbench/core/op_case.hpp"
#include "commbench/pattern/pattern_groups.hpp"
#include "commbench/pattern/schedule.hpp"
#include "commbench/pattern/step_accounting.hpp"
#include "commbench/runner/workload.hpp"

namespace commbench {

// The case a collective step runs over a group of `group_ranks` ranks: out of place, sum
// where the op reduces and the step names none, root 0 where it has one.
OpCase op_case_for(const ScheduleStep& step, int group_ranks);

class PatternStepWorkload final : public Workload {
 public:
  // Throws UsageError for a schedule the executor cannot run: a `waits_for` that is not an
  // earlier step, a peer step naming a missing round, a collective with no bytes.
  PatternStepWorkload(PatternGroups& groups, RankSchedule schedule, std::string description);
  ~PatternStepWorkload() override;

  std::string describe() const override { return description_; }
  void prepare() override;
  std::uint64_t check() override { return 0; }  // nothing to check: the data is not the point
  double time(std::uint64_t iterations) override;
  void release() override;

  const RankSchedule& schedule() const { return schedule_; }
  // Every step run, in order: warm-up and the loop's calibration first, then the timed
  // ones (the last Measurement::iterations of them).
  const std::vector<StepBreakdown>& steps() const { return steps_; }
  // The last step's item timings, in schedule order.
  const std::vector<ItemTiming>& last_timings() const { return timings_; }
  const ComputeCalibration& calibration() const { return calibration_; }
  // Where the compute runs ("one host thread", "132 blocks x 128 threads ...").
  const std::string& compute_occupies() const { return compute_occupies_; }
  // What prepare() had to adapt to the backend (a type it lacks), for the report's notes.
  const std::vector<std::string>& notes() const { return notes_; }

 private:
  void run_step();
  std::string item_name(std::size_t index) const;
  // The case `step` runs as on `backend`: as scheduled, or with 16- and 8-bit floats
  // carried as float32 of the same bytes where the backend lacks them (noted).
  OpCase carried_case(Backend& backend, const ScheduleStep& step, std::size_t index);

  PatternGroups& groups_;
  RankSchedule schedule_;
  std::string description_;
  // Per step: the stream item before it (or none), and its case for a collective.
  std::vector<std::ptrdiff_t> stream_predecessor_;
  std::vector<OpCase> cases_;
  std::vector<Backend*> backend_of_;
  std::vector<Buffers*> buffers_of_;
  // Owned per prepare(): released in reverse.
  std::vector<std::unique_ptr<Buffers>> buffers_;
  std::vector<std::unique_ptr<PeerExchange>> exchanges_;
  std::unique_ptr<StreamSet> streams_;
  ComputeCalibration calibration_;
  std::string compute_occupies_;
  std::vector<std::string> notes_;

  // Each item's profiler range name ("backward bucket 3: allreduce 25MiB ... on data"),
  // made on the first step a profiler sees.
  std::vector<std::string> item_names_;
  std::uint64_t steps_run_ = 0;

  std::vector<StreamEvent> ends_;
  std::vector<ItemTiming> timings_;
  std::vector<StepBreakdown> steps_;
};

}  // namespace commbench
