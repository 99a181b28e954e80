// Samples a node's NIC counters on a thread of its own while a case runs: the bytes each
// port carried over the whole case, and the busiest rate it reached over any one
// sampling interval. Bytes alone cannot name a slow link: in a collective every node
// moves its share whatever its link does, and the slowest link sets everyone's pace. The
// busiest interval can: a port throttled to a tenth of the others never exceeds that
// tenth, while healthy ports burst to line rate whenever data is ready
// (results/slurm-cluster/nic-rates/README.md).
#pragma once

#include <chrono>
#include <concepts>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

#include "commbench/topology/nic_counters.hpp"

namespace commbench {

struct NicCaseTraffic {
  double seconds = 0;                         // from the first reading to the last
  std::vector<NicTraffic> traffic;            // over the whole case
  std::vector<double> peak_bytes_per_second;  // per traffic entry: the busiest interval, tx + rx
};

// Its fields, for the exchange between ranks (backend/typed_exchange.hpp).
template <typename Self, typename Visit>
requires std::same_as<std::remove_const_t<Self>, NicCaseTraffic>
void fields(Self& t, Visit& v) {
  v("seconds", t.seconds);
  v("traffic", t.traffic);
  v("peak", t.peak_bytes_per_second);
}

class NicSampler {
 public:
  NicSampler(NicCounterSources sources, std::chrono::milliseconds interval);
  ~NicSampler();  // stops and joins the thread if stop() was not called
  NicSampler(const NicSampler&) = delete;
  NicSampler& operator=(const NicSampler&) = delete;

  void start();
  NicCaseTraffic stop();

 private:
  void sample_until_stopped();
  void stop_thread();
  void take_reading();

  NicCounterSources sources_;
  std::chrono::milliseconds interval_;
  std::mutex mutex_;  // guards stopping_, which wake_ waits on
  std::condition_variable wake_;
  bool stopping_ = false;
  std::thread thread_;
  std::chrono::steady_clock::time_point first_at_, last_at_;
  NicCounterSnapshot first_, last_;
  std::map<std::string, double> peaks_;  // bytes per second, by nic_label
};

}  // namespace commbench
