#include "commbench/topology/nic_sampler.hpp"

#include <algorithm>
#include <utility>

namespace commbench {

NicSampler::NicSampler(NicCounterSources sources, std::chrono::milliseconds interval)
    : sources_(std::move(sources)), interval_(interval) {}

NicSampler::~NicSampler() { stop_thread(); }

void NicSampler::stop_thread() {
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void NicSampler::start() {
  // A case that ended in an exception never called stop(): its thread ends here.
  stop_thread();
  peaks_.clear();
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = false;
  }
  first_ = read_nic_counters(sources_);
  first_at_ = std::chrono::steady_clock::now();
  last_ = first_;
  last_at_ = first_at_;
  thread_ = std::thread([this] { sample_until_stopped(); });
}

void NicSampler::sample_until_stopped() {
  // One wake-up per reading, and stop() wakes it at once, however long the interval.
  std::unique_lock<std::mutex> lock(mutex_);
  auto next = last_at_ + interval_;
  while (!wake_.wait_until(lock, next, [this] { return stopping_; })) {
    lock.unlock();
    take_reading();
    lock.lock();
    next = last_at_ + interval_;
  }
}

void NicSampler::take_reading() {
  NicCounterSnapshot reading = read_nic_counters(sources_);
  const auto at = std::chrono::steady_clock::now();
  const double seconds = std::chrono::duration<double>(at - last_at_).count();
  // A reading closer to the last than half an interval (the case's tail) is too short to
  // give a rate: a few packets in it would read as a burst.
  if (seconds >= 0.5 * std::chrono::duration<double>(interval_).count()) {
    for (const NicTraffic& t : nic_traffic(last_, reading)) {
      if (!t.known()) continue;
      double& peak = peaks_[nic_label(t.device, t.port, t.rdma)];
      peak = std::max(peak, static_cast<double>(t.bytes()) / seconds);
    }
  }
  last_ = std::move(reading);
  last_at_ = at;
}

NicCaseTraffic NicSampler::stop() {
  stop_thread();
  take_reading();  // the case's tail, shorter than an interval
  NicCaseTraffic result;
  result.seconds = std::chrono::duration<double>(last_at_ - first_at_).count();
  result.traffic = nic_traffic(first_, last_);
  for (const NicTraffic& t : result.traffic) {
    const auto found = peaks_.find(nic_label(t.device, t.port, t.rdma));
    result.peak_bytes_per_second.push_back(found != peaks_.end() ? found->second : 0.0);
  }
  return result;
}

}  // namespace commbench
