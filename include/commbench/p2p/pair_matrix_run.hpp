// The pair matrix measured: every round of a schedule on the backend's ranks, each pair's
// small-message exchange, then each direction one at a time (or both at once), each on the
// one measurement loop under the job's watchdog. What a cell's link should
// carry is the caller's (the bandwidth model): it fills each cell as it is made.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "commbench/backend/backend.hpp"
#include "commbench/p2p/pair_matrix.hpp"
#include "commbench/p2p/pair_schedule.hpp"
#include "commbench/runner/measurement.hpp"
#include "commbench/runner/phase_progress.hpp"
#include "commbench/runner/watchdog.hpp"

namespace commbench {

struct PairMatrixSettings {
  std::uint64_t bytes = std::uint64_t{4} << 20;  // the bandwidth matrix's messages
  std::uint64_t iterations = 10;                 // timed messages per pair and direction
  std::uint64_t warmup = 2;
  std::uint64_t latency_bytes = 8;  // 0: no latency matrix
  std::uint64_t latency_iterations = 100;
  bool check = false;
  bool both_ways = false;
  std::vector<int> rail_of_rank;  // each rank's place on its node, recorded per cell; empty: none
  PhaseListener* phases = nullptr;  // told of the rounds' progress; null for none
};

// `model_cell(cell, bus_ids)`: the link's spec for a cell, from every rank's GPU bus id
// ("" for host memory).
using CellModel = std::function<void(PairCell& cell, const std::vector<std::string>& bus_ids)>;

// Around each timed direction of a round, when set (collective, like the measurement):
// `start` before it, `finish` after it, which returns what each taking-part host's NICs
// carried in it, by host (the app reads them with its NicWatch).
struct RoundNicWatch {
  std::function<void()> start;
  std::function<std::map<std::string, std::string>(const std::string& what, const std::set<std::string>& hosts)> finish;
};

class PairMatrixRun {
 public:
  PairMatrixRun(Backend& backend, Watchdog& watchdog, PairMatrixSettings settings, CellModel model_cell,
                RoundNicWatch nic_watch = {});

  // Collective. Each direction's cells are appended to `cells` as it ends; Interrupted
  // (every rank agreed) leaves the cells measured before it there.
  void measure(const std::vector<PairRound>& rounds, std::vector<PairCell>& cells, std::uint64_t& wrong_bytes);

 private:
  Measurement time_round(const PeerRound& transfers, std::uint64_t bytes, std::uint64_t iterations,
                         std::string_view what, int round);
  // What each host's NICs carried in a direction of a round; empty without a NIC watch.
  std::map<std::string, std::string> round_nics(const DirectedRound& directed, int round);
  std::vector<PairCell> cells_of(const DirectedRound& directed, const Measurement& measured, int round,
                                 const std::vector<std::string>& devices) const;

  Backend& backend_;
  Watchdog& watchdog_;
  PairMatrixSettings settings_;
  CellModel model_cell_;
  RoundNicWatch nic_watch_;
};

}  // namespace commbench
