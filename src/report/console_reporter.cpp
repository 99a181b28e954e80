#include "commbench/report/console_reporter.hpp"

#include <string>

namespace commbench {
namespace {

constexpr const char* kHeaderFormat = "#%14s %5s %8s %5s %4s %12s %12s %10s %10s %6s %9s %9s %9s %6s %7s %5s\n";
constexpr const char* kRowFormat = " %14s %5s %8s %5s %4s %12llu %12llu %10.2f %10.2f %6s %9.3f %9.3f %9s %6s %7s %5s\n";

std::string optional_number(const std::optional<double>& v, const char* format) {
  if (!v) return "-";
  char text[32];
  std::snprintf(text, sizeof text, format, *v);
  return text;
}

}  // namespace

std::vector<std::string> rank_host_ranges(const std::vector<std::string>& hosts) {
  std::vector<std::string> lines;
  std::size_t first = 0;
  for (std::size_t r = 1; r <= hosts.size(); ++r) {
    if (r < hosts.size() && hosts[r] == hosts[first]) continue;
    const std::string ranks = r - first == 1 ? std::to_string(first) : std::to_string(first) + "-" + std::to_string(r - 1);
    lines.push_back(ranks + " " + hosts[first]);
    first = r;
  }
  return lines;
}

void ConsoleReporter::begin(const RunContext& ctx) {
  std::fprintf(out_, "# %s %s (commit %s)\n", ctx.program.c_str(), ctx.version.c_str(), ctx.commit.c_str());
  std::fprintf(out_, "# backend: %s (%s)\n", ctx.backend.c_str(), ctx.backend_version.c_str());
  if (ctx.mpi_version != ctx.backend_version) std::fprintf(out_, "# MPI: %s\n", ctx.mpi_version.c_str());
  std::fprintf(out_, "# ranks: %d  nodes: %d  started: %s\n", ctx.ranks, ctx.nodes, ctx.started_at.c_str());
  for (const std::string& line : rank_host_ranges(ctx.rank_hosts)) std::fprintf(out_, "#   rank %s\n", line.c_str());
  for (const std::string& device : ctx.devices) std::fprintf(out_, "#   %s\n", device.c_str());
  std::string settings;
  for (const auto& [key, value] : ctx.settings) settings += " " + key + "=" + value;
  std::fprintf(out_, "# settings:%s\n", settings.c_str());
  for (const std::string& note : ctx.notes) std::fprintf(out_, "# note: %s\n", note.c_str());
  std::fprintf(out_, "#\n");
  std::fprintf(out_, kHeaderFormat, "op", "place", "dtype", "redop", "root", "size", "count", "time", "p99", "noise",
               "algbw", "busbw", "theo_bus", "eff", "#wrong", "thr");
  std::fprintf(out_, kHeaderFormat, "", "", "", "", "", "(B)", "(elements)", "(us)", "(us)", "(%)", "(GB/s)", "(GB/s)",
               "(GB/s)", "(%)", "", "");
  std::fflush(out_);
}

void ConsoleReporter::add_row(const ResultRow& r) {
  const OpCase& c = r.op_case;
  const std::string redop = c.redop == ReduceOp::none ? "-" : std::string(name_of(c.redop));
  const std::string root = c.root < 0 ? "-" : std::to_string(c.root);
  const std::string wrong = r.wrong ? std::to_string(*r.wrong) : "N/A";
  // FAIL in capitals: it is the word a reader scanning a long table must not miss.
  const char* verdict = !r.threshold_passed ? "-" : *r.threshold_passed ? "pass" : "FAIL";
  const std::optional<double> noise_pct = r.noise ? std::optional<double>(*r.noise * 100.0) : std::nullopt;
  const std::optional<double> efficiency_pct =
      r.efficiency ? std::optional<double>(*r.efficiency * 100.0) : std::nullopt;
  std::fprintf(out_, kRowFormat, std::string(name_of(c.op)).c_str(), std::string(name_of(c.placement)).c_str(),
               std::string(name_of(c.dtype)).c_str(), redop.c_str(), root.c_str(),
               static_cast<unsigned long long>(c.shape.bytes), static_cast<unsigned long long>(c.shape.count),
               r.time_us, r.p99_us, optional_number(noise_pct, "%.2f").c_str(), r.algbw_gbps, r.busbw_gbps,
               optional_number(r.theoretical_busbw_gbps, "%.3f").c_str(),
               optional_number(efficiency_pct, "%.1f").c_str(), wrong.c_str(), verdict);
  std::fflush(out_);
}

void ConsoleReporter::finish(const RunSummary& s) {
  std::fprintf(out_, "#\n# rows: %zu  wrong elements: %llu  complete: %s\n", s.rows,
               static_cast<unsigned long long>(s.wrong_elements), s.complete ? "yes" : "no");
  std::fprintf(out_, "# Avg bus bandwidth    : %.6g GB/s\n", s.average_busbw_gbps);
  for (const std::string& failure : s.check_failures) std::fprintf(out_, "# check failed: %s\n", failure.c_str());
  if (s.threshold_rows > 0 || !s.threshold_failures.empty())
    std::fprintf(out_, "# thresholds: %zu row%s checked, %zu rule failure%s\n", s.threshold_rows,
                 s.threshold_rows == 1 ? "" : "s", s.threshold_failures.size(), s.threshold_failures.size() == 1 ? "" : "s");
  for (const std::string& failure : s.threshold_failures)
    std::fprintf(out_, "# threshold failed: %s\n", failure.c_str());
  std::fflush(out_);
}

}  // namespace commbench
