// What bench-replay reads: torch.profiler traces (one file per rank), Nsight Systems
// reports (one or more ranks per file), or one DeepSpeed comms log; given as files or
// folders. The job's ranks are numbered and held against each other here.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "commbench/core/dtype.hpp"
#include "commbench/replay/communication_trace.hpp"
#include "commbench/replay/nsys_report_reader.hpp"
#include "commbench/replay/trace_summary.hpp"

namespace commbench {

struct ReplayInputRequest {
  std::vector<std::string> paths;                           // files or folders
  int ranks = 0;                                            // --ranks: a comms log's world size; 0 not given
  bool schedule_wanted = false;                             // --dump-schedule: the calls' order and gaps are needed
  std::string element_type = "float32";                     // --dtype: for calls a report gives counts but no types
  double export_limit_seconds = kDefaultNsysExportSeconds;  // --export-timeout; 0 none
};

struct ReadInput {
  TraceSummary summary;
  std::vector<std::string> files;
  std::vector<std::string> notes;
  int nodes = 1;
  std::string format;             // "torch.profiler", "nsys", "deepspeed comms log"
  std::vector<RankTrace> traces;  // empty for a DeepSpeed log
};

// UsageError (one line, naming the file or flag) for anything it cannot read.
ReadInput read_traces(const ReplayInputRequest& request);

// The steps of read_traces' reading of torch.profiler traces, for a reading divided
// between processes: the files it reads, in its order, with a note for each file passed
// over (an Nsight export beside its report) ...
struct TraceFile {
  std::string path;
  bool in_folder = false;  // found in a folder given, not named
};
std::vector<TraceFile> listed_trace_files(const std::vector<std::string>& paths, std::vector<std::string>& notes);
// ... whether a file is read as a torch.profiler trace (.json, .json.gz) ...
bool is_trace_name(const std::string& name);
// ... one file's reading, or none for a file in a folder that is no Chrome trace (`note`
// says so) ...
std::optional<RankTrace> read_listed_trace(const TraceFile& file, std::string& note);
// ... and the job's summary of the readings, `input` holding the files read and the notes.
ReadInput summarize_pytorch_readings(ReadInput input, std::vector<RankTrace> traces);

// The files read_traces would read of `paths`: each file as given, each folder's
// traces and reports; what it cannot list is left to the reading to report.
std::vector<std::string> files_read_from(const std::vector<std::string>& paths);

// A type as the traces name it: DataType::float32 is "float32", DataType::float16 "float16".
std::string trace_type_name(DataType type);

// The nodes the job ran on: its traces' hosts (one when they do not say).
int node_count(const std::vector<RankTrace>& traces);

}  // namespace commbench
