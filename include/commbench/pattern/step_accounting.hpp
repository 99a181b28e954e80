// Where one training step's time went, from when each of its items could start and when it
// ended: compute, communication per collective type (op x group), and the communication
// that compute did not hide. Pure arithmetic over a schedule and its item timings, so the
// definitions (docs/methodology.md, "bench-patterns: exposed communication") are tested
// without running anything.
//
// An item's duration runs from when it could start — the later of its stream
// predecessor's end and the ends of the steps it waits for (the step's start when there
// are none) — to its end: the time it occupied its stream, queueing behind other
// communication on the same communicator included, waiting for its inputs excluded.
#pragma once

#include <compare>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "commbench/core/collective.hpp"
#include "commbench/pattern/parallel_layout.hpp"
#include "commbench/pattern/schedule.hpp"

namespace commbench {

// Seconds from the step's start (the executor's origin event).
struct ItemTiming {
  double ready_seconds = 0;  // when it could start
  double end_seconds = 0;
};

// A kind of communication the report adds up: a collective over a group, or the peer
// rounds (send/recv) over a group.
struct CommunicationType {
  StepKind kind = StepKind::collective;   // collective or peer
  Collective op = Collective::allreduce;  // collective only (sendrecv for peer)
  GroupRole group = GroupRole::world;
  auto operator<=>(const CommunicationType&) const = default;
};
CommunicationType communication_type_of(const ScheduleStep& step);
// "allreduce/data", "sendrecv/pipeline"
std::string label_of(const CommunicationType& type);

struct CommunicationTotals {
  CommunicationType type;
  std::uint64_t count = 0;  // items per step
  std::uint64_t bytes = 0;  // the schedule's bytes summed (nccl-tests' size convention)
  double seconds = 0;       // sum of the items' durations
  // The part of the step's exposed time when this type was communicating: each exposed
  // stretch is shared equally among the types active in it.
  double exposed_seconds = 0;
};

struct StepBreakdown {
  double step_seconds = 0;                // the origin to the last item's end
  double compute_seconds = 0;             // the union of compute items' intervals
  double communication_seconds = 0;       // sum of communication items' durations
  double communication_busy_seconds = 0;  // the union of their intervals
  // step − compute: the time no compute ran, which communication (or waiting for it)
  // filled. The step's tail after the last compute counts; so does a bubble.
  double exposed_seconds = 0;
  // Exposed time no communication was active in (host overhead, idle waits).
  double unattributed_exposed_seconds = 0;
  std::vector<CommunicationTotals> types;  // in CommunicationType order
};

// UsageError when `timings` does not have one entry per step of `schedule`.
StepBreakdown account_step(const RankSchedule& schedule, std::span<const ItemTiming> timings);
// Each field averaged over `steps` (types matched by type); empty input gives zeros.
StepBreakdown mean_of(std::span<const StepBreakdown> steps);

}  // namespace commbench
