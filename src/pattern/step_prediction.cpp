#include "commbench/pattern/step_prediction.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>
#include <tuple>
#include <utility>

#include "commbench/core/error.hpp"

namespace commbench {
namespace {

// A collective's meeting point: the members (as indices into the simulated schedules)
// and the occurrence of the collective on that group.
using RendezvousKey = std::tuple<int, std::vector<std::size_t>, std::size_t>;

struct Arrival {
  std::size_t rank = 0;  // index into the simulated schedules
  std::size_t step = 0;
};

struct Rendezvous {
  std::vector<Arrival> arrived;
  double latest_ready = 0;
  double longest_seconds = 0;
};

struct GroupShape {
  std::vector<int> world_members;    // in key order
  std::vector<std::size_t> members;  // simulated indices, sorted, distinct
  int ranks = 1;
  int nodes = 1;
};

class StepSimulator {
 public:
  StepSimulator(const ParallelLayout& layout, std::span<const RankSchedule> schedules, const StandInOf& stand_in_of,
                const CommunicationCostModel& costs)
      : layout_(layout), schedules_(schedules), stand_in_of_(stand_in_of), costs_(costs) {
    for (std::size_t index = 0; index < schedules.size(); ++index) index_of_[schedules[index].world_rank] = index;
    timings_.resize(schedules.size());
    pending_.resize(schedules.size());
    dependents_.resize(schedules.size());
    depends_on_.resize(schedules.size());
    resolved_.resize(schedules.size());
    occurrence_.resize(schedules.size());
    for (std::size_t rank = 0; rank < schedules.size(); ++rank) link(rank);
  }

  std::vector<std::vector<ItemTiming>> run() {
    while (!ready_.empty()) {
      const Arrival item = ready_.back();
      ready_.pop_back();
      start(item.rank, item.step);
    }
    for (std::size_t rank = 0; rank < schedules_.size(); ++rank)
      for (std::size_t step = 0; step < schedules_[rank].steps.size(); ++step)
        if (!resolved_[rank][step])
          throw UsageError(
              fmt::format("pattern schedule: rank {} step {} ({}) never completes: a member of its group "
                          "never reaches the matching collective",
                          schedules_[rank].world_rank, step, schedules_[rank].steps[step].label));
    return std::move(timings_);
  }

 private:
  // Stream predecessors and waits_for become dependency counts; occurrences on each group
  // are numbered in enqueue order, which is how members match their collectives.
  void link(std::size_t rank) {
    const std::vector<ScheduleStep>& steps = schedules_[rank].steps;
    timings_[rank].resize(steps.size());
    pending_[rank].assign(steps.size(), 0);
    dependents_[rank].resize(steps.size());
    depends_on_[rank].resize(steps.size());
    resolved_[rank].assign(steps.size(), false);
    occurrence_[rank].assign(steps.size(), 0);
    std::map<std::string, std::size_t> last_on_stream;
    std::map<int, std::size_t> collectives_on_group;
    for (std::size_t step = 0; step < steps.size(); ++step) {
      const ScheduleStep& item = steps[step];
      std::set<std::size_t> before(item.waits_for.begin(), item.waits_for.end());
      if (const auto found = last_on_stream.find(item.stream); found != last_on_stream.end())
        before.insert(found->second);
      last_on_stream[item.stream] = step;
      for (const std::size_t earlier : before) {
        if (earlier >= step)
          throw UsageError(fmt::format("pattern schedule: rank {} step {} waits for step {}, not an earlier one",
                                       schedules_[rank].world_rank, step, earlier));
        dependents_[rank][earlier].push_back(step);
      }
      pending_[rank][step] = static_cast<int>(before.size());
      depends_on_[rank][step].assign(before.begin(), before.end());
      if (item.kind == StepKind::collective)
        occurrence_[rank][step] = collectives_on_group[static_cast<int>(item.group)]++;
      if (before.empty()) ready_.push_back({rank, step});
    }
  }

  std::size_t simulated_index(int world_rank) const {
    const int stand_in = stand_in_of_(world_rank);
    const auto found = index_of_.find(stand_in);
    if (found == index_of_.end())
      throw UsageError(
          fmt::format("pattern schedule: rank {} stands in for rank {} but is not simulated", stand_in, world_rank));
    return found->second;
  }

