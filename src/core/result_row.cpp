#include "commbench/core/result_row.hpp"

#include <array>

namespace commbench {
namespace {

constexpr std::array<std::string_view, 28> kColumns{"backend",
                                                    "op",
                                                    "placement",
                                                    "dtype",
                                                    "redop",
                                                    "root",
                                                    "bytes",
                                                    "count",
                                                    "ranks",
                                                    "nodes",
                                                    "iterations",
                                                    "samples",
                                                    "time_us",
                                                    "time_min_us",
                                                    "time_mean_us",
                                                    "p50_us",
                                                    "p99_us",
                                                    "noise",
                                                    "slowest_rank",
                                                    "slowest_host",
                                                    "algbw_gbps",
                                                    "busbw_gbps",
                                                    "theoretical_busbw_gbps",
                                                    "achievable_busbw_gbps",
                                                    "efficiency",
                                                    "wrong",
                                                    "threshold",
                                                    "stop_reason"};

FieldValue optional_double(const std::optional<double>& v) { return v ? FieldValue{*v} : FieldValue{std::monostate{}}; }

}  // namespace

std::span<const std::string_view> row_columns() { return kColumns; }

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
      r.busbw_gbps,
      optional_double(r.theoretical_busbw_gbps),
      optional_double(r.achievable_busbw_gbps),
      optional_double(r.efficiency),
      r.wrong ? i64(*r.wrong) : FieldValue{std::monostate{}},
      r.threshold_passed ? FieldValue{std::string(*r.threshold_passed ? "pass" : "fail")}
                         : FieldValue{std::monostate{}},
      r.stop_reason == StopReason::keep_going ? FieldValue{std::monostate{}}
                                              : FieldValue{std::string(name_of(r.stop_reason))},
  };
  std::vector<Field> fields;
  fields.reserve(kColumns.size() + r.extra.size());
  for (std::size_t i = 0; i < kColumns.size(); ++i) fields.push_back(Field{kColumns[i], std::move(values[i])});
  for (const ExtraField& extra : r.extra) fields.push_back(Field{extra.name, extra.value});
  return fields;
}

double algorithm_bandwidth_gbps(std::uint64_t bytes, double seconds) {
  return seconds > 0 ? static_cast<double>(bytes) / seconds / 1e9 : 0.0;
}

}  // namespace commbench
