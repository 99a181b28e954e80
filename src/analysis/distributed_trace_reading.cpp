#include "commbench/analysis/distributed_trace_reading.hpp"

#include <algorithm>
#include <chrono>
#include <concepts>
#include <ctime>
#include <filesystem>
#include <numeric>
#include <string>
#include <type_traits>

#include "commbench/backend/typed_exchange.hpp"
#include "commbench/core/error.hpp"
#include "commbench/replay/rank_trace_json.hpp"

namespace commbench {

// Found by argument-dependent lookup in ReadingShare's own namespace (typed_exchange.hpp).
template <typename Self, typename Visit>
requires std::same_as<std::remove_const_t<Self>, ReadingShare>
void fields(Self& share, Visit& v) {
  v("rank", share.rank);
  v("files", share.files);
  v("bytes", share.bytes);
  v("seconds", share.seconds);
  v("cpu_seconds", share.cpu_seconds);
}

namespace {

constexpr int kReportingRank = 0;

// How a step on one rank ended: exit_code 0, or the error it threw.
struct StepEnd {
  int exit_code = 0;
  std::string error;
};

template <typename Self, typename Visit>
requires std::same_as<std::remove_const_t<Self>, StepEnd>
void fields(Self& end, Visit& v) {
  v("exit_code", end.exit_code);
  v("error", end.error);
}

// A file of the reporting rank's listing and the rank that reads it.
struct PlannedFile {
  std::string path;
  bool in_folder = false;
  std::uint64_t bytes = 0;
  int reader = 0;
};

template <typename Self, typename Visit>
requires std::same_as<std::remove_const_t<Self>, PlannedFile>
void fields(Self& file, Visit& v) {
  v("path", file.path);
  v("in_folder", file.in_folder);
  v("bytes", file.bytes);
  v("reader", file.reader);
}

// What the reporting rank decided: the files, who reads which, or that it reads alone.
struct ReadingPlan {
  StepEnd end;
  bool alone = false;  // Nsight Systems reports, a DeepSpeed log: read as one process reads them
  std::vector<std::string> notes;
  std::vector<PlannedFile> files;
};

template <typename Self, typename Visit>
requires std::same_as<std::remove_const_t<Self>, ReadingPlan>
void fields(Self& plan, Visit& v) {
  v("end", plan.end);
  v("alone", plan.alone);
  v("notes", plan.notes);
  v("files", plan.files);
}

// What one rank made of one of its files: a reading (rank_trace_json), a note (a file in a
// folder passed over), or the error the file gave.
struct FileOutcome {
  std::size_t file = 0;
  std::string trace;
  std::string note;
  StepEnd end;
};

template <typename Self, typename Visit>
requires std::same_as<std::remove_const_t<Self>, FileOutcome>
void fields(Self& outcome, Visit& v) {
  v("file", outcome.file);
  v("trace", outcome.trace);
  v("note", outcome.note);
  v("end", outcome.end);
}

StepEnd ended_by(const Error& e) { return {static_cast<int>(e.exit_code()), e.what()}; }

// The end every rank learnt of, as an error: the reporting rank says it, the others end quietly.
void end_every_rank_with(Bootstrap& world, const StepEnd& end) {
  if (end.exit_code == 0) return;
  if (world.rank() != kReportingRank) throw ReportedByAnotherRank(static_cast<ExitCode>(end.exit_code));
  Error error(static_cast<ExitCode>(end.exit_code), end.error);
  error.mark_agreed();
  throw error;
}

std::uint64_t size_or_zero(const std::string& path) {
  std::error_code error;
  const std::uintmax_t size = std::filesystem::file_size(path, error);
  return error ? 0 : static_cast<std::uint64_t>(size);  // its reading says what is wrong with it
}

// The reporting rank's listing of the files, and who reads which: every rank reads the
// files named as that rank listed them.
ReadingPlan reading_plan(const ReplayInputRequest& request, int ranks) {
  ReadingPlan plan;
  const std::vector<TraceFile> files = listed_trace_files(request.paths, plan.notes);
  plan.alone = request.ranks != 0 ||
               !std::all_of(files.begin(), files.end(), [](const TraceFile& file) { return is_trace_name(file.path); });
  if (plan.alone) return plan;
  std::vector<std::uint64_t> sizes;
  for (const TraceFile& file : files) sizes.push_back(size_or_zero(file.path));
  const std::vector<int> readers = readers_by_size(sizes, ranks);
  for (std::size_t i = 0; i < files.size(); ++i)
    plan.files.push_back({files[i].path, files[i].in_folder, sizes[i], readers[i]});
  return plan;
}

FileOutcome file_outcome(std::size_t index, const PlannedFile& planned) {
  FileOutcome outcome;
  outcome.file = index;
  try {
    if (std::optional<RankTrace> trace = read_listed_trace({planned.path, planned.in_folder}, outcome.note))
      outcome.trace = rank_trace_json(*trace);
  } catch (const Error& e) {
    outcome.end = ended_by(e);
  }
  return outcome;
}

// What one rank read: its files' outcomes and its share's figures.
struct RankReading {
  std::vector<FileOutcome> outcomes;
  ReadingShare share;
};

template <typename Self, typename Visit>
requires std::same_as<std::remove_const_t<Self>, RankReading>
void fields(Self& reading, Visit& v) {
  v("outcomes", reading.outcomes);
  v("share", reading.share);
}

RankReading read_my_share(int rank, const ReadingPlan& plan) {
  const auto started = std::chrono::steady_clock::now();
  const std::clock_t cpu_started = std::clock();
  RankReading mine;
  mine.share.rank = rank;
  for (std::size_t i = 0; i < plan.files.size(); ++i) {
    if (plan.files[i].reader != rank) continue;
    mine.outcomes.push_back(file_outcome(i, plan.files[i]));
    mine.share.files += 1;
    mine.share.bytes += plan.files[i].bytes;
  }
  mine.share.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  mine.share.cpu_seconds = static_cast<double>(std::clock() - cpu_started) / CLOCKS_PER_SEC;
  return mine;
}

// Every rank's outcomes, in the files' order, and the share that took longest.
std::vector<FileOutcome> gathered_outcomes(Bootstrap& world, const ReadingPlan& plan, ReadingShare& slowest) {
  std::vector<FileOutcome> outcomes(plan.files.size());
  for (RankReading& reading : all_gather_as(world, read_my_share(world.rank(), plan))) {
    if (reading.share.seconds > slowest.seconds) slowest = reading.share;
    for (FileOutcome& outcome : reading.outcomes) {
      const std::size_t file = outcome.file;
      outcomes[file] = std::move(outcome);
    }
  }
  return outcomes;
}

// Reports and logs are read as one process reads them; the others wait to hear how it went.
ReadInput read_alone(Bootstrap& world, const ReplayInputRequest& request) {
  ReadInput input;
  StepEnd end;
  if (world.rank() == kReportingRank) try {
      input = read_traces(request);
    } catch (const Error& e) {
      end = ended_by(e);
    }
  end_every_rank_with(world, broadcast_as(world, end, kReportingRank));
  return input;
}

}  // namespace

std::vector<int> readers_by_size(const std::vector<std::uint64_t>& sizes, int ranks) {
  std::vector<std::size_t> largest_first(sizes.size());
  std::iota(largest_first.begin(), largest_first.end(), std::size_t{0});
  std::stable_sort(largest_first.begin(), largest_first.end(),
                   [&](std::size_t a, std::size_t b) { return sizes[a] > sizes[b]; });
  std::vector<std::uint64_t> load(static_cast<std::size_t>(std::max(1, ranks)), 0);
  std::vector<int> readers(sizes.size(), 0);
  for (const std::size_t file : largest_first) {
    const auto least = std::min_element(load.begin(), load.end());
    *least += sizes[file];
    readers[file] = static_cast<int>(least - load.begin());
  }
  return readers;
}

DividedReading read_traces_over(Bootstrap& world, const ReplayInputRequest& request) {
  ReadingPlan plan;
  if (world.rank() == kReportingRank) try {
      plan = reading_plan(request, world.size());
    } catch (const Error& e) {
      plan.end = ended_by(e);
    }
  plan = broadcast_as(world, plan, kReportingRank);
  end_every_rank_with(world, plan.end);
  if (plan.alone) return {read_alone(world, request), std::nullopt};
  ReadingShare slowest;
  const std::vector<FileOutcome> outcomes = gathered_outcomes(world, plan, slowest);
  // The first bad file in the files' order: the one the one process would have stopped at.
  for (const FileOutcome& outcome : outcomes) end_every_rank_with(world, outcome.end);
  if (world.rank() != kReportingRank) return {};
  ReadInput input;
  input.notes = std::move(plan.notes);
  std::vector<RankTrace> traces;
  for (const FileOutcome& outcome : outcomes) {
    const std::string& path = plan.files[outcome.file].path;
    if (outcome.trace.empty()) {
      input.notes.push_back(outcome.note);
      continue;
    }
    traces.push_back(rank_trace_from_json(outcome.trace, path));
    input.files.push_back(path);
  }
  return {summarize_pytorch_readings(std::move(input), std::move(traces)), slowest};
}

}  // namespace commbench
