// What one collective or peer round costs, as the step predictor (step_prediction.hpp)
// asks for it: the op, its size in nccl-tests' convention and the group it runs over.
// A model answers from a measured sweep (sweep_cost_model.hpp) or from the bandwidth
// model (bandwidth_cost_model.hpp); the predictor does not care which.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "commbench/core/collective.hpp"
#include "commbench/pattern/schedule.hpp"

namespace commbench {

struct CommunicationCostQuery {
  StepKind kind = StepKind::collective;  // collective, or peer (then op is sendrecv)
  Collective op = Collective::allreduce;
  std::uint64_t bytes = 0;  // nccl-tests' size; for a peer round, one message
  int ranks = 1;            // the group's ranks (2 for a peer transfer)
  int nodes = 1;            // the nodes those ranks are on
};

class CommunicationCostModel {
 public:
  virtual ~CommunicationCostModel() = default;
  // Seconds the item occupies its stream once every member has reached it. A UsageError
  // naming what is missing when the model has no figure for the query: a prediction
  // never guesses silently.
  virtual double seconds(const CommunicationCostQuery& query) const = 0;
  // Where the figures come from, for the report ("bench-collectives sweep runs/a.csv").
  virtual std::string basis() const = 0;
  // How the answers so far were stretched beyond what was measured (extrapolated sizes,
  // converted groups); none for a model that measures or derives every answer.
  virtual std::vector<std::string> notes() const { return {}; }
};

}  // namespace commbench
