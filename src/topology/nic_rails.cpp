#include "commbench/topology/nic_rails.hpp"

#include <algorithm>
#include <map>

#include <fmt/format.h>

#include "commbench/topology/nic_roles.hpp"

namespace commbench {
namespace {

double median_of(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const std::size_t n = values.size();
  return n % 2 == 1 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]);
}

void mark_rails(std::vector<NodeNic>& nics) {
  const bool any_rdma = std::any_of(nics.begin(), nics.end(), [](const NodeNic& n) { return n.traffic.rdma; });
  if (any_rdma) {
    for (NodeNic& nic : nics) nic.rail = nic.traffic.rdma;
    return;
  }
  std::map<std::string, NodeNic*> busiest;
  for (NodeNic& nic : nics) {
    if (virtual_interface_name(nic.traffic.device) || !nic.traffic.known()) continue;
    NodeNic*& best = busiest[nic.node];
    if (best == nullptr || nic.traffic.bytes() > best->traffic.bytes()) best = &nic;
  }
  for (auto& [node, nic] : busiest) nic->rail = true;
}

std::string gigabytes(double bytes) { return fmt::format("{:.3g} GB", bytes / 1e9); }
std::string rate(double bytes_per_second) { return fmt::format("{:.3g} GB/s", bytes_per_second / 1e9); }

}  // namespace

std::string describe_nic(const NodeNic& nic) {
  return fmt::format("{} {}", nic.node, nic_label(nic.traffic.device, nic.traffic.port, nic.traffic.rdma));
}

RailsJudgement judge_rails(std::vector<NodeNic>& nics, double fraction, double min_bytes, double min_seconds) {
  mark_rails(nics);
  std::vector<double> bytes, peaks;
  double seconds = 0;
  for (const NodeNic& nic : nics) {
    if (!nic.rail || !nic.traffic.known()) continue;
    bytes.push_back(static_cast<double>(nic.traffic.bytes()));
    peaks.push_back(nic.peak_bytes_per_second);
    seconds = std::max(seconds, nic.seconds);
  }
  RailsJudgement judgement;
  if (bytes.size() < 2) {
    judgement.why_not = fmt::format("{} rail(s) with known counters: nothing to compare with", bytes.size());
    return judgement;
  }
  const double median_bytes = median_of(bytes);
  const double median_peak = median_of(peaks);
  if (median_bytes < min_bytes || seconds < min_seconds) {
    judgement.why_not =
        fmt::format("the median rail carried {} in {:.3g} s: too little to compare", gigabytes(median_bytes), seconds);
    return judgement;
  }
  judgement.compared = true;
  for (NodeNic& nic : nics) {
    if (!nic.rail || !nic.traffic.known()) continue;
    const double carried = static_cast<double>(nic.traffic.bytes());
    if (carried < fraction * median_bytes)
      nic.flag = fmt::format("carried {} of the median rail's {} ({:.2f} of its share)", gigabytes(carried),
                             gigabytes(median_bytes), carried / median_bytes);
    else if (median_peak > 0 && nic.peak_bytes_per_second < fraction * median_peak)
      nic.flag =
          fmt::format("its busiest interval reached {}, {:.2f} of the median rail's {}: a slow link",
                      rate(nic.peak_bytes_per_second), nic.peak_bytes_per_second / median_peak, rate(median_peak));
  }
  return judgement;
}

}  // namespace commbench