  const GroupShape& group_of(std::size_t rank, GroupRole role) {
    const auto key = std::make_pair(rank, static_cast<int>(role));
    if (const auto found = groups_.find(key); found != groups_.end()) return found->second;
    GroupShape shape;
    const std::vector<int> members = layout_.members(role, schedules_[rank].world_rank);
    std::set<std::size_t> simulated;
    std::set<int> nodes;
    for (const int member : members) {
      simulated.insert(simulated_index(member));
      nodes.insert(member / std::max(layout_.ranks_per_node, 1));
    }
    shape.members.assign(simulated.begin(), simulated.end());
    shape.world_members = members;
    shape.ranks = static_cast<int>(members.size());
    shape.nodes = static_cast<int>(nodes.size());
    return groups_.emplace(key, std::move(shape)).first->second;
  }

  double ready_time(std::size_t rank, std::size_t step) const {
    double ready = 0;
    for (const std::size_t earlier : depends_on_[rank][step])
      ready = std::max(ready, timings_[rank][earlier].end_seconds);
    return ready;
  }

  void start(std::size_t rank, std::size_t step) {
    const ScheduleStep& item = schedules_[rank].steps[step];
    const double ready = ready_time(rank, step);
    timings_[rank][step].ready_seconds = ready;
    switch (item.kind) {
      case StepKind::compute: finish(rank, step, ready + item.compute_seconds); break;
      case StepKind::collective: arrive_at_collective(rank, step, ready); break;
      case StepKind::peer: arrive_at_peer_round(rank, step, ready); break;
    }
  }

  void arrive_at_collective(std::size_t rank, std::size_t step, double ready) {
    const ScheduleStep& item = schedules_[rank].steps[step];
    const GroupShape& group = group_of(rank, item.group);
    Rendezvous& meeting =
        rendezvous_[RendezvousKey{static_cast<int>(item.group), group.members, occurrence_[rank][step]}];
    meeting.arrived.push_back({rank, step});
    meeting.latest_ready = std::max(meeting.latest_ready, ready);
    // A one-rank group moves nothing across a bus; nccl-tests' factor is 0 there.
    const double seconds =
        group.ranks <= 1 ? 0.0 : costs_.seconds({StepKind::collective, item.op, item.bytes, group.ranks, group.nodes});
    meeting.longest_seconds = std::max(meeting.longest_seconds, seconds);
    if (meeting.arrived.size() < group.members.size()) return;
    const double end = meeting.latest_ready + meeting.longest_seconds;
    for (const Arrival& member : meeting.arrived) finish(member.rank, member.step, end);
  }

  // The simulated ranks `rank` sends to or receives from in its step's round, and the
  // longest of those messages' durations.
  std::pair<std::vector<std::size_t>, double> peer_partners(std::size_t rank, std::size_t step) {
    const ScheduleStep& item = schedules_[rank].steps[step];
    const PlannedPeerRound& round = schedules_[rank].peer_rounds.at(item.peer_round);
    const int world_rank = schedules_[rank].world_rank;
    const std::vector<int>& members = group_of(rank, round.group).world_members;
    const auto own = std::find(members.begin(), members.end(), world_rank);
    const int own_index = static_cast<int>(own - members.begin());
    std::set<std::size_t> partners;
    double seconds = 0;
    const int per_node = std::max(layout_.ranks_per_node, 1);
    for (const auto& [source, destination] : round.transfers) {
      if (source != own_index && destination != own_index) continue;
      const int other = members.at(static_cast<std::size_t>(source == own_index ? destination : source));
      const std::size_t index = simulated_index(other);
      if (index != rank) partners.insert(index);
      const int nodes = other / per_node == world_rank / per_node ? 1 : 2;
      seconds =
          std::max(seconds, costs_.seconds({StepKind::peer, Collective::sendrecv, round.message_bytes, 2, nodes}));
    }
    return {std::vector<std::size_t>(partners.begin(), partners.end()), seconds};
  }

