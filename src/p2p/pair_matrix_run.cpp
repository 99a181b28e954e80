#include "commbench/p2p/pair_matrix_run.hpp"

#include <algorithm>
#include <map>
#include <set>
#include <utility>

#include <fmt/format.h>

#include "commbench/backend/collective_try.hpp"
#include "commbench/backend/typed_exchange.hpp"
#include "commbench/core/size.hpp"
#include "commbench/core/stopping_rule.hpp"
#include "commbench/runner/peer_round_workload.hpp"

namespace commbench {
namespace {

// A pair's transfer takes as long as the slower of its two ranks needed: the sender to
// post and complete its sends, the receiver to have every message.
double pair_seconds(const Measurement& measured, int first, int second) {
  return std::max(measured.rank_mean_seconds[static_cast<std::size_t>(first)],
                  measured.rank_mean_seconds[static_cast<std::size_t>(second)]);
}

std::string text_of(const std::map<std::string, std::string>& nics, const std::string& host) {
  const auto found = nics.find(host);
  return found != nics.end() ? found->second : "not read";
}

}  // namespace

PairMatrixRun::PairMatrixRun(Backend& backend, Watchdog& watchdog, PairMatrixSettings settings, CellModel model_cell,
                             RoundNicWatch nic_watch)
    : backend_(backend),
      watchdog_(watchdog),
      settings_(std::move(settings)),
      model_cell_(std::move(model_cell)),
      nic_watch_(std::move(nic_watch)) {}

void PairMatrixRun::measure(const std::vector<PairRound>& rounds, std::vector<PairCell>& cells,
                            std::uint64_t& wrong_bytes) {
  Bootstrap& group = backend_.group();
  const std::vector<std::string>& own_buses = backend_.device_bus_ids();
  std::vector<std::string> devices, bus_ids;
  {
    auto guard = watchdog_.guard("exchanging each rank's device");
    collective_try(group, [&] {
      devices = all_gather_as(group, own_buses.empty() ? std::string("host") : "GPU " + own_buses.front());
      bus_ids = all_gather_as(group, own_buses.empty() ? std::string() : own_buses.front());
    });
  }
  if (settings_.phases != nullptr) settings_.phases->begin_phase("measurement", rounds.size(), "round");
  for (std::size_t r = 0; r < rounds.size(); ++r) {
    const int round = static_cast<int>(r);
    if (settings_.phases != nullptr) settings_.phases->advance_phase(r);
    std::map<std::pair<int, int>, double> latency_us;
    if (settings_.latency_bytes > 0) {
      const Measurement exchange = time_round(PeerRound::both_ways(rounds[r], backend_.ranks()),
                                              settings_.latency_bytes, settings_.latency_iterations, "latency", round);
      for (const auto& [first, second] : rounds[r])
        latency_us[{first, second}] = pair_seconds(exchange, first, second) * 1e6;
      wrong_bytes += exchange.wrong.value_or(0);
    }
    for (const DirectedRound& directed : directed_rounds(rounds[r], settings_.both_ways, backend_.ranks())) {
      if (nic_watch_.start) nic_watch_.start();
      const Measurement measured =
          time_round(directed.transfers, settings_.bytes, settings_.iterations, name_of(directed.direction), round);
      wrong_bytes += measured.wrong.value_or(0);
      const std::map<std::string, std::string> nics = round_nics(directed, round);
      for (PairCell& cell : cells_of(directed, measured, round, devices)) {
        if (cell.src_host != cell.dst_host && !nics.empty())
          cell.nics = cell.src_host + " " + text_of(nics, cell.src_host) + "; " + cell.dst_host + " " +
                      text_of(nics, cell.dst_host);
        const auto pair = std::minmax(cell.src_rank, cell.dst_rank);
        if (const auto found = latency_us.find({pair.first, pair.second}); found != latency_us.end())
          cell.latency_us = found->second;
        model_cell_(cell, bus_ids);
        cells.push_back(std::move(cell));
      }
    }
  }
}

std::map<std::string, std::string> PairMatrixRun::round_nics(const DirectedRound& directed, int round) {
  if (!nic_watch_.finish) return {};
  const std::vector<std::string>& hosts = backend_.group().hostnames();
  std::set<std::string> taking_part;
  for (const Transfer& transfer : directed.transfers.transfers()) {
    taking_part.insert(hosts[static_cast<std::size_t>(transfer.source)]);
    taking_part.insert(hosts[static_cast<std::size_t>(transfer.destination)]);
  }
  auto guard = watchdog_.guard("gathering the NIC counters of a round");
  return nic_watch_.finish(fmt::format("round {} {}", round, name_of(directed.direction)), taking_part);
}

std::vector<PairCell> PairMatrixRun::cells_of(const DirectedRound& directed, const Measurement& measured, int round,
                                              const std::vector<std::string>& devices) const {
  const std::vector<std::string>& hosts = backend_.group().hostnames();
  std::vector<PairCell> cells;
  for (const Transfer& transfer : directed.transfers.transfers()) {
    const auto source = static_cast<std::size_t>(transfer.source);
    const auto destination = static_cast<std::size_t>(transfer.destination);
    PairCell cell;
    cell.src_rank = transfer.source;
    cell.dst_rank = transfer.destination;
    cell.src_host = hosts[source];
    cell.dst_host = hosts[destination];
    cell.src_device = devices[source];
    cell.dst_device = devices[destination];
    cell.bytes = settings_.bytes;
    cell.direction = directed.direction;
    cell.round = round;
    if (!settings_.rail_of_rank.empty()) cell.rail = settings_.rail_of_rank[source];
    const double seconds = pair_seconds(measured, transfer.source, transfer.destination);
    cell.gbps = seconds > 0 ? static_cast<double>(settings_.bytes) / seconds / 1e9 : 0;
    cells.push_back(std::move(cell));
  }
  return cells;
}

Measurement PairMatrixRun::time_round(const PeerRound& transfers, std::uint64_t bytes, std::uint64_t iterations,
                                      std::string_view what, int round) {
  PeerRoundWorkload workload(backend_, transfers, bytes,
                             fmt::format("round {} {} {}", round, what, format_size(bytes)));
  const FixedCountCriterion criterion(iterations);
  MeasurementSettings settings;
  settings.warmup_iterations = settings_.warmup;
  settings.check = settings_.check;
  settings.gather_rank_means = true;
  MeasurementLoop loop(backend_.group(), criterion, settings, &watchdog_);
  return loop.measure(workload);
}

}  // namespace commbench
