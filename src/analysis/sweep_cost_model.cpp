#include "commbench/analysis/sweep_cost_model.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>

#include <nlohmann/json.hpp>

#include "commbench/core/error.hpp"
#include "commbench/core/number_text.hpp"
#include "commbench/validate/csv_table.hpp"

namespace commbench {
namespace {

double number_in(const CsvTable& table, const CsvRecord& record, std::size_t column, const std::string& origin) {
  const std::string& text = record.fields[column];
  char* end = nullptr;
  const double value = std::strtod(text.c_str(), &end);
  if (text.empty() || end != text.c_str() + text.size() || !std::isfinite(value) || value < 0)
    throw UsageError(fmt::format("{} line {}: {} '{}' is not a non-negative number", origin, record.line,
                                 table.header[column], text));
  return value;
}

// log-log between two points; linear where a value is not positive (no logarithm).
double log_log(double x, double x0, double y0, double x1, double y1) {
  if (x1 == x0) return y0;
  if (x <= 0 || x0 <= 0 || x1 <= 0 || y0 <= 0 || y1 <= 0) return y0 + (y1 - y0) * (x - x0) / (x1 - x0);
  const double weight = (std::log(x) - std::log(x0)) / (std::log(x1) - std::log(x0));
  return std::exp(std::log(y0) + weight * (std::log(y1) - std::log(y0)));
}

// The series' value at `bytes` with `pick` choosing time or busbw, and whether it lies
// outside the measured sizes (below: the smallest's; above: the largest's busbw).
template <typename Pick>
double interpolate(const std::vector<SweepPoint>& points, std::uint64_t bytes, Pick pick, int& outside) {
  outside = 0;
  const auto above = std::lower_bound(points.begin(), points.end(), bytes,
                                      [](const SweepPoint& point, std::uint64_t size) { return point.bytes < size; });
  if (above == points.begin()) {
    outside = above->bytes == bytes ? 0 : -1;
    return pick(*above);
  }
  if (above == points.end()) {
    outside = 1;
    return pick(points.back());
  }
  const SweepPoint& below = *(above - 1);
  return log_log(static_cast<double>(bytes), static_cast<double>(below.bytes), pick(below),
                 static_cast<double>(above->bytes), pick(*above));
}

std::string size_text(std::uint64_t bytes) { return fmt::format("{} B", bytes); }

// One measurement of the sweep, whichever file it came from.
struct SweepRow {
  Collective op{};
  std::uint64_t bytes = 0;
  int ranks = 0, nodes = 1;
  double time_us = 0, busbw_gbps = 0;
};

constexpr const char* kColumns[] = {"op", "bytes", "ranks", "nodes", "time_us", "busbw_gbps"};

// A whole count from a number read as non-negative: `where` names the row in errors. The
// limits are far past any real sweep and keep the conversions defined.
template <typename Count>
Count count_in(double value, double limit, const std::string& where, const char* name) {
  if (value > limit) throw UsageError(fmt::format("{} {} {} is more than {:.0f}", where, name, value, limit));
  return static_cast<Count>(value);
}

SweepRow make_row(Collective op, const double (&numbers)[5], const std::string& where) {
  SweepRow row;
  row.op = op;
  row.bytes = count_in<std::uint64_t>(numbers[0], 0x1p60, where, "bytes");
  row.ranks = count_in<int>(numbers[1], 1 << 24, where, "ranks");
  row.nodes = std::max(1, count_in<int>(numbers[2], 1 << 24, where, "nodes"));
  row.time_us = numbers[3];
  row.busbw_gbps = numbers[4];
  return row;
}

// A one-rank row's busbw is empty (nothing crosses a link): it reads as none, 0. `numbers`
// holds the row's figures read so far, ranks among them before busbw.
bool no_busbw(std::string_view column, bool empty, const double (&numbers)[5]) {
  return empty && column == "busbw_gbps" && numbers[1] == 1;
}

bool looks_like_json(std::string_view text) {
  const auto first = text.find_first_not_of(" \t\r\n");
  return first != std::string_view::npos && text[first] == '{';
}

std::vector<SweepRow> csv_rows(std::string_view text, const std::string& origin) {
  const CsvTable table = parse_csv(text, origin);
  std::size_t columns[6] = {};
  for (std::size_t index = 0; index < 6; ++index) {
    const auto column = table.column(kColumns[index]);
    if (!column)
      throw UsageError(
          fmt::format("{}: no '{}' column (a bench-collectives --csv file has op, bytes, ranks, nodes, "
                      "time_us, busbw_gbps)",
                      origin, kColumns[index]));
    columns[index] = *column;
  }
  std::vector<SweepRow> rows;
  for (const CsvRecord& record : table.records) {
    const Collective op =
        parse_collective(record.fields[columns[0]], fmt::format("{} line {}: op", origin, record.line));
    double numbers[5] = {};
    for (std::size_t index = 0; index < 5; ++index)
      numbers[index] = no_busbw(kColumns[index + 1], record.fields[columns[index + 1]].empty(), numbers)
                           ? 0.0
                           : number_in(table, record, columns[index + 1], origin);
    rows.push_back(make_row(op, numbers, fmt::format("{} line {}:", origin, record.line)));
  }
  return rows;
}

// A bench-collectives --json file: its `rows`, each with the CSV's fields by name.
std::vector<SweepRow> json_rows(std::string_view text, const std::string& origin) {
  const nlohmann::json doc = nlohmann::json::parse(text, nullptr, false);
  if (doc.is_discarded()) throw UsageError(fmt::format("{}: not valid JSON", origin));
  const auto rows_field = doc.find("rows");
  if (!doc.is_object() || rows_field == doc.end() || !rows_field->is_array())
    throw UsageError(fmt::format("{}: no 'rows' array (a bench-collectives --json file has one)", origin));
  std::vector<SweepRow> rows;
  for (std::size_t index = 0; index < rows_field->size(); ++index) {
    const nlohmann::json& entry = (*rows_field)[index];
    const auto field = [&](const char* name) -> const nlohmann::json& {
      const auto value = entry.is_object() ? entry.find(name) : entry.end();
      if (!entry.is_object() || value == entry.end())
        throw UsageError(
            fmt::format("{}: rows[{}] has no '{}' (a bench-collectives row has op, bytes, ranks, "
                        "nodes, time_us, busbw_gbps)",
                        origin, index, name));
      return *value;
    };
    double numbers[5] = {};
    const auto number = [&](const char* name) {
      const nlohmann::json& value = field(name);
      if (no_busbw(name, value.is_null(), numbers)) return 0.0;
      if (!value.is_number() || !std::isfinite(value.get<double>()) || value.get<double>() < 0)
        throw UsageError(
            fmt::format("{}: rows[{}] {} {} is not a non-negative number", origin, index, name, value.dump()));
      return value.get<double>();
    };
    const nlohmann::json& op_name = field("op");
    if (!op_name.is_string())
      throw UsageError(fmt::format("{}: rows[{}] op {} is not a name", origin, index, op_name.dump()));
    const Collective op = parse_collective(op_name.get<std::string>(), fmt::format("{}: rows[{}] op", origin, index));
    for (std::size_t column = 1; column < 6; ++column) numbers[column - 1] = number(kColumns[column]);
    rows.push_back(make_row(op, numbers, fmt::format("{}: rows[{}]", origin, index)));
  }
  return rows;
}

}  // namespace

SweepCostModel::SweepCostModel(std::string_view text, std::string origin) : origin_(std::move(origin)) {
  const bool json = looks_like_json(text);
  const std::vector<SweepRow> rows = json ? json_rows(text, origin_) : csv_rows(text, origin_);
  struct Sum {
    double seconds = 0, busbw = 0;
    int count = 0;
  };
  std::map<SeriesKey, std::map<std::uint64_t, Sum>> sums;
  for (const SweepRow& row : rows) {
    Sum& sum = sums[SeriesKey{row.op, row.ranks, row.nodes}][row.bytes];
    sum.seconds += row.time_us * 1e-6;
    sum.busbw += row.busbw_gbps;
    ++sum.count;
  }
  if (sums.empty())
    throw UsageError(
        origin_ + (json ? ": no measurements (its rows are empty)" : ": no measurements (the file has a header only)"));
  for (const auto& [key, sizes] : sums) {
    std::vector<SweepPoint>& points = series_[key];
    for (const auto& [bytes, sum] : sizes) points.push_back({bytes, sum.seconds / sum.count, sum.busbw / sum.count});
  }
}

const std::vector<SweepPoint>& SweepCostModel::series_for(const CommunicationCostQuery& query,
                                                          SeriesKey& chosen) const {
  const auto exact = series_.find(SeriesKey{query.op, query.ranks, query.nodes});
  if (exact != series_.end()) {
    chosen = exact->first;
    return exact->second;
  }
  // The nearest measured group: the same node count first (the same links), then ranks.
  const std::vector<SweepPoint>* best = nullptr;
  double best_distance = std::numeric_limits<double>::infinity();
  for (const auto& [key, points] : series_) {
    const auto& [op, ranks, nodes] = key;
    if (op != query.op || ranks < 2) continue;
    const double distance = 1000.0 * std::abs(std::log(static_cast<double>(nodes) / std::max(query.nodes, 1))) +
                            std::abs(std::log(static_cast<double>(ranks) / std::max(query.ranks, 1)));
    if (distance < best_distance) {
      best_distance = distance;
      best = &points;
      chosen = key;
    }
  }
  if (!best) {
    std::string measured;
    for (const auto& [key, points] : series_) {
      const std::string name(name_of(std::get<0>(key)));
      if (measured.find(name) == std::string::npos) measured += (measured.empty() ? "" : ", ") + name;
    }
    throw UsageError(
        fmt::format("{}: the sweep has no {} over 2 or more ranks, which the step issues (measured: {}; "
                    "run bench-collectives --op {})",
                    origin_, name_of(query.op), measured, name_of(query.op)));
  }
  return *best;
}

double SweepCostModel::seconds(const CommunicationCostQuery& query) const {
  SeriesKey chosen;
  const std::vector<SweepPoint>& points = series_for(query, chosen);
  const auto& [op, ranks, nodes] = chosen;
  const std::string what = fmt::format("{} of {} over {} on {}", name_of(query.op), size_text(query.bytes),
                                       count_text(query.ranks, "rank"), count_text(query.nodes, "node"));
  int outside = 0;
  double seconds = 0;
  if (ranks == query.ranks && nodes == query.nodes) {
    seconds = interpolate(
        points, query.bytes, [](const SweepPoint& point) { return point.seconds; }, outside);
    if (outside > 0) seconds *= static_cast<double>(query.bytes) / static_cast<double>(points.back().bytes);
  } else {
    const double busbw = interpolate(
        points, query.bytes, [](const SweepPoint& point) { return point.busbw_gbps; }, outside);
    if (busbw <= 0)
      throw UsageError(
          fmt::format("{}: {} has no bus bandwidth to convert from (busbw 0 at {} ranks)", origin_, what, ranks));
    seconds = static_cast<double>(query.bytes) * bus_bandwidth_factor(query.op, query.ranks) / (busbw * 1e9);
    // Below the smallest size a call is bound by latency, not bandwidth: the smallest
    // size's busbw would give it almost no time at all.
    if (outside < 0) seconds = points.front().seconds;
    notes_.insert(fmt::format(
        "{} {} over {} ranks on {}: converted through busbw from the sweep's {} ranks on {} "
        "(extrapolated)",
        origin_, name_of(query.op), query.ranks, count_text(query.nodes, "node"), ranks, count_text(nodes, "node")));
  }
  if (outside < 0)
    notes_.insert(
        fmt::format("{} {} over {} ranks: sizes below the sweep's smallest ({}) take its time "
                    "(extrapolated)",
                    origin_, name_of(query.op), ranks, size_text(points.front().bytes)));
  if (outside > 0)
    notes_.insert(
        fmt::format("{} {} over {} ranks: sizes above the sweep's largest ({}) keep its bus bandwidth "
                    "(extrapolated)",
                    origin_, name_of(query.op), ranks, size_text(points.back().bytes)));
  return seconds;
}

std::string SweepCostModel::basis() const { return "bench-collectives sweep " + origin_; }

}  // namespace commbench
