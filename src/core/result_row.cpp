#include "commbench/core/result_row.hpp"

#include "commbench/core/record.hpp"

namespace commbench {
namespace {

FieldValue optional_double(const std::optional<double>& v) { return v ? FieldValue{*v} : FieldValue{std::monostate{}}; }
FieldValue text_or_empty(const std::string& text) {
  return text.empty() ? FieldValue{std::monostate{}} : FieldValue{text};
}

}  // namespace

// The names of the row kind's columns (core/record.cpp holds their types and units).
std::span<const std::string_view> row_columns() {
  static const std::vector<std::string_view> names = [] {
    std::vector<std::string_view> list;
    for (const Column& column : record_kind("row").columns) list.push_back(column.name);
    return list;
  }();
  return names;
}

std::vector<Field> row_fields(const ResultRow& r) {
  const OpCase& c = r.op_case;
  auto i64 = [](auto v) { return FieldValue{static_cast<std::int64_t>(v)}; };
  std::vector<FieldValue> values{
      r.backend,
      op_label(c),
      std::string(name_of(c.placement)),
      std::string(name_of(c.dtype)),
      c.redop == ReduceOp::none ? FieldValue{std::monostate{}} : FieldValue{std::string(name_of(c.redop))},
      c.root < 0 ? FieldValue{std::monostate{}} : i64(c.root),
      i64(c.shape.bytes),
      i64(c.shape.count),
      i64(r.ranks),
      i64(r.nodes),
      i64(r.iterations),
      i64(r.samples),
      r.time_us,
      r.time_min_us,
      r.time_mean_us,
      r.p50_us,
      r.p99_us,
      optional_double(r.noise),
      i64(r.slowest_rank),
      r.slowest_host,
      r.algbw_gbps,
      has_bus_bandwidth(r) ? FieldValue{r.busbw_gbps} : FieldValue{std::monostate{}},
      optional_double(r.theoretical_busbw_gbps),
      optional_double(r.achievable_busbw_gbps),
      optional_double(r.efficiency),
      r.wrong ? i64(*r.wrong) : FieldValue{std::monostate{}},
      r.threshold_passed ? FieldValue{std::string(*r.threshold_passed ? "pass" : "fail")}
                         : FieldValue{std::monostate{}},
      r.stop_reason == StopReason::keep_going ? FieldValue{std::monostate{}}
                                              : FieldValue{std::string(name_of(r.stop_reason))},
      text_or_empty(r.nccl_algo),
      text_or_empty(r.nccl_proto),
      text_or_empty(r.nccl_channels),
      text_or_empty(r.nccl_split),
      text_or_empty(r.model_algo),
  };
  std::vector<Field> fields;
  const std::span<const std::string_view> columns = row_columns();
  fields.reserve(columns.size() + r.extra.size());
  for (std::size_t i = 0; i < columns.size(); ++i) fields.push_back(Field{columns[i], std::move(values[i])});
  for (const ExtraField& extra : r.extra) fields.push_back(Field{extra.name, extra.value});
  return fields;
}

bool has_bus_bandwidth(const ResultRow& row) { return row.ranks > 1; }

void RowTotals::add(const ResultRow& row) {
  ++rows_;
  if (has_bus_bandwidth(row)) {
    ++bus_rows_;
    busbw_sum_ += row.busbw_gbps;
  }
  if (row.wrong) wrong_ = wrong_.value_or(0) + *row.wrong;
}

std::optional<double> RowTotals::average_busbw_gbps() const {
  if (rows_ == 0) return 0.0;
  if (bus_rows_ == 0) return std::nullopt;
  return busbw_sum_ / static_cast<double>(bus_rows_);
}

double algorithm_bandwidth_gbps(std::uint64_t bytes, double seconds) {
  return seconds > 0 ? static_cast<double>(bytes) / seconds / 1e9 : 0.0;
}

}  // namespace commbench
