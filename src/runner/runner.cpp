#include "commbench/runner/runner.hpp"

#include <map>
#include <optional>
#include <string>

#include <fmt/format.h>

#include "commbench/core/error.hpp"
#include "commbench/runner/collective_workload.hpp"

namespace commbench {
namespace {

MeasurementSettings measurement_settings(const RunnerSettings& settings) {
  MeasurementSettings measurement;
  measurement.warmup_iterations = settings.warmup_iterations;
  measurement.check = settings.check;
  measurement.target_batch_seconds = settings.target_batch_seconds;
  return measurement;
}

// "algo RING 12, TREE 4; channels 16 12, 24 4": every field that varied, with its counts.
std::string split_text(const NcclChoiceSummary& s) {
  std::string text;
  const auto add = [&](const char* field, const std::map<std::string, std::uint64_t>& split) {
    if (split.size() < 2) return;
    std::string values;
    for (const auto& [value, count] : split) values += fmt::format("{}{} {}", values.empty() ? "" : ", ", value, count);
    text += fmt::format("{}{} {}", text.empty() ? "" : "; ", field, values);
  };
  add("algo", s.algo_split);
  add("proto", s.proto_split);
  add("channels", s.channels_split);
  add("warps", s.warps_split);
  return text;
}

}  // namespace

void fill_measured_fields(const Measurement& measurement, ResultRow& row) {
  row.iterations = measurement.iterations;
  row.samples = measurement.samples;
  row.time_us = measurement.slowest_seconds * 1e6;
  row.time_min_us = measurement.fastest_seconds * 1e6;
  row.time_mean_us = measurement.mean_seconds * 1e6;
  row.p50_us = measurement.p50_seconds * 1e6;
  row.p99_us = measurement.p99_seconds * 1e6;
  row.noise = measurement.noise;
  row.slowest_rank = measurement.slowest_rank;
  row.slowest_host = measurement.slowest_host;
  row.stop_reason = measurement.stop_reason;
  row.wrong = measurement.wrong;
}

void fill_library_choices(const NcclChoiceSummary& choices, ResultRow& row) {
  if (choices.launches == 0) return;
  row.nccl_algo = choices.algo;
  row.nccl_proto = choices.proto;
  row.nccl_channels = choices.channels;
  row.nccl_split = split_text(choices);
}

Runner::Runner(Backend& backend, RunnerSettings settings, Watchdog* watchdog)
    : backend_(backend),
      settings_(settings),
      watchdog_(watchdog),
      criterion_(make_stopping_criterion(settings.stopping)),
      loop_(backend.group(), *criterion_, measurement_settings(settings), watchdog),
      buffers_(backend) {}

void Runner::prepare(std::span<const OpCase> plan) {
  // Allocation is collective (every rank learns whether every rank got its memory): a
  // rank that never arrives must end in the watchdog's report, not in a silent wait.
  std::optional<Watchdog::Guard> guard;
  if (watchdog_ != nullptr) guard.emplace(watchdog_->guard("allocating the buffers"));
  buffers_.allocate_for(plan);
}

ResultRow Runner::run(const OpCase& c) {
  if (!buffers_.allocated()) throw BackendError("Runner::run called before prepare()");
  CollectiveWorkload workload(backend_, buffers_, c, settings_.corrupt_rank);
  CaptureSwitch capture;
  if (settings_.profile_range && !backend_.capture_range_unavailable() &&
      workload.describe().find(*settings_.profile_range) != std::string::npos)
    capture = [this](bool start) { backend_.set_capture_range(start); };
  const Measurement measurement = loop_.measure(workload, capture);
  if (measurement.check_failure) check_failures_.push_back(*measurement.check_failure);

  ResultRow row;
  row.backend = backend_.name();
  row.op_case = c;
  row.ranks = backend_.ranks();
  row.nodes = backend_.group().node_count();
  fill_measured_fields(measurement, row);
  row.algbw_gbps = algorithm_bandwidth_gbps(c.shape.bytes, measurement.slowest_seconds);
  row.busbw_gbps = row.algbw_gbps * bus_bandwidth_factor(c.op, backend_.ranks());
  fill_library_choices(backend_.take_library_choices(), row);
  return row;
}

}  // namespace commbench
