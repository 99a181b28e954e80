#include "commbench/cli/job_session.hpp"

#include <chrono>
#include <cstdio>
#include <cstdlib>

#include <fmt/format.h>

#include "commbench/backend/collective_try.hpp"
#include "commbench/backend/typed_exchange.hpp"
#include "commbench/core/error.hpp"
#include "commbench/core/build_info.hpp"
#include "commbench/core/interrupted.hpp"
#include "commbench/core/launcher_env.hpp"
#include "commbench/report/provenance.hpp"
#include "commbench/report/scheduler_job.hpp"
#include "commbench/runner/interruption.hpp"

namespace commbench {
namespace {

std::string rank_name(int rank, const std::string& label) { return fmt::format("rank {} (host {})", rank, label); }

// How long the ranks have to agree on a signal at their own next agreement before the
// run's clock ends the run itself: within a second of SIGTERM, with the files written,
// before a launcher's SIGKILL (Open MPI's mpirun sends it about a second later).
constexpr std::chrono::milliseconds kStopGrace{200};
// The other ranks end once the reporting rank has written its files (its word on the
// heartbeat channel), never first: a launcher ends the whole job when one rank exits, and
// Open MPI's does so within tens of ms, cutting a write that a loaded machine slowed. The
// bound keeps the stop within a second of the signal should rank 0's word never come.
constexpr std::chrono::milliseconds kFollowerWait{550};
// How long an overdue stop waits for files the main thread is already writing.
constexpr std::chrono::milliseconds kFinishingWrite{1000};

// "rank R: GPU ..." for every device of every rank, on every rank.
std::vector<std::string> gathered_devices(Bootstrap& group, const Backend& backend) {
  std::vector<std::string> local_devices;
  for (const std::string& device : backend.device_descriptions())
    local_devices.push_back(fmt::format("rank {}: {}", group.rank(), device));
  std::vector<std::string> devices;
  for (const std::vector<std::string>& rank_devices : all_gather_as(group, local_devices))
    devices.insert(devices.end(), rank_devices.begin(), rank_devices.end());
  return devices;
}

}  // namespace

JobSession::JobSession(JobStart& start, std::string schema) : start_(start), schema_(std::move(schema)) {
  Watchdog& watchdog = start_.watch.watchdog();
  // Both steps before the heartbeat channel are collective: an arrival census first lets
  // rank 0 name a rank that never reaches them (host names are not known in the first).
  const bool watched = start_.watch.timeout_seconds() > 0;
  {
    // Every rank's host name is exchanged here: a rank that never arrives stalls it.
    const std::string step = "joining the job's ranks";
    auto guard = watchdog.guard(step);
    if (watched) start_.runtime.take_arrival_census(start_.watch.arrivals(), step, 1, {});
    world_ = start_.runtime.world();
  }
  watchdog.set_identity(rank_name(world_->rank(), world_->hostname()));
  if (watched && world_->size() > 1) {
    std::unique_ptr<HeartbeatChannel> heartbeat;
    {
      const std::string step = "opening the heartbeat channel";
      auto guard = watchdog.guard(step);
      start_.runtime.take_arrival_census(start_.watch.arrivals(), step, 2, world_->hostnames());
      heartbeat = HeartbeatChannel::open(*world_);
    }
    // Rank 0 names the stragglers; the others print their own line and wait a moment
    // before exiting, so the launcher does not tear rank 0 down before it has spoken.
    if (heartbeat && world_->rank() != 0) start_.watch.set_linger(std::chrono::milliseconds(3000));
    start_.watch.adopt_heartbeat(std::move(heartbeat), world_->hostnames());
  }
  phases_ = PhaseProgress::for_stderr(reporting());
  clock_ = std::make_unique<RunClock>(
      kStopGrace, RunClock::Actions{.tick = [this] { phases_->tick(PhaseProgress::Clock::now()); },
                                    .overdue_stop = [this](int signal) {
                                      // Before the files open, the signal waits for the command's own
                                      // agreement (bench-topology's probe ends first, then its files),
                                      // unless rank 0 has written the job's files and ended.
                                      if (!results_started_ && !rank_zero_is_done()) return false;
                                      stop_overdue(signal);
                                      return true;
                                    },
                                    // A rank held behind the others (stopped, woken by the launcher to
                                    // end) has no one left to agree with, nor any reason to wait.
                                    .no_one_left_to_agree = [this] { return rank_zero_is_done(); }});
}

JobSession::~JobSession() {
  clock_.reset();
  phases_->settle();
  start_.watch.set_expiry_report({});
  // The job's watchdog outlives the session (it guards MPI_Finalize): it forgets the
  // backend first (waiting for an abort in progress), then guards the release, which
  // waits for peers (communicator destruction) like any other step.
  start_.watch.set_backend(nullptr);
  if (backend_ == nullptr) return;
  auto guard = watchdog().guard("releasing the " + backend_->name() + " backend");
  backend_.reset();
}

void JobSession::step(const std::string& what, const std::function<void()>& body) {
  auto guard = watchdog().guard(what);
  collective_try(*world_, body);
}

Backend& JobSession::create_backend(const BackendRequest& request) {
  step("creating the " + request.name + " backend", [&] { backend_ = make_backend(request, *world_, &backend_note_); });
  start_.watch.set_backend(backend_.get());
  // From here on a timeout names the GPUs of each rank too, not only its host.
  auto guard = watchdog().guard("exchanging each rank's GPUs");
  const std::vector<std::string> labels =
      rank_labels(world_->hostnames(), all_gather_as(*world_, backend_->device_bus_ids()));
  start_.watch.relabel_ranks(labels);
  watchdog().set_identity(rank_name(world_->rank(), labels[static_cast<std::size_t>(world_->rank())]));
  return *backend_;
}

RunContext JobSession::run_context(std::vector<std::pair<std::string, std::string>> settings) {
  RunContext context;
  context.schema = schema_;
  context.program = start_.program;
  context.version = commbench::version();
  context.commit = git_commit();
  context.mpi_version = start_.runtime.mpi_version();
  context.command_line = start_.command_line;
  context.started_at = utc_timestamp();
  context.settings = std::move(settings);
  context.settings.emplace_back("malloc", start_.allocator);
  context.environment = relevant_environment();
  context.slurm = slurm_job([](const char* name) -> const char* { return std::getenv(name); });
  if (backend_ == nullptr) {
    context.ranks = world_->size();
    context.nodes = world_->node_count();
    context.rank_hosts = world_->hostnames();
    return context;
  }
  Bootstrap& group = backend_->group();
  if (!backend_note_.empty()) context.notes.push_back(backend_note_);
  context.backend = backend_->name();
  context.backend_version = backend_->library_version();
  context.ranks = backend_->ranks();
  context.nodes = group.node_count();
  context.rank_hosts = group.hostnames();
  auto guard = watchdog().guard("gathering each rank's devices");
  context.devices = gathered_devices(group, *backend_);
  return context;
}

int JobSession::run(const std::function<int()>& command_run) {
  try {
    const int exit_code = command_run();
    return results_started_ && !results_finished_ ? finish_open_results(exit_code, 0) : exit_code;
  } catch (const UsageError&) {
    // Bad input found once the files were open (buffers that do not fit): no result file
    // is left, as for any bad input.
    if (reporting() && !results_finished_) {
      std::lock_guard lock(reporters_mutex_);
      reporters_.discard();
      results_closed_ = true;
    }
    throw;
  } catch (const Interrupted& stop) {
    // Every rank agreed on the signal: the records so far are kept, said as incomplete.
    // The command's frame is gone, and with it what its ending referred to.
    ending_ = {};
    const int exit_code = static_cast<int>(stop.exit_code());
    if (results_started_ && !results_finished_) finish_open_results(exit_code, exit_code);
    say_interrupted(stop);
    return exit_code;
  }
}

int JobSession::finish_after(const std::function<void()>& work) {
  try {
    work();
  } catch (const Interrupted& stop) {
    const int exit_code = static_cast<int>(stop.exit_code());
    finish_open_results(exit_code, exit_code);
    say_interrupted(stop);
    return exit_code;
  }
  return finish_open_results(0, 0);
}

std::string JobSession::phase_now() const {
  const std::string phase = phases_->phase();
  return phase.empty() ? "set-up" : phase;
}

void JobSession::say_interrupted(const Interrupted& stop) {
  if (!reporting() || interruption_said_.exchange(true)) return;
  phases_->settle();
  const std::string where = phases_->phase().empty() ? std::string("set-up") : phases_->phase_with_progress();
  print_command_error(start_.program.c_str(), fmt::format("{} (stopped in {})", stop.what(), where));
}

bool JobSession::rank_zero_is_done() const { return !reporting() && start_.watch.results_written_said(); }

void JobSession::stop_overdue(int signal) {
  const Interrupted stop(signal);
  const int exit_code = static_cast<int>(stop.exit_code());
  if (reporting()) {
    // Files the main thread is writing (the ranks agreed, but late) end whole first.
    close_results_early(exit_code, kFinishingWrite);
    std::fflush(stdout);
    say_interrupted(stop);
    std::fflush(stderr);
    start_.watch.say_results_written();
  } else {
    start_.watch.wait_for_results_written(kFollowerWait);
  }
  std::fflush(stdout);
  std::fflush(stderr);
  std::_Exit(exit_code);
}

int JobSession::finish_open_results(int exit_code, int interruption) {
  summary_.average_busbw_gbps = totals_.average_busbw_gbps();
  summary_.wrong_elements = totals_.wrong_elements();
  if (ending_.summarise) {
    const int completed = ending_.summarise(summary_);
    if (interruption == 0) exit_code = completed;
  }
  if (interruption != 0) {
    summary_.complete = false;
    summary_.interrupted_phase = phase_now();
    exit_code = interruption;
  }
  summary_.exit_code = exit_code;
  // Other kinds than rows keep their exit code at the top level of the JSON.
  if (record_kind_ != "row") summary_.sections.emplace_back("exit_code", exit_code);
  finish_results(summary_);
  if (ending_.report && reporting()) ending_.report(summary_);
  return exit_code;
}

void JobSession::open_outputs(const OutputRequest& request) {
  // Opening a FIFO with no reader blocks: the watchdog ends that too.
  step("opening the result files", [&] {
    if (!reporting()) return;
    std::lock_guard lock(reporters_mutex_);
    reporters_ = ReporterSet::open(request);
  });
  if (reporting()) start_.watch.set_expiry_report([this] { close_results_on_timeout(); });
}

void JobSession::begin_results(const RunContext& given) {
  results_started_ = true;
  step("writing the result headers", [&] {
    if (!reporting()) return;
    RunContext context = given;
    if (const auto note = one_rank_note(context.ranks, context.record_kind, started_by_launcher()))
      context.notes.insert(context.notes.begin(), *note);
    std::lock_guard lock(reporters_mutex_);
    reporters_.begin(context);
    results_begun_ = true;
    record_kind_ = context.record_kind;
  });
}

void JobSession::begin_results(const OutputRequest& request, const RunContext& context) {
  open_outputs(request);
  begin_results(context);
}

void JobSession::add_row(const ResultRow& row) {
  summary_.rows += 1;
  totals_.add(row);
  // Not guarded: only the reporting rank writes, and a guard would move its step count
  // ahead of the other ranks', which the heartbeats compare.
  if (!reporting()) return;
  std::lock_guard lock(reporters_mutex_);
  if (results_closed_) return;
  reporters_.add_row(row);
  ++records_;
}

void JobSession::add_record(const Record& record) {
  if (!reporting()) return;
  std::lock_guard lock(reporters_mutex_);
  if (results_closed_) return;
  reporters_.add_record(record);
  ++records_;
}

void JobSession::finish_results(const RunSummary& given) {
  results_finished_ = true;
  // A command that finishes its own results after a signal (the steps measured before
  // it kept) names the phase through the shell too.
  RunSummary summary = given;
  if (!summary.complete && summary.interrupted_phase.empty()) summary.interrupted_phase = phase_now();
  // From here a timeout is the writing's own: the files are whole or absent as written.
  if (reporting()) start_.watch.set_expiry_report({});
  step("writing the results", [&] {
    if (!reporting()) return;
    std::lock_guard lock(reporters_mutex_);
    if (!results_closed_) reporters_.finish(summary);
    results_written_ = true;
  });
}

void JobSession::close_results_on_timeout() {
  close_results_early(static_cast<int>(ExitCode::timeout), std::chrono::seconds(2));
}

void JobSession::close_results_early(int exit_code, std::chrono::milliseconds wait) {
  // The main thread may hold the reporters in a write that never ends (a FIFO nobody
  // reads): then the files are left as they are rather than the exit delayed. Files the
  // main thread is finishing are its own to finish.
  std::unique_lock lock(reporters_mutex_, wait);
  if (!lock.owns_lock() || !results_begun_ || results_closed_ || results_written_) return;
  results_closed_ = true;
  RunSummary summary;
  summary.complete = false;
  summary.interrupted_phase = phase_now();
  summary.rows = records_;
  summary.exit_code = exit_code;
  // Other kinds than rows keep their exit code at the top level of the JSON.
  if (record_kind_ != "row") summary.sections.emplace_back("exit_code", summary.exit_code);
  try {
    reporters_.finish_files(summary);
  } catch (const std::exception&) {
    // The stop is what the user must hear about; a failed write adds nothing to it.
  }
}

}  // namespace commbench
