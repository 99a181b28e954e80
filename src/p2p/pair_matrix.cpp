#include "commbench/p2p/pair_matrix.hpp"

#include <algorithm>
#include <map>
#include <set>

#include <fmt/format.h>

#include "commbench/core/csv_field.hpp"
#include "commbench/core/number_text.hpp"

namespace commbench {
namespace {

bool both_ways(const PairCell& cell) { return cell.direction == PairDirection::both; }

double median_of(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const std::size_t middle = values.size() / 2;
  return values.size() % 2 == 1 ? values[middle] : (values[middle - 1] + values[middle]) / 2;
}

std::string optional_number(const std::optional<double>& value) {
  return value ? significant_text(*value, 9) : "";
}

}  // namespace

std::string_view direction_text(const PairCell& cell) { return both_ways(cell) ? "both" : "one-way"; }

// The median over ranks of each rank's median cell (as sender or receiver): a slow rank
// drags down its own median and its partners' cells, but not the reference, while fewer
// than half the ranks are slow. (The plain median of all cells would fall with every
// slow rank's row and column: on 4 ranks one slow rank is half the cells.)
double reference_gbps(const std::vector<PairCell>& cells, bool together) {
  std::map<int, std::vector<double>> by_rank;
  for (const PairCell& cell : cells) {
    if (both_ways(cell) != together || cell.src_rank == cell.dst_rank) continue;
    by_rank[cell.src_rank].push_back(cell.gbps);
    by_rank[cell.dst_rank].push_back(cell.gbps);
  }
  std::vector<double> medians;
  for (auto& [rank, figures] : by_rank) medians.push_back(median_of(std::move(figures)));
  return medians.empty() ? 0 : median_of(std::move(medians));
}

void flag_outliers(std::vector<PairCell>& cells, double fraction) {
  for (const bool together : {false, true}) {
    const double median = reference_gbps(cells, together);
    if (median <= 0) continue;
    for (PairCell& cell : cells) {
      if (both_ways(cell) != together) continue;
      std::vector<std::string> reasons;
      if (cell.gbps < fraction * median)
        reasons.push_back(fmt::format("{} GB/s is {}% of the ranks' median {} GB/s", significant_text(cell.gbps, 4),
                                      fixed_text(100 * cell.gbps / median, 0), significant_text(median, 4)));
      if (cell.theoretical_gbps && cell.gbps < fraction * *cell.theoretical_gbps)
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
    for (const auto& [rank, partner] : {std::pair{cell.src_rank, cell.dst_rank}, std::pair{cell.dst_rank, cell.src_rank}}) {
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

std::string matrix_text(const std::vector<PairCell>& cells, int ranks, bool latency) {
  std::map<std::pair<int, int>, std::string> text;
  for (const PairCell& cell : cells) {
    const std::optional<double> value = latency ? cell.latency_us : std::optional<double>(cell.gbps);
    if (!value) continue;
    text[{cell.src_rank, cell.dst_rank}] = fixed_text(*value, 2) + (cell.flagged && !latency ? "!" : "");
  }
  std::string table = fmt::format("{:>8}", latency ? "us" : "GB/s");
  for (int dst = 0; dst < ranks; ++dst) table += fmt::format(" {:>9}", dst);
  table += '\n';
  for (int src = 0; src < ranks; ++src) {
    table += fmt::format("{:>8}", src);
    for (int dst = 0; dst < ranks; ++dst) {
      const auto found = text.find({src, dst});
      table += fmt::format(" {:>9}", found == text.end() ? "-" : found->second);
    }
    table += '\n';
  }
  return table;
}

std::string findings_text(const std::vector<PairCell>& cells, const std::vector<int>& slow) {
  std::string text;
  if (std::none_of(cells.begin(), cells.end(), [](const PairCell& cell) { return cell.flagged; }))
    text += fmt::format("no outlier among {} cells\n", cells.size());
  for (const int rank : slow) {
    const auto own = std::find_if(cells.begin(), cells.end(), [&](const PairCell& cell) {
      return cell.src_rank == rank || cell.dst_rank == rank;
    });
    if (own == cells.end()) continue;
    const std::string& host = own->src_rank == rank ? own->src_host : own->dst_host;
    const std::string rail = own->rail ? fmt::format(", rail {}", *own->rail) : "";
    text += fmt::format("SLOW RANK {} ({}{}): every pair it is part of is an outlier\n", rank, host, rail);
  }
  for (const PairCell& cell : cells) {
    if (!cell.flagged) continue;
    const std::string rail = cell.rail ? fmt::format(" rail {}", *cell.rail) : "";
    text += fmt::format("OUTLIER {} ({}, {}) -> {} ({}, {}) {}{}: {}; link: {}\n", cell.src_rank, cell.src_host,
                        cell.src_device, cell.dst_rank, cell.dst_host, cell.dst_device, direction_text(cell), rail,
                        cell.flag_reason, cell.link);
  }
  return text;
}

std::string cells_csv(const std::vector<PairCell>& cells) {
  std::string csv =
      "src_host,src_rank,src_device,dst_host,dst_rank,dst_device,bytes,direction,round,gbps,latency_us,"
      "theoretical_gbps,efficiency,flagged,reason,link,rail\n";
  for (const PairCell& cell : cells)
    csv += fmt::format("{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}\n", csv_escape(cell.src_host), cell.src_rank,
                       csv_escape(cell.src_device), csv_escape(cell.dst_host), cell.dst_rank,
                       csv_escape(cell.dst_device), cell.bytes, direction_text(cell), cell.round,
                       significant_text(cell.gbps, 9), optional_number(cell.latency_us),
                       optional_number(cell.theoretical_gbps), optional_number(cell.efficiency),
                       cell.flagged ? "true" : "false", csv_escape(cell.flag_reason), csv_escape(cell.link),
                       cell.rail ? std::to_string(*cell.rail) : "");
  return csv;
}

}  // namespace commbench
