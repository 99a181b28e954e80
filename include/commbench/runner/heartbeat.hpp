// A side channel that outlives a stuck collective: every rank's watchdog thread sends a
// small UDP datagram (rank, step number, step name) to rank 0 a few times a second, and
// rank 0 keeps the last word of each. When a step times out, rank 0 can then name the
// ranks that went silent (a stopped or dead process sends nothing: all its threads stop)
// or are behind (they never reached this step), instead of only saying that it waited.
// Every rank runs the same sequence of guarded steps, so step numbers compare across ranks.
// The one word back: when a stop cannot wait for the ranks' agreement, rank 0 tells the
// others once its result files are written, so none exits first. A launcher ends the
// whole job when one rank exits (Open MPI within tens of ms, before rank 0 has written).
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "commbench/backend/bootstrap.hpp"

namespace commbench {

struct RankHeartbeat {
  bool heard = false;
  std::chrono::steady_clock::time_point when;
  std::uint64_t step = 0;
  std::string step_name;
};

class HeartbeatChannel {
 public:
  // Collective over `world`: every rank binds a socket and tells everyone where it is
  // (127.0.0.1 when all ranks share one node, its host address otherwise); rank 0's
  // collects. Returns nullptr when a socket cannot be had; timeouts then name only the
  // waiting rank.
  static std::unique_ptr<HeartbeatChannel> open(Bootstrap& world);
  ~HeartbeatChannel();
  HeartbeatChannel(const HeartbeatChannel&) = delete;
  HeartbeatChannel& operator=(const HeartbeatChannel&) = delete;

  // Any rank: best effort, never blocks.
  void send(std::uint64_t step, const std::string& step_name) noexcept;
  // Rank 0: what each rank said last (indexed by rank).
  std::vector<RankHeartbeat> snapshot() const;
  // Rank 0: tells every other rank that the result files are written.
  void say_results_written() noexcept;
  // The other ranks: waits until rank 0 says so, at most `within` (none: only looks); false
  // if it has not. Once heard, always true.
  bool wait_for_results_written(std::chrono::milliseconds within) noexcept;
  bool collecting() const { return collector_.joinable(); }

 private:
  HeartbeatChannel(int rank, int size, int socket_fd);
  void collect();

  int rank_;
  int size_;
  int socket_ = -1;
  std::vector<unsigned char> destination_;  // sockaddr_in of rank 0's collector
  mutable std::mutex mutex_;
  std::vector<RankHeartbeat> last_;
  std::vector<std::vector<unsigned char>> word_back_;  // rank 0: where each rank takes its word
  std::atomic<bool> stopping_{false};
  std::atomic<bool> results_written_heard_{false};
  std::thread collector_;
};

// How timeout messages name each rank after "host ": the host alone, or with the GPUs
// the rank drives ("gpu01, GPU 0000:1b:00.0", "gpu01, GPUs 0000:1b:00.0 0000:2c:00.0").
// `bus_ids` holds each rank's bus ids (none for host memory).
std::vector<std::string> rank_labels(const std::vector<std::string>& hosts,
                                     const std::vector<std::vector<std::string>>& bus_ids);

// Rank 0's account of a timeout: who is silent, who is behind, or that all ranks are in
// the step (then the operation itself is stuck). `hosts` is indexed by rank.
std::string describe_stragglers(const std::vector<RankHeartbeat>& ranks, const std::vector<std::string>& hosts,
                                std::uint64_t my_step, std::chrono::steady_clock::time_point now,
                                std::chrono::nanoseconds silence);

}  // namespace commbench
