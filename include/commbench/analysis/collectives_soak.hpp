// bench-collectives --soak DURATION: the sweep's cases run again and again for a length of
// time, one pass over the cases per interval, each row streamed with its interval. Each
// case's busbw is held against its own steady level by the soak's dip rule
// (validate/soak_events.hpp), and every dip is reported with when it began and ended, how
// deep it went, and the rails that the NIC counters found short while it lasted.
#pragma once

#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "commbench/core/op_case.hpp"
#include "commbench/core/result_row.hpp"
#include "commbench/topology/nic_rails.hpp"
#include "commbench/validate/soak_events.hpp"

namespace commbench {

struct CaseDip {
  std::string what;  // the case, as describe() names it
  int first_interval = 0, last_interval = 0;
  double start_s = 0, end_s = 0;
  int low_readings = 0;
  double lowest_gbps = 0, steady_gbps = 0, depth = 0;
  bool fails = false;
  std::vector<std::string> short_rails;  // "cb-node3 eth0 (short in 7 of 7 intervals)"
  std::vector<std::string> nodes;        // the nodes of those rails
};

class CollectivesSoak {
 public:
  CollectivesSoak(double duration_s, double interval_s, SoakRule rule);

  bool enabled() const { return duration_s_ > 0; }
  double duration_s() const { return duration_s_; }
  double interval_s() const { return interval_s_; }
  // The rows' own columns in a soak: the interval and when it began.
  static std::vector<std::string> extra_columns() { return {"interval", "interval_start_s"}; }

  // The soak's clock starts: `unix_seconds` is the wall-clock time of its 0 s.
  void begin(double unix_seconds) { started_unix_ = unix_seconds; }

  // A case's row of interval `interval`, which began `start_s` after the soak and ended
  // `end_s` after it: tagged with its interval, and kept with the rails flagged during it.
  void add(const OpCase& c, int interval, double start_s, double end_s, ResultRow& row,
           const std::vector<NodeNic>& nics);

  // After the last interval: every case's dips, in order of their start.
  std::vector<CaseDip> dips() const;
  // The console's lines: one per dip, and the exclude line of failing dips' nodes.
  std::string console_text(const std::vector<CaseDip>& dips) const;
  // The JSON section "soak": settings, intervals and the dips.
  nlohmann::ordered_json json_section(const std::vector<CaseDip>& dips) const;
  int intervals() const { return intervals_; }
  const SoakRule& rule() const { return rule_; }

 private:
  struct Series {
    std::vector<int> intervals;
    std::vector<double> start_s, end_s, busbw;
    std::vector<std::vector<std::string>> flagged;  // per reading: "node nic" of each flagged rail
  };

  void name_short_rails(const Series& series, CaseDip& dip) const;

  double duration_s_, interval_s_;
  double started_unix_ = 0;
  SoakRule rule_;
  std::vector<std::string> order_;  // cases in the order first run
  std::map<std::string, Series> by_case_;
  int intervals_ = 0;
  double elapsed_s_ = 0;  // the last reading's end: short of duration_s_ when interrupted
};

}  // namespace commbench
