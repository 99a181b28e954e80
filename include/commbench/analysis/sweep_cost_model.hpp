// A cost model from a bench-collectives CSV or JSON file (--predict --from FILE,
// bench-replay --fabric): what each collective took on this machine, by op, size and group. Sizes between measured ones are
// interpolated in log-log (time against bytes); below the smallest size the smallest's
// time stands (the latency floor); above the largest the largest's bus bandwidth holds.
// A group of a rank or node count the sweep did not measure is converted through bus
// bandwidth: time = bytes x bus factor(op, ranks) / busbw measured on the nearest group
// (same node count first, then the closest rank count). Every such extrapolation is
// listed in notes(); an op the sweep lacks is a UsageError naming it.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "commbench/pattern/communication_cost.hpp"

namespace commbench {

struct SweepPoint {
  std::uint64_t bytes = 0;
  double seconds = 0;
  double busbw_gbps = 0;
};

class SweepCostModel : public CommunicationCostModel {
 public:
  // `text` is a bench-collectives --csv file (at least the columns op, bytes, ranks, nodes,
  // time_us, busbw_gbps, by name; others are ignored) or its --json file (the same fields
  // in each of `rows`); repeated (op, ranks, nodes, bytes) rows are averaged.
  // `origin` names the file in errors: "--from runs/a.csv".
  SweepCostModel(std::string_view text, std::string origin);

  double seconds(const CommunicationCostQuery& query) const override;
  std::string basis() const override;
  // The extrapolations the queries so far needed, one line each.
  std::vector<std::string> notes() const override { return {notes_.begin(), notes_.end()}; }

 private:
  using SeriesKey = std::tuple<Collective, int, int>;  // op, ranks, nodes
  const std::vector<SweepPoint>& series_for(const CommunicationCostQuery& query, SeriesKey& chosen) const;

  std::string origin_;
  std::map<SeriesKey, std::vector<SweepPoint>> series_;  // points in increasing bytes
  mutable std::set<std::string> notes_;
};

}  // namespace commbench
