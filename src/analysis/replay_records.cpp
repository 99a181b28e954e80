#include "commbench/analysis/replay_records.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "commbench/core/number_text.hpp"
#include "commbench/core/size.hpp"
#include "commbench/core/text_table.hpp"

namespace commbench {

namespace {

std::string ms(double seconds) { return significant_text(seconds * 1e3, 4); }
std::string optional_text(const std::optional<double>& value, double scale = 1) {
  return value ? significant_text(*value * scale, 4) : "-";
}

// What the kernels' names say of a class's NCCL algorithm and protocol: "RING/LL", "RING"
// where the name says no protocol, "-" where it says nothing of this call.
std::string nccl_choice_text(const TracedClass& c) {
  if (c.nccl_algo.empty() && c.nccl_proto.empty()) return "-";
  if (c.nccl_proto.empty()) return c.nccl_algo;
  return fmt::format("{}/{}", c.nccl_algo.empty() ? "?" : c.nccl_algo, c.nccl_proto);
}

}  // namespace

Record traced_class_record(const TracedClass& c, const FabricFigure& fabric) {
  return {
      &record_kind("collective"),
      {c.op, c.dtype.empty() ? FieldValue{} : FieldValue{c.dtype}, c.bytes_known ? whole_value(c.bytes) : FieldValue{},
       c.group_ranks > 0 ? FieldValue{std::int64_t{c.group_ranks}} : FieldValue{}, std::int64_t{c.ranks},
       whole_value(c.calls), whole_value(c.timed_calls), optional_value(c.seconds), c.wait_seconds,
       optional_value(c.algbw_gbps), optional_value(c.busbw_gbps), optional_value(fabric.seconds),
       optional_value(fabric.busbw_gbps), optional_value(fabric.ratio), c.nccl_algo, c.nccl_proto},
      {}};
}

Record rank_trace_record(const RankTraceSummary& rank) {
  return {
      &record_kind("rank"),
      {std::int64_t{rank.rank}, rank.host, rank.path, whole_value(rank.collectives),
       optional_value(rank.communication_seconds), optional_value(rank.calls_seconds), whole_value(rank.unclaimed_runs),
       rank.unclaimed_seconds, rank.wait_seconds, optional_value(rank.step_seconds),
       whole_value(rank.last_arrivals), optional_value(rank.lateness_seconds), optional_value(rank.exposed_seconds),
       std::int64_t{rank.steps}},
      {}};
}

void add_replay_records(const std::function<void(const Record&)>& add, const TraceSummary& summary,
                        const FabricComparison* fabric) {
  for (std::size_t i = 0; i < summary.classes.size(); ++i)
    add(traced_class_record(summary.classes[i], fabric ? fabric->classes[i] : FabricFigure{}));
  for (const RankTraceSummary& rank : summary.ranks) add(rank_trace_record(rank));
}

namespace {

std::vector<TextColumn> class_columns(bool with_fabric, bool with_nccl) {
  std::vector<TextColumn> columns{
      {{"op"}, Align::left, 14},       {{"dtype"}, Align::left, 9},        {{"size"}, Align::right, 10},
      {{"group"}, Align::right, 6},    {{"calls"}, Align::right, 6},       {{"time ms"}, Align::right, 10},
      {{"wait ms"}, Align::right, 10}, {{"algbw GB/s"}, Align::right, 11}, {{"busbw GB/s"}, Align::right, 11}};
  if (with_fabric) {
    columns.push_back({{"fabric GB/s"}, Align::right, 12});
    columns.push_back({{"of fabric"}, Align::right, 10});
  }
  if (with_nccl) columns.push_back({{"nccl"}, Align::left, 12});
  return columns;
}

// With more than one profiler step: each step's calls, bytes and times, per rank.
void print_steps(const std::vector<StepSummary>& steps) {
  TextTable table({{{"step"}, Align::right, 5},
                   {{"step ms"}, Align::right, 10},
                   {{"calls"}, Align::right, 6},
                   {{"bytes"}, Align::right, 10},
                   {{"comm ms"}, Align::right, 10},
                   {{"wait ms"}, Align::right, 10}},
                  "  ", "  ");
  for (const StepSummary& step : steps)
    table.add_row({std::to_string(step.number), ms(step.step_seconds), std::to_string(step.calls),
                   step.bytes_known ? format_size(step.bytes) : "?", optional_text(step.communication_seconds, 1e3), ms(step.wait_seconds)});
  fmt::print("{}", table.render());
}

}  // namespace

void print_replay_report(const TraceSummary& summary, const FabricComparison* fabric) {
  if (summary.source.empty())
    fmt::print("# bench-replay: {} rank{} of {} ({}), {} collective calls per rank\n", summary.ranks.size(),
               summary.ranks.size() == 1 ? "" : "s", summary.world_size,
               summary.backend.empty() ? "backend unknown" : summary.backend, summary.calls);
  else
    fmt::print("# bench-replay: {}, {}, {}\n", summary.source, count_text(summary.world_size, "rank"),
               count_text(summary.calls, "call"));
  const bool with_nccl = std::any_of(summary.classes.begin(), summary.classes.end(), [](const TracedClass& c) {
    return !c.nccl_algo.empty() || !c.nccl_proto.empty();
  });
  TextTable classes(class_columns(fabric != nullptr, with_nccl), "  ", "  ");
  std::vector<std::uint64_t> sizes;
  for (const TracedClass& c : summary.classes) sizes.push_back(c.bytes);
  const std::vector<std::string> size_texts = format_sizes_apart(sizes);
  for (std::size_t i = 0; i < summary.classes.size(); ++i) {
    const TracedClass& c = summary.classes[i];
    std::vector<std::string> row{c.op,
                                 c.dtype.empty() ? "?" : c.dtype,
                                 c.bytes_known ? size_texts[i] : "?",
                                 c.group_ranks > 0 ? std::to_string(c.group_ranks) : "?",
                                 std::to_string(c.calls),
                                 optional_text(c.seconds, 1e3),
                                 ms(c.wait_seconds),
                                 optional_text(c.algbw_gbps),
                                 optional_text(c.busbw_gbps)};
    if (fabric) {
      row.push_back(optional_text(fabric->classes[i].busbw_gbps));
      const std::optional<double>& ratio = fabric->classes[i].ratio;
      row.push_back(ratio ? significant_text(100 * *ratio, 3) + "%" : "-");
    }
    if (with_nccl)
      row.push_back(nccl_choice_text(c));
    classes.add_row(row);
  }
  fmt::print("{}", classes.render());
  const bool with_exposed = std::any_of(summary.ranks.begin(), summary.ranks.end(),
                                        [](const RankTraceSummary& rank) { return rank.exposed_seconds.has_value(); });
  std::vector<TextColumn> rank_columns{{{"rank"}, Align::right, 5},     {{"host"}, Align::left, 12},
                                       {{"comm ms"}, Align::right, 10}, {{"wait ms"}, Align::right, 10},
                                       {{"step ms"}, Align::right, 10}, {{"last"}, Align::right, 5},
                                       {{"late ms"}, Align::right, 9}};
  if (with_exposed) rank_columns.push_back({{"exposed ms"}, Align::right, 11});
  TextTable ranks(std::move(rank_columns), "  ", "  ");
  for (const RankTraceSummary& rank : summary.ranks) {
    std::vector<std::string> row{std::to_string(rank.rank),
                                 rank.host,
                                 optional_text(rank.communication_seconds, 1e3),
                                 ms(rank.wait_seconds),
                                 optional_text(rank.step_seconds, 1e3),
                                 std::to_string(rank.last_arrivals),
                                 optional_text(rank.lateness_seconds, 1e3)};
    if (with_exposed) row.push_back(optional_text(rank.exposed_seconds, 1e3));
    ranks.add_row(row);
  }
  if (!summary.ranks.empty()) fmt::print("{}", ranks.render());
  if (summary.steps.size() > 1) print_steps(summary.steps);
  fmt::print("verdict: {}\n", summary.verdict);
  if (fabric) {
    fmt::print("fabric: {}\n", fabric->verdict);
    if (!fabric->cause.empty()) fmt::print("top cause: {}\n", fabric->cause);
    for (const std::string& note : fabric->notes) fmt::print("# note: {}\n", note);
  }
  std::fflush(stdout);
}

}  // namespace commbench
