#include "commbench/validate/baseline.hpp"

#include <array>
#include <charconv>
#include <cmath>
#include <optional>

#include <fmt/format.h>

#include "commbench/core/error.hpp"
#include "commbench/validate/csv_table.hpp"

namespace commbench {

MeasurementKey key_of(const OpCase& c, int ranks) {
  return MeasurementKey{c.op, c.placement, c.dtype, c.redop, c.root, c.shape.bytes, ranks, c.distribution};
}

std::string describe(const MeasurementKey& key) {
  OpCase c;
  c.op = key.op;
  c.placement = key.placement;
  c.dtype = key.dtype;
  c.redop = key.redop;
  c.root = key.root;
  c.shape.bytes = key.bytes;
  c.distribution = key.distribution;
  return fmt::format("{} on {}{}", describe(c), key.ranks, key.ranks == 1 ? " rank" : " ranks");
}

const BaselineRow* Baseline::find(const MeasurementKey& key) const {
  const auto it = rows.find(key);
  return it == rows.end() ? nullptr : &it->second;
}

namespace {

constexpr std::uint64_t kMaxRanks = 1u << 24;

constexpr std::array<std::string_view, 10> kRequiredColumns{
    "op", "placement", "dtype", "redop", "root", "bytes", "ranks", "time_us", "algbw_gbps", "busbw_gbps"};

std::optional<std::uint64_t> whole_number(std::string_view text) {
  std::uint64_t value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || error != std::errc{} || end != text.data() + text.size()) return std::nullopt;
  return value;
}

std::optional<double> real_number(std::string_view text) {
  double value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || error != std::errc{} || end != text.data() + text.size() || !std::isfinite(value))
    return std::nullopt;
  return value;
}

class RowReader {
 public:
  RowReader(const CsvTable& table, const CsvRecord& record, const std::string& origin)
      : table_(table), record_(record), origin_(origin) {}

  const std::string& field(std::string_view column) const { return record_.fields[*table_.column(column)]; }

  std::string where(std::string_view column) const {
    return fmt::format("{} line {}: {}", origin_, record_.line, column);
  }

  [[noreturn]] void bad(std::string_view column, const std::string& expected) const {
    throw UsageError(where(column) + " '" + excerpt(field(column)) + "' is not " + expected);
  }

  std::uint64_t count(std::string_view column, std::uint64_t minimum, std::uint64_t maximum) const {
    const auto value = whole_number(field(column));
    if (!value || *value < minimum || *value > maximum)
      bad(column, fmt::format("a whole number in [{}, {}]", minimum, maximum));
    return *value;
  }

  double measurement(std::string_view column) const {
    const auto value = real_number(field(column));
    if (!value || *value < 0) bad(column, "a number >= 0");
    return *value;
  }

 private:
  const CsvTable& table_;
  const CsvRecord& record_;
  const std::string& origin_;
};

// A one-rank row's busbw is empty (nothing crosses a link): it reads as none, 0.
double busbw_of(const RowReader& row, const MeasurementKey& key) {
  return key.ranks == 1 && row.field("busbw_gbps").empty() ? 0.0 : row.measurement("busbw_gbps");
}

MeasurementKey read_key(const RowReader& row) {
  MeasurementKey key;
  const OpLabel label = parse_op_label(row.field("op"), row.where("op"));
  key.op = label.op;
  key.distribution = label.distribution;
  const std::string& placement = row.field("placement");
  if (placement != "out" && placement != "in") row.bad("placement", "out or in");
  key.placement = placement == "in" ? Placement::in_place : Placement::out_of_place;
  key.dtype = parse_data_type(row.field("dtype"), row.where("dtype"));
  if (reduces(key.op)) {
    key.redop = parse_reduce_op(row.field("redop"), row.where("redop"));
  } else if (!row.field("redop").empty()) {
    row.bad("redop", std::string("empty (") + std::string(name_of(key.op)) + " does not reduce)");
  }
  if (has_root(key.op)) {
    key.root = static_cast<int>(row.count("root", 0, kMaxRanks - 1));
  } else if (!row.field("root").empty()) {
    row.bad("root", std::string("empty (") + std::string(name_of(key.op)) + " has no root)");
  }
  key.bytes = row.count("bytes", 1, std::uint64_t{1} << 62);
  key.ranks = static_cast<int>(row.count("ranks", 1, kMaxRanks));
  return key;
}

}  // namespace

Baseline parse_baseline(std::string_view text, const std::string& origin) {
  // The run's --json is the file people reach for first; say which file it takes.
  const std::size_t first = text.find_first_not_of(" \t\r\n");
  if (first != std::string_view::npos && (text[first] == '{' || text[first] == '['))
    throw UsageError(origin + ": a JSON file; a baseline is the --csv file of an earlier bench-collectives run");
  const CsvTable table = parse_csv(text, origin);
  for (std::string_view column : kRequiredColumns)
    if (!table.column(column))
      throw UsageError(origin + " line 1: no '" + std::string(column) +
                       "' column (a baseline is the --csv file of an earlier bench-collectives run)");
  if (table.records.empty()) throw UsageError(origin + ": no measurements (only a header)");

  Baseline baseline;
  baseline.origin = origin;
  for (const CsvRecord& record : table.records) {
    const RowReader row(table, record, origin);
    const MeasurementKey key = read_key(row);
    BaselineRow values{
        row.measurement("time_us"), row.measurement("algbw_gbps"), busbw_of(row, key), record.line, "", 0};
    if (table.column("backend")) values.backend = row.field("backend");
    if (table.column("nodes")) values.nodes = static_cast<int>(row.count("nodes", 1, kMaxRanks));
    const auto [it, inserted] = baseline.rows.emplace(key, values);
    if (!inserted)
      throw UsageError(fmt::format("{} line {}: the same measurement as line {} ({})", origin, record.line,
                                   it->second.line, describe(key)));
  }
  return baseline;
}

}  // namespace commbench
