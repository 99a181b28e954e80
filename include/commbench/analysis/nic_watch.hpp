// bench-collectives' NIC counters (--nic-counters): one rank per node samples the node's
// NICs while each case runs, the ranks pool what their nodes' ports carried, and the
// rails are compared. Every case gives a `nic` record per port (JSON), and the run a
// rails table and a note per flagged port (console).
#pragma once

#include <map>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "commbench/backend/bootstrap.hpp"
#include "commbench/core/op_case.hpp"
#include "commbench/core/record.hpp"
#include "commbench/topology/nic_rails.hpp"
#include "commbench/topology/nic_sampler.hpp"

namespace commbench {

class NicWatch {
 public:
  // Disabled: start and finish_case do nothing and cost no communication. Every rank
  // must agree on `enabled` (finish_case is collective).
  NicWatch(Bootstrap& group, bool enabled, double fraction, NicCounterSources sources = {});

  bool enabled() const { return enabled_; }
  // The GPUs each NIC (by device or interface name) is nearest to, from `node`'s topology
  // (gpus_nearest_each_nic), or with `node` empty from one node's, the others taken to be
  // alike: a rail that falls short is then named with them. Every rank gives the same.
  void name_nearest_gpus(std::map<std::string, std::vector<int>> gpus_by_nic, const std::string& node = "") {
    gpus_by_nic_[node] = std::move(gpus_by_nic);
  }
  void start_case();
  // Collective: every rank's node ports, judged; the same on every rank. `what` names the
  // measurement in notes ("pair round 2"); finish_case names the case. Where only some
  // nodes took part (a re-test round of a few pairs), `taking_part` names them: the idle
  // ones carried nothing and are no rails to compare with.
  std::vector<NodeNic> finish(const std::string& what, const std::set<std::string>& taking_part = {});
  std::vector<NodeNic> finish_case(const OpCase& c);

  // The rails table over every finished case (with flag_notes()), and a note per rail
  // that fell short in more than half of the cases it was compared in. `over` ends its
  // title: what was watched.
  std::string rails_table(std::string_view over = "over the cases (--nic-counters)") const;
  std::vector<std::string> flag_notes() const;
  // A node's rails for a report line: those that fell short, with how often and their
  // busiest rate, else the one that carried most ("eth0 (busiest 1.3 GB/s)"); empty when
  // nothing was sampled.
  std::string rails_of_node(const std::string& node) const;

 private:
  struct RailTotals {
    std::string node, nic, device;  // device: the NIC's or interface's name, as topologies name it
    int cases = 0, compared = 0, flagged = 0;
    double bytes = 0, seconds = 0, peak = 0;
    std::string first_flag;
  };

  static bool falls_short(const RailTotals& totals);
  // "; nearest GPUs 0, 1" for the NIC of `totals`, or nothing when none is known.
  std::string nearest_gpus_text(const RailTotals& totals) const;

  Bootstrap& group_;
  bool enabled_;
  double fraction_;
  std::unique_ptr<NicSampler> sampler_;      // on each node's first local rank only
  std::map<std::string, RailTotals> rails_;  // by describe_nic
  int cases_ = 0, unjudged_ = 0;             // finished cases, and those whose rails were not compared
  std::string first_unjudged_;               // the first of those, and why
  std::map<std::string, std::map<std::string, std::vector<int>>> gpus_by_nic_;  // by node ("": any), then NIC
};

Record nic_record(const OpCase& c, const NodeNic& nic);

// A node's ports as its sampling rank measured them over a case, one entry per port.
std::vector<NodeNic> nics_of_node(const NicCaseTraffic& traffic, const std::string& node);

}  // namespace commbench
