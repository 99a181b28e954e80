#include "commbench/replay/pytorch_trace_reader.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <map>
#include <optional>
#include <string_view>

#include <fmt/format.h>

#include "commbench/core/error.hpp"
#include "json_event_stream.hpp"
#include "pytorch_comm_events.hpp"

namespace commbench {

namespace {

using nlohmann::json;

// The size every process group of the job shares; 0 when they differ (a trace from
// gloo does not say which group an operator ran on).
int common_group_size(const json& info) {
  const json* groups = info.contains("pg_config") ? &info["pg_config"] : nullptr;
  if (groups == nullptr || !groups->is_array() || groups->empty()) return 0;
  int size = -1;
  for (const json& group : *groups) {
    const int this_size =
        group.contains("pg_size") && group["pg_size"].is_number_integer() ? group["pg_size"].get<int>() : 0;
    if (size >= 0 && this_size != size) return 0;
    size = this_size;
  }
  return std::max(size, 0);
}

// The raw text of an event's first string member `key` ("\"name\""), escapes left as they
// are: enough to tell the events worth parsing by their names' beginnings. Torch writes an
// event's own members before its args.
std::string_view raw_string_member(std::string_view text, std::string_view key) {
  std::size_t at = text.find(key);
  if (at == std::string_view::npos) return {};
  at = text.find_first_not_of(" \t\r\n:", at + key.size());
  if (at == std::string_view::npos || text[at] != '"') return {};
  const std::size_t end = text.find('"', at + 1);
  return end == std::string_view::npos ? std::string_view{} : text.substr(at + 1, end - at - 1);
}

// The number of an event's first member `key` in its raw text; none when it is no number.
std::optional<double> raw_number_member(std::string_view text, std::string_view key) {
  std::size_t at = text.find(key);
  if (at == std::string_view::npos) return std::nullopt;
  at = text.find_first_not_of(" \t\r\n", at + key.size());
  if (at == std::string_view::npos || text[at] != ':') return std::nullopt;  // a key, not a value
  at = text.find_first_not_of(" \t\r\n", at + 1);
  if (at == std::string_view::npos) return std::nullopt;
  double value = 0;
  const auto [end, error] = std::from_chars(text.data() + at, text.data() + text.size(), value);
  if (error != std::errc() || !std::isfinite(value)) return std::nullopt;
  return value;
}

// An aten:: operator's thread and times, read from its raw text: a trace holds millions of
// them, and a parse of each would cost most of the read.
void add_cpu_operator(std::string_view text, PytorchCommEvents& events) {
  const std::optional<double> tid = raw_number_member(text, "\"tid\"");
  const std::optional<double> ts = raw_number_member(text, "\"ts\"");
  const std::optional<double> dur = raw_number_member(text, "\"dur\"");
  if (tid && ts && dur && *dur >= 0) events.add_cpu_operator(static_cast<std::int64_t>(*tid), *ts, *ts + *dur);
}

// A CPU launch of a kernel (cudaLaunchKernel, cudaLaunchKernelExC, cuLaunchKernelEx...), read
// from its raw text: a trace holds one per kernel, and only its ids and time are wanted.
void add_launch(std::string_view text, PytorchCommEvents& events) {
  const std::optional<double> correlation = raw_number_member(text, "\"correlation\"");
  const std::optional<double> tid = raw_number_member(text, "\"tid\"");
  const std::optional<double> ts = raw_number_member(text, "\"ts\"");
  if (correlation && tid && ts)
    events.add_launch({static_cast<std::int64_t>(*correlation), static_cast<std::int64_t>(*tid), *ts});
}

// A kernel other than NCCL's, read from its raw text when its name and times are plain: a
// GPU trace holds one per kernel the model runs, and only its times are wanted. False when
// the event needs the parse (an NCCL kernel, an escape in its name, no plain times, not
// a complete event).
bool add_compute_kernel(std::string_view text, std::string_view name, PytorchCommEvents& events) {
  if (name.find('\\') != std::string_view::npos || name.substr(0, 4) == "nccl") return false;
  if (raw_string_member(text, "\"ph\"") != "X") return false;
  const std::optional<double> ts = raw_number_member(text, "\"ts\"");
  const std::optional<double> dur = raw_number_member(text, "\"dur\"");
  // Times the parse would refuse or read otherwise go to it.
  if (!ts || !dur || std::fabs(*ts) >= 1e18 || std::fabs(*dur) >= 1e18) return false;
  events.add_compute_kernel(*ts, *ts + *dur);
  return true;
}

int integer_member(const json& object, const char* key, const std::string& path) {
  if (!object.contains(key) || !object[key].is_number_integer())
    throw UsageError(fmt::format("{}: distributedInfo has no whole number '{}'", path, key));
  return object[key].get<int>();
}

}  // namespace

RankTrace read_pytorch_trace(const std::string& path) {
  PytorchCommEvents events;
  // Only the events that can be communication or a step are parsed: most of a trace is
  // the model's own operators.
  const auto wanted = [&events](std::string_view text) {
    const std::string_view name = raw_string_member(text, "\"name\"");
    if (name.substr(0, 6) == "aten::") {
      if (raw_string_member(text, "\"cat\"") == "cpu_op") add_cpu_operator(text, events);
      return false;
    }
    for (const std::string_view prefix : {"c10d::", "gloo:", "nccl:", "ProfilerStep#", "record_param_comms"})
      if (name.substr(0, prefix.size()) == prefix) return true;
    const std::string_view category = raw_string_member(text, "\"cat\"");
    if ((category == "cuda_runtime" || category == "cuda_driver") && name.find("Launch") != std::string_view::npos) {
      add_launch(text, events);
      return false;
    }
    // NCCL's kernels are parsed; the compute around them only when its raw text is not plain.
    return category == "kernel" && !add_compute_kernel(text, name, events);
  };

  StreamedTrace streamed;
  try {
    streamed = stream_trace_events(path, wanted, [&](const json& event) { events.add(event); });
  } catch (const MalformedEvent& e) {
    throw UsageError(fmt::format("{}: not a trace torch.profiler wrote: {}", path, e.what()));
  }
  if (streamed.not_an_object)
    throw NotATrace(fmt::format("{}: not a Chrome trace (its JSON is not an object with a traceEvents array)", path));
  if (!streamed.had_events) throw NotATrace(fmt::format("{}: not a Chrome trace (no traceEvents array)", path));
  const auto info = streamed.members.find("distributedInfo");
  if (info == streamed.members.end() || !info->second.is_object())
    throw UsageError(fmt::format("{}: no distributedInfo: not the trace of a torch.distributed job's rank", path));
  RankTrace trace;
  trace.path = path;
  trace.rank = integer_member(info->second, "rank", path);
  trace.world_size = integer_member(info->second, "world_size", path);
  if (trace.world_size < 1 || trace.rank < 0 || trace.rank >= trace.world_size)
    throw UsageError(fmt::format("{}: distributedInfo says rank {} of {}", path, trace.rank, trace.world_size));
  if (info->second.contains("backend") && info->second["backend"].is_string())
    trace.backend = info->second["backend"].get<std::string>();
  const auto host = streamed.members.find("host_name");
  if (host != streamed.members.end() && host->second.is_string()) trace.host = host->second.get<std::string>();
  const auto base = streamed.members.find("baseTimeNanoseconds");
  if (base != streamed.members.end() && base->second.is_number())
    trace.epoch_offset_us = base->second.get<double>() * 1e-3;
  trace.steps = events.steps();
  TracedCommunication communication = events.traced_communication(common_group_size(info->second));
  trace.collectives = std::move(communication.collectives);
  trace.backend_busy_us = std::move(communication.backend_busy_us);
  trace.unclaimed_runs = communication.unclaimed_runs;
  trace.unclaimed_seconds = communication.unclaimed_seconds;
  trace.pairing = std::move(communication.pairing);
  trace.exposed_seconds = events.exposed_seconds();
  trace.exposed_on_the_training_thread = trace.exposed_seconds && events.exposed_on_the_training_thread();
  if (trace.collectives.empty())
    throw UsageError(fmt::format("{}: no communication in the trace of rank {} ({} events read)", path, trace.rank,
                                 streamed.events));
  return trace;
}

}  // namespace commbench
