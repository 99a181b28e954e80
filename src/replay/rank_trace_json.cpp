#include "commbench/replay/rank_trace_json.hpp"

#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>
#include <type_traits>
#include <vector>

#include <fmt/format.h>

#include "commbench/core/error.hpp"

namespace commbench {

namespace {

// Each struct's members are named once, in one list per struct, for writing and reading
// alike: a member cannot be written and forgotten by the reader.
template <typename Self, typename Visit>
requires std::same_as<std::remove_const_t<Self>, TracedCollective>
void members(Self& call, Visit& visit) {
  visit("op", call.op);
  visit("collective", call.collective);
  visit("dtype", call.dtype);
  visit("bytes", call.bytes);
  visit("bytes_known", call.bytes_known);
  visit("group_ranks", call.group_ranks);
  visit("issued_us", call.issued_us);
  visit("thread", call.thread);
  visit("sequence", call.sequence);
  visit("process_group", call.process_group);
  visit("start_us", call.start_us);
  visit("end_us", call.end_us);
  visit("step", call.step);
  visit("name", call.name);
  visit("nccl_algo", call.nccl_algo);
  visit("nccl_proto", call.nccl_proto);
  visit("timed_by_backend", call.timed_by_backend);
  visit("run_us", call.run_us);
}

template <typename Self, typename Visit>
requires std::same_as<std::remove_const_t<Self>, StepWindow>
void members(Self& step, Visit& visit) {
  visit("number", step.number);
  visit("start_us", step.start_us);
  visit("end_us", step.end_us);
}

template <typename Self, typename Visit>
requires std::same_as<std::remove_const_t<Self>, RankTrace>
void members(Self& trace, Visit& visit) {
  visit("path", trace.path);
  visit("rank", trace.rank);
  visit("world_size", trace.world_size);
  visit("backend", trace.backend);
  visit("host", trace.host);
  visit("epoch_offset_us", trace.epoch_offset_us);
  visit("collectives", trace.collectives);
  visit("steps", trace.steps);
  visit("call_times_only", trace.call_times_only);
  visit("exposed_seconds", trace.exposed_seconds);
  visit("exposed_on_the_training_thread", trace.exposed_on_the_training_thread);
  visit("backend_busy_us", trace.backend_busy_us);
  visit("unclaimed_runs", trace.unclaimed_runs);
  visit("unclaimed_seconds", trace.unclaimed_seconds);
  visit("pairing", trace.pairing);
}

template <typename T>
constexpr bool is_optional = false;
template <typename T>
constexpr bool is_optional<std::optional<T>> = true;
template <typename T>
constexpr bool is_vector = false;
template <typename T>
constexpr bool is_vector<std::vector<T>> = true;

template <typename T>
nlohmann::json written(const T& value);

struct Writer {
  nlohmann::json out = nlohmann::json::object();
  template <typename T>
  void operator()(const char* name, const T& member) {
    out[name] = written(member);
  }
};

template <typename T>
nlohmann::json written(const T& value) {
  if constexpr (requires(Writer & writer) { members(value, writer); }) {
    Writer writer;
    members(value, writer);
    return std::move(writer.out);
  } else if constexpr (is_optional<T>) {
    return value ? written(*value) : nlohmann::json(nullptr);
  } else if constexpr (is_vector<T>) {
    nlohmann::json list = nlohmann::json::array();
    for (const auto& item : value) list.push_back(written(item));
    return list;
  } else if constexpr (std::is_same_v<T, Collective>) {
    return std::string(name_of(value));
  } else if constexpr (std::is_floating_point_v<T>) {
    // JSON has no NaN or infinity (nlohmann would write null): they are sent as text.
    if (std::isnan(value)) return "nan";
    if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
    return value;
  } else {
    return value;
  }
}

template <typename T>
void read_into(const nlohmann::json& in, T& value);

struct Reader {
  const nlohmann::json* in = nullptr;
  template <typename T>
  void operator()(const char* name, T& member) {
    read_into(in->at(name), member);
  }
};

template <typename T>
void read_into(const nlohmann::json& in, T& value) {
  if constexpr (requires(Reader & reader) { members(value, reader); }) {
    Reader reader{&in};
    members(value, reader);
  } else if constexpr (is_optional<T>) {
    value.reset();
    if (in.is_null()) return;
    typename T::value_type inner{};
    read_into(in, inner);
    value = std::move(inner);
  } else if constexpr (is_vector<T>) {
    value.clear();
    for (const nlohmann::json& item : in.get_ref<const nlohmann::json::array_t&>()) {
      typename T::value_type element{};
      read_into(item, element);
      value.push_back(std::move(element));
    }
  } else if constexpr (std::is_same_v<T, Collective>) {
    value = parse_collective(in.get_ref<const std::string&>(), "collective");
  } else if constexpr (std::is_floating_point_v<T>) {
    if (!in.is_string()) {
      value = in.get<T>();
      return;
    }
    const std::string& text = in.get_ref<const std::string&>();
    if (text != "nan" && text != "inf" && text != "-inf") throw UsageError(fmt::format("'{}' is not a number", text));
    value = text == "nan" ? std::numeric_limits<T>::quiet_NaN()
                          : (text == "inf" ? 1 : -1) * std::numeric_limits<T>::infinity();
  } else {
    value = in.get<T>();
  }
}

}  // namespace

std::string rank_trace_json(const RankTrace& trace) { return written(trace).dump(); }

RankTrace rank_trace_from_json(std::string_view text, const std::string& where) {
  RankTrace trace;
  try {
    read_into(nlohmann::json::parse(text), trace);
  } catch (const nlohmann::json::exception& e) {
    throw UsageError(fmt::format("{}: not a rank's reading ({})", where, e.what()));
  } catch (const UsageError& e) {  // a number or collective of another name
    throw UsageError(fmt::format("{}: not a rank's reading ({})", where, e.what()));
  }
  return trace;
}

}  // namespace commbench
