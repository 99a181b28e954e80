#include "commbench/core/record.hpp"

#include <algorithm>
#include <array>
#include <iterator>

#include <fmt/format.h>

#include "commbench/core/csv_field.hpp"
#include "commbench/core/error.hpp"
#include "commbench/core/number_text.hpp"

namespace commbench {
namespace {

using enum ValueType;

// bench-collectives' rows (and every command built on its runner, bench-groups).
constexpr std::array kRowColumns{
    Column{"backend", text, "", false},
    Column{"op", text, "", false},
    Column{"placement", text, "", false},
    Column{"dtype", text, "", false},
    Column{"redop", text, "", true},
    Column{"root", integer, "rank", true},
    Column{"bytes", integer, "bytes", false},
    Column{"count", integer, "elements", false},
    Column{"ranks", integer, "", false},
    Column{"nodes", integer, "", false},
    Column{"iterations", integer, "", false},
    Column{"samples", integer, "", false},
    Column{"time_us", number, "us", false},
    Column{"time_min_us", number, "us", false},
    Column{"time_mean_us", number, "us", false},
    Column{"p50_us", number, "us", false},
    Column{"p99_us", number, "us", false},
    Column{"noise", number, "fraction", true},
    Column{"slowest_rank", integer, "rank", false},
    Column{"slowest_host", text, "", false},
    Column{"algbw_gbps", number, "GB/s", false},
    Column{"busbw_gbps", number, "GB/s", true},
    Column{"theoretical_busbw_gbps", number, "GB/s", true},
    Column{"achievable_busbw_gbps", number, "GB/s", true},
    Column{"efficiency", number, "fraction", true},
    Column{"wrong", integer, "elements", true},
    Column{"threshold", text, "", true},
    Column{"stop_reason", text, "", false},
    Column{"nccl_algo", text, "", true},
    Column{"nccl_proto", text, "", true},
    Column{"nccl_channels", text, "", true},
    Column{"nccl_split", text, "", true},
    Column{"model_algo", text, "", true},
};

// bench-p2p's cells: one pair of ranks (or devices, --local) in one direction.
constexpr std::array kCellColumns{
    Column{"src_host", text, "", false},
    Column{"src_rank", integer, "rank", false},
    Column{"src_device", text, "", false},
    Column{"dst_host", text, "", false},
    Column{"dst_rank", integer, "rank", false},
    Column{"dst_device", text, "", false},
    Column{"bytes", integer, "bytes", false},
    Column{"direction", text, "", false},
    Column{"round", integer, "", false},
    Column{"gbps", number, "GB/s", false},
    Column{"latency_us", number, "us", true},
    Column{"theoretical_gbps", number, "GB/s", true},
    Column{"efficiency", number, "fraction", true},
    Column{"flagged", boolean, "", false},
    Column{"reason", text, "", false},
    Column{"link", text, "", false},
    Column{"rail", integer, "", true},
    Column{"method", text, "", false},
    Column{"nics", text, "", false},
};

// bench-validate's checks: a node's verdict, a node's own collective, a node pair, a group.
// Its figures keep 6 significant digits in CSV, as the console prints them.
constexpr std::array kCheckColumns{
    Column{"kind", text, "", false},
    Column{"phase", text, "", false},
    Column{"round", integer, "", true},
    Column{"node_a", text, "", false},
    Column{"node_b", text, "", false},
    Column{"nodes", text, "", false},
    Column{"measured_gbps", number, "GB/s", true, 6},
    Column{"expected_gbps", number, "GB/s", true, 6},
    Column{"result", text, "", false},
    Column{"reason", text, "", false},
};

// bench-topology's links: one link of one node, as the node's model holds it. Its spec
// figures keep 6 significant digits in CSV, as they always have.
constexpr std::array kLinkColumns{
    Column{"host", text, "", false},
    Column{"from", text, "", false},
    Column{"to", text, "", false},
    Column{"type", text, "", false},
    Column{"count", integer, "lanes or links", true},
    Column{"spec_gbps", number, "GB/s", true, 6},
    Column{"state", text, "", false},
};

// bench-patterns' timed steps, the breakdown of the reporting (slowest) rank.
constexpr std::array kStepColumns{
    Column{"step", integer, "", false},
    Column{"step_seconds", number, "s", false},
    Column{"compute_seconds", number, "s", false},
    Column{"communication_seconds", number, "s", false},
    Column{"communication_busy_seconds", number, "s", false},
    Column{"exposed_seconds", number, "s", false},
    Column{"unattributed_exposed_seconds", number, "s", false},
};

// bench-patterns' collective types: one operation over one group, totalled over the mean
// step.
constexpr std::array kTypeColumns{
    Column{"type", text, "", false},
    Column{"kind", text, "", false},
    Column{"op", text, "", false},
    Column{"group", text, "", false},
    Column{"group_ranks", integer, "", false},
    Column{"group_nodes", integer, "", false},
    Column{"count", integer, "", false},
    Column{"bytes", integer, "bytes", false},
    Column{"median_bytes", integer, "bytes", false},
    Column{"seconds", number, "s", false},
    Column{"exposed_seconds", number, "s", false},
    Column{"algbw_gbps", number, "GB/s", false},
    Column{"busbw_gbps", number, "GB/s", false},
    Column{"theoretical_busbw_gbps", number, "GB/s", true},
    Column{"achievable_busbw_gbps", number, "GB/s", true},
    Column{"efficiency", number, "fraction", true},
    Column{"half_peak_bytes", number, "bytes", true},
    Column{"latency_bound", boolean, "", false},
    Column{"basis", text, "", false},
};

// bench-replay's collectives: the calls of one operation, type, size and group that a
// job's traces hold, every rank's together.
constexpr std::array kTracedColumns{
    Column{"op", text, "", false},
    Column{"dtype", text, "", true},
    Column{"bytes", integer, "bytes", true},
    Column{"group_ranks", integer, "", true},
    Column{"ranks", integer, "", false},
    Column{"calls", integer, "", false},
    Column{"timed_calls", integer, "", false},
    Column{"seconds", number, "s", true},
    Column{"wait_seconds", number, "s", false},
    Column{"algbw_gbps", number, "GB/s", true},
    Column{"busbw_gbps", number, "GB/s", true},
    Column{"fabric_seconds", number, "s", true},
    Column{"fabric_busbw_gbps", number, "GB/s", true},
    Column{"fabric_ratio", number, "fraction", true},
    Column{"nccl_algo", text, "", false},
    Column{"nccl_proto", text, "", false},
};

// bench-replay's ranks: one rank's trace, its communication and its arrivals.
constexpr std::array kRankColumns{
    Column{"rank", integer, "rank", false},
    Column{"host", text, "", false},
    Column{"file", text, "", false},
    Column{"collectives", integer, "", false},
    Column{"communication_seconds", number, "s", true},
    Column{"calls_seconds", number, "s", true},
    Column{"unattributed_runs", integer, "", false},
    Column{"unattributed_seconds", number, "s", false},
    Column{"wait_seconds", number, "s", false},
    Column{"step_seconds", number, "s", true},
    Column{"last_arrivals", integer, "", false},
    Column{"lateness_seconds", number, "s", true},
    Column{"exposed_seconds", number, "s", true},
    Column{"steps", integer, "", false},
};

// bench-collectives' NICs: what one node's port carried during one case (--nic-counters).
constexpr std::array kNicColumns{
    Column{"op", text, "", false},
    Column{"placement", text, "", false},
    Column{"dtype", text, "", false},
    Column{"redop", text, "", false},
    Column{"bytes", integer, "bytes", false},
    Column{"node", text, "", false},
    Column{"nic", text, "", false},
    Column{"rdma", boolean, "", false},
    Column{"rail", boolean, "", false},
    Column{"tx_bytes", integer, "bytes", true},
    Column{"rx_bytes", integer, "bytes", true},
    Column{"seconds", number, "s", false},
    Column{"gbps", number, "GB/s", true},
    Column{"peak_gbps", number, "GB/s", true},
    Column{"flagged", boolean, "", false},
    Column{"note", text, "", false},
};

// bench-validate --soak's intervals: a pair's reading, or what changed on a node.
constexpr std::array kIntervalColumns{
    Column{"what", text, "", false},         Column{"interval", integer, "", false},
    Column{"start_s", number, "s", false},   Column{"end_s", number, "s", false},
    Column{"node_a", text, "", false},       Column{"node_b", text, "", false},
    Column{"nic", text, "", false},          Column{"gbps", number, "GB/s", true, 6},
    Column{"bytes", integer, "bytes", true}, Column{"peak_gbps", number, "GB/s", true, 6},
    Column{"detail", text, "", false},
};

// bench-validate --soak's events: a node's or a link's dip, when it began and ended.
constexpr std::array kEventColumns{
    Column{"kind", text, "", false},
    Column{"node_a", text, "", false},
    Column{"node_b", text, "", false},
    Column{"start_s", number, "s", false},
    Column{"end_s", number, "s", false},
    Column{"start_utc", text, "", false},
    Column{"end_utc", text, "", false},
    Column{"low_readings", integer, "", false},
    Column{"lowest_gbps", number, "GB/s", false, 6},
    Column{"steady_gbps", number, "GB/s", false, 6},
    Column{"depth", number, "fraction", false},
    Column{"result", text, "", false},
    Column{"partners", text, "", false},
    Column{"changes", text, "", false},
};

// bench-patterns --tune's trials: the step run with the user's settings, with one knob
// changed, or measured again; a trial the search did not run has no measured figures.
constexpr std::array kTrialColumns{
    Column{"trial", integer, "", false},
    Column{"knob", text, "", true},
    Column{"value", text, "", true},
    Column{"verdict", text, "", false},
    Column{"step_seconds", number, "s", true},
    Column{"exposed_seconds", number, "s", true},
    Column{"communication_seconds", number, "s", true},
    Column{"noise", number, "fraction", true},
    Column{"predicted_seconds", number, "s", true},
    Column{"memory_bytes", integer, "bytes", true},
};

constexpr RecordKind kRow{"row", "rows", kRowColumns};
constexpr RecordKind kCell{"cell", "cells", kCellColumns};
constexpr RecordKind kCheck{"check", "checks", kCheckColumns};
constexpr RecordKind kLink{"link", "links", kLinkColumns};
constexpr RecordKind kStep{"step", "steps", kStepColumns};
constexpr RecordKind kType{"type", "types", kTypeColumns};
constexpr RecordKind kTraced{"collective", "collectives", kTracedColumns};
constexpr RecordKind kRank{"rank", "ranks", kRankColumns};
constexpr RecordKind kNic{"nic", "nics", kNicColumns};
constexpr RecordKind kInterval{"interval", "intervals", kIntervalColumns};
constexpr RecordKind kEvent{"event", "events", kEventColumns};
constexpr RecordKind kTrial{"trial", "trials", kTrialColumns};
constexpr std::array<const RecordKind*, 12> kKinds{&kRow,    &kCell, &kCheck, &kLink,     &kStep,  &kType,
                                                   &kTraced, &kRank, &kNic,   &kInterval, &kEvent, &kTrial};

}  // namespace

std::span<const RecordKind* const> record_kinds() { return kKinds; }

const RecordKind& record_kind(std::string_view name) {
  for (const RecordKind* kind : kKinds)
    if (kind->name == name) return *kind;
  throw BackendError(fmt::format("internal error: no record kind '{}'", name));
}

std::vector<Field> record_fields(const Record& record) {
  const std::span<const Column> columns = record.kind->columns;
  if (record.values.size() != columns.size())
    throw BackendError(fmt::format("internal error: a '{}' record has {} values for {} columns", record.kind->name,
                                   record.values.size(), columns.size()));
  std::vector<Field> fields;
  fields.reserve(columns.size() + record.extra.size());
  for (std::size_t i = 0; i < columns.size(); ++i) fields.push_back(Field{columns[i].name, record.values[i]});
  for (const ExtraField& extra : record.extra) fields.push_back(Field{extra.name, extra.value});
  return fields;
}

Record row_record(const ResultRow& row) {
  Record record{&kRow, {}, row.extra};
  for (Field& field : row_fields(row)) {
    if (record.values.size() == kRowColumns.size()) break;
    record.values.push_back(std::move(field.value));
  }
  return record;
}

std::string csv_cell(const FieldValue& value, const Column& column) {
  if (const auto* text_value = std::get_if<std::string>(&value)) return csv_escape(*text_value);
  if (const auto* whole = std::get_if<std::int64_t>(&value)) {
    if (column.type == boolean) return *whole != 0 ? "true" : "false";
    return std::to_string(*whole);
  }
  if (const auto* real = std::get_if<double>(&value)) return significant_text(*real, column.digits);
  return "";
}

namespace {

// A command's own field: no declared type; numbers keep 9 significant digits.
constexpr Column kExtraColumn{"", ValueType::text, "", true};

// The record's extra fields in the declared order (empty where it lacks one). A field that
// was not declared is an internal error: it would shift every later column.
std::vector<FieldValue> declared_extras(const std::vector<ExtraField>& extra,
                                        std::span<const std::string> extra_columns) {
  for (const ExtraField& field : extra) {
    if (std::find(extra_columns.begin(), extra_columns.end(), field.name) == extra_columns.end())
      throw BackendError("internal error: row field '" + field.name + "' was not declared in the run's extra columns");
  }
  std::vector<FieldValue> values;
  for (const std::string& column : extra_columns) {
    const auto found = std::find_if(extra.begin(), extra.end(), [&](const ExtraField& f) { return f.name == column; });
    values.push_back(found == extra.end() ? FieldValue{std::monostate{}} : found->value);
  }
  return values;
}

}  // namespace

std::string csv_header(const RecordKind& kind, std::span<const std::string> extra_columns) {
  std::string line;
  for (const Column& column : kind.columns) {
    if (!line.empty()) line += ',';
    line += column.name;
  }
  for (const std::string& column : extra_columns) line += ',' + csv_escape(column);
  return line;
}

std::string csv_record_line(const Record& record, const RecordKind& kind, std::span<const std::string> extra_columns) {
  if (record.kind != &kind)
    throw BackendError(
        fmt::format("internal error: a '{}' record in a CSV of '{}' records", record.kind->name, kind.name));
  std::vector<Field> fields = record_fields(record);
  std::string line;
  for (std::size_t i = 0; i < kind.columns.size(); ++i) {
    if (i > 0) line += ',';
    line += csv_cell(fields[i].value, kind.columns[i]);
  }
  for (const FieldValue& value : declared_extras(record.extra, extra_columns))
    line += ',' + csv_cell(value, kExtraColumn);
  return line;
}

std::vector<std::string_view> mixed_csv_columns(std::span<const RecordKind* const> kinds) {
  std::vector<std::string_view> names;
  for (const RecordKind* kind : kinds)
    for (const Column& column : kind->columns)
      if (std::find(names.begin(), names.end(), column.name) == names.end()) names.push_back(column.name);
  return names;
}

std::string mixed_csv_header(std::span<const RecordKind* const> kinds, std::span<const std::string> extra_columns) {
  std::string line = "record";
  for (const std::string_view name : mixed_csv_columns(kinds)) fmt::format_to(std::back_inserter(line), ",{}", name);
  for (const std::string& column : extra_columns) line += ',' + csv_escape(column);
  return line;
}

std::string mixed_csv_record_line(const Record& record, std::span<const RecordKind* const> kinds,
                                  std::span<const std::string> extra_columns) {
  if (std::find(kinds.begin(), kinds.end(), record.kind) == kinds.end())
    throw BackendError(fmt::format("internal error: a '{}' record in a CSV of other kinds", record.kind->name));
  const std::vector<Field> fields = record_fields(record);
  const std::span<const Column> own = record.kind->columns;
  std::string line(record.kind->name);
  for (const std::string_view name : mixed_csv_columns(kinds)) {
    line += ',';
    for (std::size_t i = 0; i < own.size(); ++i)
      if (own[i].name == name) line += csv_cell(fields[i].value, own[i]);
  }
  for (const FieldValue& value : declared_extras(record.extra, extra_columns))
    line += ',' + csv_cell(value, kExtraColumn);
  return line;
}

}  // namespace commbench
