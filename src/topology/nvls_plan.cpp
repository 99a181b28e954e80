#include "commbench/topology/nvls_plan.hpp"

#include <algorithm>
#include <vector>

namespace commbench {
namespace {

// NCCL's intra-node channel speeds (src/graph/search.cc at master: sm90SpeedArrayIntra for
// Hopper, sm100SpeedArrayIntra for Blackwell), fastest first.
const std::vector<double>& channel_speeds(bool blackwell) {
  static const std::vector<double> hopper = {60, 50, 40, 30, 24, 20, 15, 12, 11, 6, 3};
  static const std::vector<double> blackwell_speeds = {90, 80, 70, 60, 50, 45, 40, 30, 24, 20, 19, 18};
  return blackwell ? blackwell_speeds : hopper;
}

constexpr int kNcclMaxNvlsArity = 32;     // NCCL_MAX_NVLS_ARITY (src/include/device.h)
constexpr double kSearchRounding = 1e-3;  // NCCL rounds the bandwidth it subtracts to 1/1000

}  // namespace

std::optional<NvlsPlan> nccl_nvls_plan(double gpu_nvswitch_gbps, int gpus, bool blackwell, double efficiency) {
  if (gpus < 2) return std::nullopt;
  const std::vector<double>& speeds = channel_speeds(blackwell);
  NvlsPlan plan;
  plan.channels = std::min(gpus, kNcclMaxNvlsArity);
  // On one node the search must find every channel at once (minChannels = maxChannels), and
  // the head GPU of a channel carries it twice.
  const auto fits = [&](double speed) { return (plan.channels + 1) * speed <= gpu_nvswitch_gbps + kSearchRounding; };
  const auto found = std::find_if(speeds.begin(), speeds.end(), fits);
  if (found == speeds.end()) return std::nullopt;
  plan.channel_gbps = *found;
  // Pass 2 of the search raises the graph's second speed while it is below twice the first.
  auto second = found;
  while (*second < 2 * plan.channel_gbps && second != speeds.begin()) --second;
  plan.second_speed_gbps = *second;
  plan.reduced_per_channel = plan.channel_gbps * efficiency * (plan.channels - 1) / plan.channels * 2;
  return plan;
}

double NvlsPlan::one_node_busbw() const { return channels * std::min(reduced_per_channel, second_speed_gbps); }

double nccl_nvls_tree_channel_cap(int nodes, bool blackwell) {
  if (blackwell) return nodes <= 2 ? 96.0 : 80.0;
  return nodes <= 2 ? 57.7 : 45.5;
}

}  // namespace commbench
