#include "commbench/p2p/pair_matrix.hpp"

#include <algorithm>
#include <map>
#include <set>

#include <fmt/format.h>

#include "commbench/core/number_text.hpp"
#include "commbench/core/statistics.hpp"

namespace commbench {
namespace {

bool both_ways(const PairCell& cell) { return cell.direction == PairDirection::both; }

}  // namespace

std::string_view direction_text(const PairCell& cell) { return both_ways(cell) ? "both" : "one-way"; }

bool between_peers(const PairCell& cell) {
  return cell.method != "pinned-near" && cell.method != "pinned-far" && cell.method != "pageable";
}

namespace {

// Cells measured the same way are compared with each other: the same method, one way or
// both at once, and which end is host memory (host to GPU and back may differ).
std::string kind_of(const PairCell& cell) {
  return fmt::format("{}|{}|{}", cell.method, direction_text(cell),
                     between_peers(cell)                     ? "peers"
                     : cell.src_device.rfind("host", 0) == 0 ? "to-gpu"
                                                             : "to-host");
}

// An end of a cell: a rank, or one device of a rank (inside a node one rank drives them all).
std::string endpoint(int rank, const std::string& device) { return fmt::format("{}|{}", rank, device); }

// The median over endpoints of each endpoint's median cell (as sender or receiver): a slow
// rank drags down its own median and its partners' cells, but not the reference, while
// fewer than half the ranks are slow. (The plain median of all cells would fall with every
// slow rank's row and column: on 4 ranks one slow rank is half the cells.)
double reference_gbps(const std::vector<PairCell>& cells, const std::string& kind) {
  std::map<std::string, std::vector<double>> by_endpoint;
  for (const PairCell& cell : cells) {
    if (kind_of(cell) != kind) continue;
    const std::string source = endpoint(cell.src_rank, cell.src_device);
    const std::string destination = endpoint(cell.dst_rank, cell.dst_device);
    if (source == destination) continue;
    by_endpoint[source].push_back(cell.gbps);
    by_endpoint[destination].push_back(cell.gbps);
  }
  std::vector<double> medians;
  for (auto& [end, figures] : by_endpoint) medians.push_back(median_of(std::move(figures)));
  return medians.empty() ? 0 : median_of(std::move(medians));
}

}  // namespace

bool read_against_spec(const PairCell& cell) {
  const bool inside_a_node = cell.src_rank == cell.dst_rank;
  return !(inside_a_node && both_ways(cell));
}

void flag_outliers(std::vector<PairCell>& cells, double fraction) {
  std::set<std::string> kinds;
  for (const PairCell& cell : cells) kinds.insert(kind_of(cell));
  for (const std::string& kind : kinds) {
    const double median = reference_gbps(cells, kind);
    for (PairCell& cell : cells) {
      if (kind_of(cell) != kind) continue;
      std::vector<std::string> reasons;
      if (median > 0 && cell.gbps < fraction * median)
        reasons.push_back(fmt::format("{} GB/s is {}% of the {} median {} GB/s", significant_text(cell.gbps, 4),
                                      fixed_text(100 * cell.gbps / median, 0),
                                      cell.src_rank == cell.dst_rank ? "GPUs'" : "ranks'",
                                      significant_text(median, 4)));
      if (read_against_spec(cell) && cell.theoretical_gbps && cell.gbps < fraction * *cell.theoretical_gbps)
        reasons.push_back(fmt::format("{} GB/s is {}% of the link's {} GB/s", significant_text(cell.gbps, 4),
                                      fixed_text(100 * cell.gbps / *cell.theoretical_gbps, 0),
                                      significant_text(*cell.theoretical_gbps, 4)));
      cell.flagged = !reasons.empty();
      cell.flag_reason.clear();
      for (const std::string& reason : reasons) cell.flag_reason += (cell.flag_reason.empty() ? "" : "; ") + reason;
    }
  }
}

std::vector<int> slow_ranks(const std::vector<PairCell>& cells) {
  std::map<int, std::set<int>> partners;
  std::map<int, bool> all_flagged;
  for (const PairCell& cell : cells) {
    if (cell.src_rank == cell.dst_rank) continue;
    for (const auto& [rank, partner] :
         {std::pair{cell.src_rank, cell.dst_rank}, std::pair{cell.dst_rank, cell.src_rank}}) {
      partners[rank].insert(partner);
      const auto [entry, inserted] = all_flagged.emplace(rank, cell.flagged);
      if (!inserted) entry->second = entry->second && cell.flagged;
    }
  }
  std::vector<int> slow;
  for (const auto& [rank, flagged] : all_flagged)
    if (flagged && partners[rank].size() >= 2) slow.push_back(rank);
  return slow;
}

namespace {

// A square table of `size` rows and columns (rows send, columns receive), "-" where `text`
// has no entry.
std::string square_table(const std::map<std::pair<int, int>, std::string>& text, int size, bool latency) {
  std::string table = fmt::format("{:>8}", latency ? "us" : "GB/s");
  for (int dst = 0; dst < size; ++dst) table += fmt::format(" {:>9}", dst);
  table += '\n';
  for (int src = 0; src < size; ++src) {
    table += fmt::format("{:>8}", src);
    for (int dst = 0; dst < size; ++dst) {
      const auto found = text.find({src, dst});
      table += fmt::format(" {:>9}", found == text.end() ? "-" : found->second);
    }
    table += '\n';
  }
  return table;
}

std::optional<std::string> cell_text(const PairCell& cell, bool latency) {
  const std::optional<double> value = latency ? cell.latency_us : std::optional<double>(cell.gbps);
  if (!value) return std::nullopt;
  return fixed_text(*value, 2) + (cell.flagged && !latency ? "!" : "");
}

}  // namespace

std::string matrix_text(const std::vector<PairCell>& cells, int ranks, bool latency) {
  std::map<std::pair<int, int>, std::string> text;
  for (const PairCell& cell : cells)
    if (const auto shown = cell_text(cell, latency)) text[{cell.src_rank, cell.dst_rank}] = *shown;
  return square_table(text, ranks, latency);
}

std::string device_matrix_text(const std::vector<PairCell>& cells, const std::vector<std::string>& devices,
                               bool latency) {
  const auto index_of = [&](const std::string& device) {
    return static_cast<int>(std::find(devices.begin(), devices.end(), device) - devices.begin());
  };
  std::map<std::pair<int, int>, std::string> text;
  for (const PairCell& cell : cells)
    if (const auto shown = cell_text(cell, latency))
      text[{index_of(cell.src_device), index_of(cell.dst_device)}] = *shown;
  return square_table(text, static_cast<int>(devices.size()), latency);
}

std::vector<std::pair<std::string, std::string>> slow_devices(const std::vector<PairCell>& cells) {
  std::map<std::pair<std::string, std::string>, std::set<std::string>> partners;
  std::map<std::pair<std::string, std::string>, bool> all_flagged;
  for (const PairCell& cell : cells) {
    if (cell.src_rank != cell.dst_rank || !between_peers(cell) || cell.src_device == cell.dst_device) continue;
    for (const auto& [device, partner] :
         {std::pair{cell.src_device, cell.dst_device}, std::pair{cell.dst_device, cell.src_device}}) {
      const std::pair key{cell.src_host, device};
      partners[key].insert(partner);
      const auto [entry, inserted] = all_flagged.emplace(key, cell.flagged);
      if (!inserted) entry->second = entry->second && cell.flagged;
    }
  }
  std::vector<std::pair<std::string, std::string>> slow;
  for (const auto& [key, flagged] : all_flagged)
    if (flagged && partners[key].size() >= 2) slow.push_back(key);
  return slow;
}

std::string findings_text(const std::vector<PairCell>& cells, const std::vector<int>& slow) {
  std::string text;
  if (std::none_of(cells.begin(), cells.end(), [](const PairCell& cell) { return cell.flagged; }))
    text += fmt::format("no outlier among {} cells\n", cells.size());
  for (const int rank : slow) {
    const auto own = std::find_if(cells.begin(), cells.end(),
                                  [&](const PairCell& cell) { return cell.src_rank == rank || cell.dst_rank == rank; });
    if (own == cells.end()) continue;
    const std::string& host = own->src_rank == rank ? own->src_host : own->dst_host;
    const std::string rail = own->rail ? fmt::format(", rail {}", *own->rail) : "";
    text += fmt::format("SLOW RANK {} ({}{}): every pair it is part of is an outlier\n", rank, host, rail);
  }
  for (const auto& [host, device] : slow_devices(cells))
    text += fmt::format("SLOW {} ({}): every transfer with another GPU is an outlier\n", device, host);
  for (const PairCell& cell : cells) {
    if (!cell.flagged) continue;
    const std::string rail = cell.rail ? fmt::format(" rail {}", *cell.rail) : "";
    const std::string method = cell.method == "send/recv" ? "" : " " + cell.method;
    text += fmt::format("OUTLIER {} ({}, {}) -> {} ({}, {}) {}{}{}: {}; link: {}\n", cell.src_rank, cell.src_host,
                        cell.src_device, cell.dst_rank, cell.dst_host, cell.dst_device, direction_text(cell), method,
                        rail, cell.flag_reason, cell.link);
  }
  return text;
}

Record cell_record(const PairCell& cell) {
  const auto whole = [](auto value) { return FieldValue{static_cast<std::int64_t>(value)}; };
  const auto optional = [](const std::optional<double>& value) {
    return value ? FieldValue{*value} : FieldValue{std::monostate{}};
  };
  return Record{
      &record_kind("cell"),
      {cell.src_host, whole(cell.src_rank), cell.src_device, cell.dst_host, whole(cell.dst_rank), cell.dst_device,
       whole(cell.bytes), std::string(direction_text(cell)), whole(cell.round), cell.gbps, optional(cell.latency_us),
       optional(cell.theoretical_gbps), optional(cell.efficiency), whole(cell.flagged), cell.flag_reason, cell.link,
       cell.rail ? whole(*cell.rail) : FieldValue{std::monostate{}}, cell.method, cell.nics},
      {}};
}

std::string cells_csv(const std::vector<PairCell>& cells) {
  const RecordKind& kind = record_kind("cell");
  std::string csv = csv_header(kind) + "\n";
  for (const PairCell& cell : cells) csv += csv_record_line(cell_record(cell), kind) + "\n";
  return csv;
}

}  // namespace commbench
