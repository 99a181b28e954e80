#include "commbench/analysis/bandwidth_cost_model.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "commbench/core/error.hpp"
#include "commbench/core/number_text.hpp"

namespace commbench {

int latency_steps(Collective op, int ranks) {
  if (ranks <= 1) return 0;
  switch (op) {
    case Collective::allreduce: return 2 * static_cast<int>(std::ceil(std::log2(ranks)));
    case Collective::sendrecv: return 1;
    default: return ranks - 1;
  }
}

BandwidthCostModel::BandwidthCostModel(NodeTopology node, int gpus_per_node)
    : node_(std::move(node)), gpus_per_node_(std::max(gpus_per_node, 1)) {}

TheoreticalBusbw BandwidthCostModel::figure(Collective op, int ranks, int nodes) const {
  const auto key = std::make_tuple(op, ranks, nodes);
  if (const auto found = figures_.find(key); found != figures_.end()) return found->second;
  JobLayout layout;
  layout.nodes = std::max(nodes, 1);
  layout.ranks_per_node = std::max(1, (ranks + layout.nodes - 1) / layout.nodes);
  // The group's ranks on one node drive that many of the node's GPUs, the first ones.
  const auto used = std::min<std::size_t>(node_.gpus.size(), static_cast<std::size_t>(layout.ranks_per_node));
  for (std::size_t index = 0; index < used; ++index) layout.gpu_bus_ids.push_back(node_.gpus[index].bus_id);
  return figures_.emplace(key, theoretical_busbw(op, node_, layout)).first->second;
}

double BandwidthCostModel::seconds(const CommunicationCostQuery& query) const {
  const TheoreticalBusbw busbw = figure(query.op, query.ranks, query.nodes);
  if (!busbw.achievable_gbps || *busbw.achievable_gbps <= 0)
    throw UsageError(
        fmt::format("--predict: no bandwidth figure for {} over {} ranks on {} ({}); give --from a "
                    "bench-collectives CSV",
                    name_of(query.op), query.ranks, count_text(query.nodes, "node"), busbw.basis));
  const double hop = query.nodes > 1 ? kInterNodeHopLatencySeconds : kIntraNodeHopLatencySeconds;
  const double latency = kCollectiveBaseLatencySeconds + latency_steps(query.op, query.ranks) * hop;
  return latency + static_cast<double>(query.bytes) * bus_bandwidth_factor(query.op, query.ranks) /
                       (*busbw.achievable_gbps * 1e9);
}

std::string BandwidthCostModel::basis() const {
  return fmt::format("bandwidth model of {} ({} GPUs per node), achievable busbw plus a latency term",
                     node_.hostname.empty() ? std::string("this node") : node_.hostname, gpus_per_node_);
}

}  // namespace commbench
