#include "commbench/pattern/schedule_file.hpp"

#include <algorithm>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <string_view>
#include <type_traits>

#include <fmt/format.h>

#include "commbench/core/error.hpp"
#include "commbench/core/input_file.hpp"

namespace commbench {

namespace {

// One line's error: "--schedule FILE: line N: what".
class LineError {
 public:
  LineError(const std::string& path, std::size_t line) : path_(path), line_(line) {}
  [[noreturn]] void operator()(std::string_view what) const {
    throw UsageError(fmt::format("--schedule {}: line {}: {}", path_, line_, what));
  }

 private:
  const std::string& path_;
  std::size_t line_;
};

// Whether `value` holds a `Value` exactly: an integer in range for integers (a float such
// as 1e300 is no step number), any number for doubles, a string for strings.
template <typename Value>
bool holds(const nlohmann::json& value) {
  if constexpr (std::is_same_v<Value, std::string>) {
    return value.is_string();
  } else if constexpr (std::is_floating_point_v<Value>) {
    return value.is_number();
  } else if constexpr (std::is_unsigned_v<Value>) {
    return value.is_number_unsigned() && value.get<std::uint64_t>() <= std::numeric_limits<Value>::max();
  } else {
    if (!value.is_number_integer()) return false;
    const auto number = value.get<std::int64_t>();
    return number >= std::numeric_limits<Value>::min() && number <= std::numeric_limits<Value>::max();
  }
}

template <typename Value>
Value member(const nlohmann::json& line, const char* key, const LineError& fail) {
  const auto at = line.find(key);
  if (at == line.end()) fail(fmt::format("no \"{}\"", key));
  if (!holds<Value>(*at)) fail(fmt::format("\"{}\" is {}", key, at->dump()));
  return at->get<Value>();
}

// An array of `Value`s, each checked as member() checks one.
template <typename Value>
std::vector<Value> array_member(const nlohmann::json& line, const char* key, const LineError& fail) {
  const auto at = line.find(key);
  if (at == line.end()) fail(fmt::format("no \"{}\"", key));
  if (!at->is_array()) fail(fmt::format("\"{}\" is {}", key, at->dump()));
  std::vector<Value> values;
  for (const nlohmann::json& value : *at) {
    if (!holds<Value>(value)) fail(fmt::format("\"{}\" holds {}", key, value.dump()));
    values.push_back(value.get<Value>());
  }
  return values;
}

// A member that may be left out, with its default.
template <typename Value>
Value optional_member(const nlohmann::json& line, const char* key, Value otherwise, const LineError& fail) {
  return line.contains(key) ? member<Value>(line, key, fail) : otherwise;
}

template <typename Value, std::size_t N>
Value named(const std::array<std::string_view, N>& names, std::string_view text, const char* key,
            const LineError& fail) {
  for (std::size_t i = 0; i < N; ++i)
    if (names[i] == text) return static_cast<Value>(i);
  fail(fmt::format("\"{}\": unknown {} '{}'", key, key, text));
}

// A name the layer's own table reads (group_role_named, step_phase_named).
template <typename Value>
Value named(std::optional<Value> (*value_named)(std::string_view), std::string_view text, const char* key,
            const LineError& fail) {
  if (const std::optional<Value> value = value_named(text)) return *value;
  fail(fmt::format("\"{}\": unknown {} '{}'", key, key, text));
}

constexpr std::array<std::string_view, 3> kKinds = {"collective", "peer", "compute"};

// A flag parser's UsageError ("op: ...") as this line's error.
template <typename Parse>
auto parsed(const LineError& fail, Parse parse) {
  try {
    return parse();
  } catch (const UsageError& e) {
    fail(e.what());
  }
}

void read_communication(const nlohmann::json& line, ScheduleStep& step, RankSchedule& schedule, const LineError& fail) {
  step.group = named<GroupRole>(group_role_named, member<std::string>(line, "group", fail), "group", fail);
  step.dtype = parsed(fail, [&] { return parse_data_type(member<std::string>(line, "dtype", fail), "dtype"); });
  if (step.kind == StepKind::peer) {
    PlannedPeerRound round;
    round.group = step.group;
    round.message_bytes = step.bytes;
    const auto at = line.find("transfers");
    if (at == line.end() || !at->is_array()) fail("\"transfers\": a list of [source, destination]");
    for (const nlohmann::json& pair : *at) {
      if (!pair.is_array() || pair.size() != 2 || !holds<int>(pair[0]) || !holds<int>(pair[1]))
        fail("\"transfers\": each is [source, destination]");
      round.transfers.emplace_back(pair[0].get<int>(), pair[1].get<int>());
    }
    step.peer_round = member<std::size_t>(line, "round", fail);
    if (step.peer_round > schedule.peer_rounds.size()) fail("\"round\": rounds must be listed in order");
    if (step.peer_round == schedule.peer_rounds.size()) schedule.peer_rounds.push_back(std::move(round));
    return;
  }
  step.op = parsed(fail, [&] { return parse_collective(member<std::string>(line, "op", fail), "op"); });
  if (step.op == Collective::sendrecv) fail("\"op\": sendrecv is a peer step");
  if (line.contains("redop"))
    step.redop = parsed(fail, [&] { return parse_reduce_op(member<std::string>(line, "redop", fail), "redop"); });
  if (step.op == Collective::alltoallv)
    step.distribution = parsed(
        fail, [&] { return parse_peer_distribution(member<std::string>(line, "distribution", fail), "distribution"); });
}

struct RankBeingRead {
  RankSchedule schedule;
  std::map<std::size_t, std::size_t> index_of;  // the file's "step" -> the index here
  std::size_t last_step = 0;
};

void add_line(const nlohmann::json& line, std::map<int, RankBeingRead>& ranks, std::size_t& dropped,
              const LineError& fail) {
  if (!line.is_object()) fail("not a JSON object");
  const int rank = member<int>(line, "rank", fail);
  if (rank < 0) fail("\"rank\" is negative");
  RankBeingRead& reading = ranks[rank];
  reading.schedule.world_rank = rank;
  const std::size_t number = member<std::size_t>(line, "step", fail);
  if (!reading.index_of.empty() && number <= reading.last_step)
    fail(fmt::format("step {} of rank {} after step {}: steps are listed in order", number, rank, reading.last_step));
  ScheduleStep step;
  step.kind = named<StepKind>(kKinds, member<std::string>(line, "kind", fail), "kind", fail);
  step.bytes = member<std::uint64_t>(line, "bytes", fail);
  // Past these a step is no training step's: refused rather than allocated or waited on.
  constexpr std::uint64_t kMostBytes = std::uint64_t{1} << 40;
  constexpr double kMostSeconds = 3600;
  if (step.bytes > kMostBytes) fail(fmt::format("\"bytes\" {} is more than 1 TiB", step.bytes));
  step.stream = member<std::string>(line, "stream", fail);
  step.phase = named<StepPhase>(step_phase_named, member<std::string>(line, "phase", fail), "phase", fail);
  step.label = optional_member<std::string>(line, "label", "", fail);
  step.layer = optional_member<int>(line, "layer", -1, fail);
  step.micro_batch = optional_member<int>(line, "micro_batch", -1, fail);
  if (step.kind == StepKind::compute) {
    step.compute_seconds = member<double>(line, "seconds", fail);
    if (!(step.compute_seconds >= 0 && step.compute_seconds <= kMostSeconds))
      fail(fmt::format("\"seconds\" {} is not between 0 and an hour", step.compute_seconds));
  } else {
    read_communication(line, step, reading.schedule, fail);
  }
  for (const std::size_t wait : array_member<std::size_t>(line, "waits_for", fail)) {
    if (wait >= number) fail(fmt::format("step {} waits for step {}, not an earlier one", number, wait));
    const auto at = reading.index_of.find(wait);
    if (at == reading.index_of.end()) {
      ++dropped;  // a compute step the dump left out
      continue;
    }
    step.waits_for.push_back(at->second);
  }
  reading.index_of[number] = reading.schedule.steps.size();
  reading.last_step = number;
  reading.schedule.steps.push_back(std::move(step));
}

}  // namespace

RankSchedule ScheduleFile::for_rank(int world_rank, int world_ranks) const {
  if (!one_for_all() && static_cast<int>(ranks.size()) != world_ranks)
    throw UsageError(
        fmt::format("--schedule {}: holds {} ranks' schedules, the job has {} ranks (a file of one "
                    "rank's stands for every rank)",
                    path, ranks.size(), world_ranks));
  RankSchedule schedule = ranks[one_for_all() ? 0 : static_cast<std::size_t>(world_rank)];
  schedule.world_rank = world_rank;
  return schedule;
}

void check_groups_line_up(const ScheduleFile& file, const ParallelLayout& layout) {
  if (file.one_for_all()) return;  // every rank lists the same steps
  const auto calls_on = [&](int rank, GroupRole role) {
    std::vector<const ScheduleStep*> calls;
    for (const ScheduleStep& step : file.ranks[static_cast<std::size_t>(rank)].steps)
      if (step.kind == StepKind::collective && step.group == role) calls.push_back(&step);
    return calls;
  };
  for (std::size_t index = 0; index < kGroupRoleCount; ++index) {
    const auto role = static_cast<GroupRole>(index);
    for (int rank = 0; rank < layout.ranks(); ++rank) {
      const int first = layout.members(role, rank).front();
      if (first == rank) continue;
      const auto mine = calls_on(rank, role);
      const auto theirs = calls_on(first, role);
      for (std::size_t call = 0; call < std::max(mine.size(), theirs.size()); ++call) {
        const bool alike = call < mine.size() && call < theirs.size() && mine[call]->op == theirs[call]->op &&
                           mine[call]->bytes == theirs[call]->bytes && mine[call]->dtype == theirs[call]->dtype;
        if (!alike)
          throw UsageError(
              fmt::format("--schedule {}: rank {} and rank {} part at their collective {} on the {} "
                          "group ({} and {} calls there); run, they would wait for each other forever",
                          file.path, rank, first, call + 1, name_of(role), mine.size(), theirs.size()));
      }
    }
  }
}

std::shared_ptr<const ScheduleFile> read_schedule_file(const std::string& path) {
  return parse_schedule_lines(read_input_file(path, "--schedule " + path), path);
}

std::shared_ptr<const ScheduleFile> parse_schedule_lines(const std::string& text, const std::string& path) {
  std::map<int, RankBeingRead> ranks;
  auto file = std::make_shared<ScheduleFile>();
  file->path = path;
  std::size_t start = 0, number = 0;
  while (start < text.size()) {
    std::size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    const std::string_view line(text.data() + start, end - start);
    ++number;
    start = end + 1;
    if (line.find_first_not_of(" \t\r") == std::string_view::npos) continue;
    const LineError fail(path, number);
    nlohmann::json parsed_line;
    try {
      parsed_line = nlohmann::json::parse(line);
    } catch (const nlohmann::json::exception&) {
      fail("not a JSON line of --dump-schedule's format");
    }
    add_line(parsed_line, ranks, file->dropped_waits, fail);
  }
  if (ranks.empty()) throw UsageError(fmt::format("--schedule {}: no step in the file", path));
  int expected = 0;
  for (auto& [rank, reading] : ranks) {
    if (rank != expected)
      throw UsageError(fmt::format("--schedule {}: rank {} is missing (the ranks must be 0 to {})", path, expected,
                                   ranks.size() - 1));
    ++expected;
    file->ranks.push_back(std::move(reading.schedule));
  }
  return file;
}

}  // namespace commbench
