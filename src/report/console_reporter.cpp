#include "commbench/report/console_reporter.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <string>
#include <variant>

#include "commbench/core/number_text.hpp"
#include "commbench/core/record.hpp"
#include "commbench/core/text_table.hpp"
#include "commbench/report/scheduler_job.hpp"

namespace commbench {
namespace {

// Widths of the time and bandwidth columns: a figure wider than its column is shown with
// fewer digits (fixed_text_within) rather than pushing the later columns right.
constexpr std::size_t kFigureWidth = 10;
constexpr std::size_t kBandwidthWidth = 9;

// nccl-tests' layout: right-aligned columns under a two-line heading of names and units,
// the heading commented out with '#' so tools reading the rows skip it.
std::vector<TextColumn> result_columns() {
  return {
      {{"op"}, Align::right, 14},
      {{"place"}, Align::right, 5},
      {{"dtype"}, Align::right, 8},
      {{"redop"}, Align::right, 5},
      {{"root"}, Align::right, 4},
      {{"size", "(B)"}, Align::right, 12},
      {{"count", "(elements)"}, Align::right, 12},
      {{"time", "(us)"}, Align::right, kFigureWidth},
      {{"p99", "(us)"}, Align::right, kFigureWidth},
      {{"noise", "(%)"}, Align::right, 6},
      {{"algbw", "(GB/s)"}, Align::right, kBandwidthWidth},
      {{"busbw", "(GB/s)"}, Align::right, kBandwidthWidth},
      {{"theo_bus", "(GB/s)"}, Align::right, kBandwidthWidth},
      {{"eff", "(%)"}, Align::right, 6},
      {{"#wrong"}, Align::right, 7},
      {{"thr"}, Align::right, 5},
  };
}

// With the NCCL backend, what NCCL chose (algorithm/protocol/channels) and the algorithm
// the theoretical busbw is for, at the end where nccl-tests' readers do not look for
// their columns; then the command's own fields (bench-groups' group_size and groups), so
// rows that differ only in those can be told apart.
TextTable result_table(bool with_nccl, const std::vector<std::string>& extra_columns) {
  std::vector<TextColumn> columns = result_columns();
  if (with_nccl) {
    columns.push_back({{"nccl", "(algo/proto/ch)"}, Align::right, 18});
    columns.push_back({{"model", "(algo)"}, Align::right, 9});
  }
  for (const std::string& name : extra_columns)
    columns.push_back({{name}, Align::right, std::max<std::size_t>(name.size(), 6)});
  return TextTable(std::move(columns), "#", " ");
}

// A command's own field as the table shows it: "-" where the row lacks it.
std::string extra_cell(const ResultRow& row, const std::string& name) {
  for (const ExtraField& field : row.extra) {
    if (field.name != name) continue;
    if (const auto* text = std::get_if<std::string>(&field.value)) return *text;
    if (const auto* whole = std::get_if<std::int64_t>(&field.value)) return std::to_string(*whole);
    if (const auto* real = std::get_if<double>(&field.value)) return significant_text(*real);
  }
  return "-";
}

std::string nccl_choice(const ResultRow& r) {
  if (r.nccl_algo.empty()) return "-";
  return fmt::format("{}/{}/{}", r.nccl_algo, r.nccl_proto.empty() ? "-" : r.nccl_proto,
                     r.nccl_channels.empty() ? "-" : r.nccl_channels);
}

// Any other kind: one column per field, headed by its name and unit as the CSV names them;
// text left-aligned, figures right-aligned.
TextTable kind_table(const RecordKind& kind) {
  std::vector<TextColumn> columns;
  for (const Column& column : kind.columns) {
    TextColumn text_column;
    text_column.heading = {std::string(column.name)};
    if (!column.unit.empty()) text_column.heading.push_back(fmt::format("({})", column.unit));
    text_column.align = column.type == ValueType::text ? Align::left : Align::right;
    // Rows are printed as they come, so widths are fixed up front: wide enough for most
    // names and figures; a longer cell only pushes its line's later cells right.
    const std::size_t usual = column.type == ValueType::text ? 14 : 10;
    text_column.width = std::max<std::size_t>({column.name.size(), column.unit.size() + 2, usual});
    text_column.gap = 2;
    columns.push_back(std::move(text_column));
  }
  return TextTable(std::move(columns), "#", " ");
}

// A value as the console shows it: "-" for none, text as it is, figures as in the CSV.
std::string console_cell(const FieldValue& value, const Column& column) {
  if (std::holds_alternative<std::monostate>(value)) return "-";
  if (const auto* text = std::get_if<std::string>(&value)) return *text;
  return csv_cell(value, column);
}

}  // namespace

std::vector<std::string> rank_host_ranges(const std::vector<std::string>& hosts) {
  std::vector<std::string> lines;
  std::size_t first = 0;
  for (std::size_t r = 1; r <= hosts.size(); ++r) {
    if (r < hosts.size() && hosts[r] == hosts[first]) continue;
    const std::string ranks = r - first == 1 ? std::to_string(first) : fmt::format("{}-{}", first, r - 1);
    lines.push_back(ranks + " " + hosts[first]);
    first = r;
  }
  return lines;
}

void ConsoleReporter::begin(const RunContext& ctx) {
  write(fmt::format("# {} {} (commit {})\n", ctx.program, ctx.version, ctx.commit));
  write(fmt::format("# backend: {} ({})\n", ctx.backend, ctx.backend_version));
  if (ctx.mpi_version != ctx.backend_version) write(fmt::format("# MPI: {}\n", ctx.mpi_version));
  write(fmt::format("# ranks: {}  nodes: {}  started: {}\n", ctx.ranks, ctx.nodes, ctx.started_at));
  write(slurm_comment_line(ctx));
  for (const std::string& line : rank_host_ranges(ctx.rank_hosts)) write(fmt::format("#   rank {}\n", line));
  for (const std::string& device : ctx.devices) write(fmt::format("#   {}\n", device));
  std::string settings;
  for (const auto& [key, value] : ctx.settings) settings += " " + key + "=" + value;
  write(fmt::format("# settings:{}\n", settings));
  for (const std::string& note : ctx.notes) write(fmt::format("# note: {}\n", note));
  if (ctx.record_kind != "row") kind_table_.emplace(kind_table(record_kind(ctx.record_kind)));
  nccl_columns_ = ctx.backend == "nccl";
  extra_columns_ = ctx.extra_columns;
  row_table_.emplace(result_table(nccl_columns_, extra_columns_));
  write(fmt::format("#\n{}", kind_table_ ? kind_table_->heading() : row_table_->heading()));
  std::fflush(out_);
}

void ConsoleReporter::add_record(const Record& record) {
  if (!kind_table_) return;
  std::vector<std::string> cells;
  for (std::size_t i = 0; i < record.kind->columns.size(); ++i)
    cells.push_back(console_cell(record.values[i], record.kind->columns[i]));
  write(kind_table_->line(cells));
  ++records_;
  std::fflush(out_);
}

void ConsoleReporter::add_row(const ResultRow& r) {
  const OpCase& c = r.op_case;
  const std::string redop = c.redop == ReduceOp::none ? "-" : std::string(name_of(c.redop));
  const std::string root = c.root < 0 ? "-" : std::to_string(c.root);
  const std::string wrong = r.wrong ? std::to_string(*r.wrong) : "N/A";
  // FAIL in capitals: it is the word a reader scanning a long table must not miss.
  const char* verdict = !r.threshold_passed ? "-" : *r.threshold_passed ? "pass" : "FAIL";
  // "-" for the figures a row may lack; noise and efficiency in percent.
  const std::string noise = r.noise ? fixed_text(*r.noise * 100.0, 2) : "-";
  const std::string theoretical =
      r.theoretical_busbw_gbps ? fixed_text_within(*r.theoretical_busbw_gbps, 3, kBandwidthWidth) : "-";
  const std::string efficiency = r.efficiency ? fixed_text(*r.efficiency * 100.0, 1) : "-";
  std::vector<std::string> cells{std::string(name_of(c.op)),
                                 std::string(name_of(c.placement)),
                                 std::string(name_of(c.dtype)),
                                 redop,
                                 root,
                                 std::to_string(c.shape.bytes),
                                 std::to_string(c.shape.count),
                                 fixed_text_within(r.time_us, 2, kFigureWidth),
                                 fixed_text_within(r.p99_us, 2, kFigureWidth),
                                 noise,
                                 fixed_text_within(r.algbw_gbps, 3, kBandwidthWidth),
                                 has_bus_bandwidth(r) ? fixed_text_within(r.busbw_gbps, 3, kBandwidthWidth) : "-",
                                 theoretical,
                                 efficiency,
                                 wrong,
                                 verdict};
  if (nccl_columns_) {
    cells.push_back(nccl_choice(r));
    cells.push_back(r.model_algo.empty() ? "-" : r.model_algo);
  }
  for (const std::string& name : extra_columns_) cells.push_back(extra_cell(r, name));
  if (!row_table_) row_table_.emplace(result_table(nccl_columns_, extra_columns_));
  write(row_table_->line(cells));
  std::fflush(out_);
}

void ConsoleReporter::finish(const RunSummary& summary) {
  if (kind_table_) {
    write(fmt::format("#\n# records: {}  complete: {}\n", records_, summary.complete ? "yes" : "no"));
    std::fflush(out_);
    return;
  }
  const std::string wrong = summary.wrong_elements ? std::to_string(*summary.wrong_elements) : "not checked";
  write(fmt::format("#\n# rows: {}  wrong elements: {}  complete: {}\n", summary.rows, wrong,
                    summary.complete ? "yes" : "no"));
  // Without a busbw (one rank) there is no average to give; the header's note says why.
  const std::string average =
      summary.average_busbw_gbps ? significant_text(*summary.average_busbw_gbps) + " GB/s" : "-";
  write(fmt::format("# Avg bus bandwidth    : {}\n", average));
  for (const std::string& failure : summary.check_failures) write(fmt::format("# check failed: {}\n", failure));
  if (summary.threshold_rows > 0 || !summary.threshold_failures.empty())
    write(fmt::format("# thresholds: {} row{} checked, {} rule failure{}\n", summary.threshold_rows,
                      summary.threshold_rows == 1 ? "" : "s", summary.threshold_failures.size(),
                      summary.threshold_failures.size() == 1 ? "" : "s"));
  for (const std::string& failure : summary.threshold_failures) write(fmt::format("# threshold failed: {}\n", failure));
  if (!summary.console_text.empty()) write("#\n" + summary.console_text);
  std::fflush(out_);
}

}  // namespace commbench
