#include "commbench/cli/validate_soak.hpp"

#include <chrono>
#include <cstdio>
#include <optional>
#include <vector>

#include <fmt/format.h>

#include "commbench/core/number_text.hpp"
#include "commbench/validate/soak_report.hpp"

namespace commbench {
namespace {

constexpr double kProgressSeconds = 60;

double unix_now() { return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count(); }

// A line a minute, so a user tailing a long soak's log sees it alive and what it reads.
class SoakProgress {
 public:
  explicit SoakProgress(const std::vector<std::string>& names) : names_(names) {}
  void add(const SoakInterval& interval) {
    for (const SoakReading& reading : interval.readings)
      if (!lowest_ || reading.gbps < lowest_->gbps) lowest_ = reading;
    intervals_ += 1;
    if (interval.end_s < next_print_) return;
    next_print_ = interval.end_s + kProgressSeconds;
    if (!lowest_) return;
    fmt::print("# soak {} s: {} intervals; lowest so far {} GB/s ({} - {}, at {} s)\n", fixed_text(interval.end_s, 0),
               intervals_, significant_text(lowest_->gbps, 3), names_[static_cast<std::size_t>(lowest_->first)],
               names_[static_cast<std::size_t>(lowest_->second)], fixed_text(lowest_->start_s, 1));
    std::fflush(stdout);
  }

 private:
  const std::vector<std::string>& names_;
  std::optional<SoakReading> lowest_;
  int intervals_ = 0;
  double next_print_ = kProgressSeconds;
};

std::vector<std::string> names_of(ClusterProbe& probe) {
  std::vector<std::string> names;
  for (int node = 0; node < probe.nodes(); ++node) names.push_back(probe.node_name(node));
  return names;
}

}  // namespace

int run_soak_in_job(JobSession& session, ClusterProbe& probe, RunContext context, const SoakSettings& settings) {
  const std::vector<std::string> names = names_of(probe);
  context.record_kind = "interval";
  context.mixed_record_kinds = {"interval", "event"};
  session.begin_results(context);
  if (session.reporting()) {
    fmt::print("# soak: {} s, one pair round at least every {} s\n", significant_text(settings.duration_s, 6),
               significant_text(settings.interval_s, 3));
    std::fflush(stdout);
  }
  const double started_unix = unix_now() - probe.elapsed_seconds();
  SoakProgress progress(names);
  const SoakOutcome outcome = run_soak(probe, settings, [&](const SoakInterval& interval) {
    for (const Record& record : soak_interval_records(interval, names)) session.add_record(record);
    if (session.reporting()) progress.add(interval);
  });
  for (const Record& record : soak_event_records(outcome, started_unix)) session.add_record(record);
  if (session.reporting()) {
    fmt::print("{}", soak_summary(outcome, settings, started_unix));
    std::fflush(stdout);
  }
  RunSummary summary;
  summary.complete = outcome.complete;
  summary.exit_code = soak_exit_code(outcome);
  const nlohmann::ordered_json sections = soak_json(outcome, settings, started_unix);
  for (const auto& [key, value] : sections.items()) summary.sections.emplace_back(key, value);
  session.finish_results(summary);
  return summary.exit_code;
}

int run_simulated_soak(ClusterProbe& cluster, const SoakSettings& settings, const std::string& header,
                       RunContext context, const OutputRequest& files) {
  const std::vector<std::string> names = names_of(cluster);
  context.record_kind = "interval";
  context.mixed_record_kinds = {"interval", "event"};
  ReporterSet reporters = ReporterSet::open(files);
  reporters.begin(context);
  const double started_unix = unix_now();
  const SoakOutcome outcome = run_soak(cluster, settings, [&](const SoakInterval& interval) {
    for (const Record& record : soak_interval_records(interval, names)) reporters.add_record(record);
  });
  for (const Record& record : soak_event_records(outcome, started_unix)) reporters.add_record(record);
  fmt::print("{}{}", header, soak_summary(outcome, settings, started_unix));
  std::fflush(stdout);
  RunSummary summary;
  summary.complete = outcome.complete;
  summary.exit_code = soak_exit_code(outcome);
  const nlohmann::ordered_json sections = soak_json(outcome, settings, started_unix);
  for (const auto& [key, value] : sections.items()) summary.sections.emplace_back(key, value);
  reporters.finish(summary);
  return summary.exit_code;
}

}  // namespace commbench
