// The job's NICs side by side for one case: which ports carry the job (the rails), and
// which of them fell short of the others. A port is flagged when it carried less than
// `fraction` of the median rail's bytes (a rail left out: NCCL_IB_HCA, a port down) or
// when its busiest sampling interval stayed below `fraction` of the median rail's
// busiest (a slow link: see nic_sampler.hpp for why bytes alone cannot tell).
#pragma once

#include <string>
#include <vector>

#include "commbench/topology/nic_counters.hpp"

namespace commbench {

struct NodeNic {
  std::string node;
  NicTraffic traffic;
  double seconds = 0;
  double peak_bytes_per_second = 0;
  bool rail = false;  // a port of the kind that carries the job between nodes
  std::string flag;   // why it fell short; empty when it did not or was not compared

  double bytes_per_second() const { return seconds > 0 ? static_cast<double>(traffic.bytes()) / seconds : 0.0; }
};

struct RailsJudgement {
  bool compared = false;  // enough rails and traffic to compare
  std::string why_not;    // when not compared
};

// Rails are the RDMA ports when any node has one, else each node's busiest interface
// that is not virtual (bridges, container networks: the socket transport uses one
// interface per node). Comparing needs two rails whose median carried at least
// `min_bytes` over at least `min_seconds`.
RailsJudgement judge_rails(std::vector<NodeNic>& nics, double fraction, double min_bytes = 1 << 20,
                           double min_seconds = 0.05);

// "cb-node3 eth0", "node7 mlx5_3:1"
std::string describe_nic(const NodeNic& nic);

}  // namespace commbench