  void arrive_at_peer_round(std::size_t rank, std::size_t step, double ready) {
    const std::size_t round = schedules_[rank].steps[step].peer_round;
    peer_arrivals_[{rank, round}] = {step, ready};
    std::vector<std::size_t> candidates = peer_partners(rank, step).first;
    candidates.push_back(rank);
    for (const std::size_t candidate : candidates) {
      const auto own = peer_arrivals_.find({candidate, round});
      if (own == peer_arrivals_.end() || resolved_[candidate][own->second.first]) continue;
      const auto [partners, seconds] = peer_partners(candidate, own->second.first);
      double latest = own->second.second;
      bool all_there = true;
      for (const std::size_t partner : partners) {
        const auto found = peer_arrivals_.find({partner, round});
        if (found == peer_arrivals_.end()) {
          all_there = false;
          break;
        }
        latest = std::max(latest, found->second.second);
      }
      if (all_there) finish(candidate, own->second.first, latest + seconds);
    }
  }

  void finish(std::size_t rank, std::size_t step, double end) {
    timings_[rank][step].end_seconds = end;
    resolved_[rank][step] = true;
    for (const std::size_t later : dependents_[rank][step])
      if (--pending_[rank][later] == 0) ready_.push_back({rank, later});
  }

  const ParallelLayout& layout_;
  std::span<const RankSchedule> schedules_;
  const StandInOf& stand_in_of_;
  const CommunicationCostModel& costs_;
  std::map<int, std::size_t> index_of_;
  std::vector<std::vector<ItemTiming>> timings_;
  std::vector<std::vector<int>> pending_;
  std::vector<std::vector<std::vector<std::size_t>>> dependents_;
  // Its stream predecessor and the steps it waits for.
  std::vector<std::vector<std::vector<std::size_t>>> depends_on_;
  std::vector<std::vector<bool>> resolved_;
  std::vector<std::vector<std::size_t>> occurrence_;
  std::vector<Arrival> ready_;
  std::map<std::pair<std::size_t, int>, GroupShape> groups_;
  std::map<RendezvousKey, Rendezvous> rendezvous_;
  // (rank, round) -> (its step, when it was ready)
  std::map<std::pair<std::size_t, std::size_t>, std::pair<std::size_t, double>> peer_arrivals_;
};

}  // namespace

std::vector<std::vector<ItemTiming>> simulate_step(const ParallelLayout& layout,
                                                   std::span<const RankSchedule> schedules,
                                                   const StandInOf& stand_in_of, const CommunicationCostModel& costs) {
  return StepSimulator(layout, schedules, stand_in_of, costs).run();
}

StepPrediction predict_step(const PatternConfig& config, const CommunicationCostModel& costs, int exact_ranks) {
  const ParallelLayout& layout = config.layout;
  StepPrediction prediction;
  prediction.every_rank = layout.ranks() <= exact_ranks;
  // The shortcut: ranks of one pipeline stage issue the same collectives of the same sizes
  // in the same order (they differ only in which shard or expert they hold, and shards
  // are equal), and every group is a product of the layout's dimensions, so they reach
  // each collective at the same time and one of them — the stage's first rank — tells
  // the whole stage's timeline.
  const int stage_ranks = layout.tensor * layout.data;
  const StandInOf stand_in_of =
      prediction.every_rank ? StandInOf([](int world_rank) { return world_rank; })
                            : StandInOf([&](int world_rank) { return layout.pipeline_rank(world_rank) * stage_ranks; });
  std::vector<RankSchedule> schedules;
  if (prediction.every_rank) {
    for (int rank = 0; rank < layout.ranks(); ++rank) schedules.push_back(build_schedule(config, rank));
  } else {
    for (int stage = 0; stage < layout.pipeline; ++stage)
      schedules.push_back(build_schedule(config, stage * stage_ranks));
  }
  std::vector<std::vector<ItemTiming>> timings = simulate_step(layout, schedules, stand_in_of, costs);
  for (std::size_t index = 0; index < schedules.size(); ++index)
    prediction.ranks.push_back({std::move(schedules[index]), std::move(timings[index])});
  return prediction;
}

SlowestPredictedRank slowest_predicted_rank(const StepPrediction& prediction) {
  SlowestPredictedRank slowest;
  for (std::size_t index = 0; index < prediction.ranks.size(); ++index) {
    StepBreakdown step = account_step(prediction.ranks[index].schedule, prediction.ranks[index].timings);
    if (index == 0 || step.step_seconds > slowest.step.step_seconds) slowest = {index, std::move(step)};
  }
  return slowest;
}

}  // namespace commbench
