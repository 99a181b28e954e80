// The one job runtime every command runs in, so a new command is a main, an options struct
// and a workload (docs/architecture.md, "How to add a command"). Inside the job that
// run_command() started (under the job's watchdog since before MPI), it owns, in this
// order: the world group, the heartbeat channel (so a timeout on rank 0 names the ranks
// that went silent), the backend (aborted by the watchdog on expiry), the run's
// provenance, and the reporter set on the reporting rank.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "commbench/backend/backend.hpp"
#include "commbench/backend/backend_factory.hpp"
#include "commbench/backend/job_runtime.hpp"
#include "commbench/cli/job_command.hpp"
#include "commbench/core/interrupted.hpp"
#include "commbench/core/result_row.hpp"
#include "commbench/report/reporter_set.hpp"
#include "commbench/report/run_context.hpp"
#include "commbench/runner/job_steps.hpp"
#include "commbench/runner/phase_progress.hpp"
#include "commbench/runner/run_clock.hpp"
#include "commbench/runner/watchdog.hpp"

namespace commbench {

class JobSession final : public JobSteps {
 public:
  // Collective: joins the job's ranks and opens the heartbeat channel, both guarded.
  // `schema` names the layout of the command's JSON ("commbench.collectives/2").
  JobSession(JobStart& start, std::string schema);
  ~JobSession();
  JobSession(const JobSession&) = delete;
  JobSession& operator=(const JobSession&) = delete;

  Bootstrap& world() override { return *world_; }
  Watchdog& watchdog() override { return start_.watch.watchdog(); }
  bool reporting() const override { return world_->rank() == 0; }
  void step(const std::string& what, const std::function<void()>& body) override;

  // The run's phases, owned here: a command says when one begins (allocation, warm-up,
  // measurement, a trial); the reporting rank prints a line as each begins and, past a
  // few seconds, its progress on stderr. The phase in progress is what an interrupted run
  // names (console, and "interrupted_phase" in the JSON).
  PhaseListener& phases() override { return *phases_; }
  void begin_phase(const std::string& name, std::uint64_t total = 0, const std::string& unit = "step") {
    phases_->begin_phase(name, total, unit);
  }
  void advance_phase(std::uint64_t done) { phases_->advance_phase(done); }
  // "error: interrupted by SIGTERM; ... (stopped in warm-up (step 2 of 8))", once, by the
  // reporting rank: the shell says it when the ranks agreed on a signal, or when they did
  // not in time; a command that ends its own run after a signal says it through this.
  void say_interrupted(const Interrupted& stop);

  // Builds the backend the user asked for (collective, guarded). From then on a timeout
  // names each rank's GPUs, and the watchdog aborts the backend before the process ends.
  Backend& create_backend(const BackendRequest& request);
  Backend* backend() { return backend_.get(); }

  // The provenance of this run: program, build, command line, launcher, hosts, and the
  // backend's name, versions, ranks and devices when it has one. Collective (it gathers
  // every rank's devices).
  RunContext run_context(std::vector<std::pair<std::string, std::string>> settings);

  // Runs a command's `run` in this session: the shell's side of the results' lifecycle.
  // An Interrupted that leaves it (every rank agreed on the signal) is said once, by the
  // reporting rank, and ends the run with 128 + the signal; results begun and not
  // finished by the command are finished with summary(), complete: false when
  // interrupted.
  int run(const std::function<int()>& command_run);

  // The reporter set on the reporting rank (no-ops elsewhere). open_outputs and the
  // begin/finish calls are collective and guarded; a FIFO with no reader times out.
  // Between begin and finish, a timeout (exit 4) still closes the files with the records
  // made so far and complete: false.
  void open_outputs(const OutputRequest& request);
  void begin_results(const RunContext& context);
  // open_outputs, then begin_results: the files and the header, before the long work.
  void begin_results(const OutputRequest& request, const RunContext& context);
  void add_row(const ResultRow& row);
  void add_record(const Record& record);
  void finish_results(const RunSummary& summary);
  // What the shell finishes the results with when the command does not: the rows added
  // so far and their average busbw (nccl-tests' "Avg bus bandwidth") are counted here; a
  // command adds its failures, notes and sections.
  RunSummary& summary() { return summary_; }

  // How a command's run ends, after its last record or after a signal: `summarise` adds
  // to summary() what the run learned (failures, notes, sections) and says the exit code
  // of a run that went to its end; `report` prints the reporting rank's closing lines
  // once the files are written.
  struct RunEnding {
    std::function<int(RunSummary& summary)> summarise;
    std::function<void(const RunSummary& summary)> report = {};
  };
  void end_run_with(RunEnding ending) { ending_ = std::move(ending); }
  // Runs the command's long work, then summarises, writes the files and reports as
  // end_run_with says; returns the exit code. A signal in `work` (Interrupted: every rank
  // agreed on it) ends it there: what was measured is written with complete: false, the
  // signal is said once, and its exit code returned. The ending's functions run here,
  // while what they refer to is alive.
  int finish_after(const std::function<void()>& work);

 private:
  JobStart& start_;
  std::string schema_;
  std::unique_ptr<Bootstrap> world_;
  std::unique_ptr<Backend> backend_;
  std::string backend_note_;  // why --backend auto chose what it chose, when that needs saying
  // The reporters are used by the main thread and, on a timeout, by the watchdog's.
  std::timed_mutex reporters_mutex_;
  ReporterSet reporters_;
  bool results_begun_ = false;
  bool results_closed_ = false;  // by a timeout: the main thread's later calls do nothing
  bool results_written_ = false;  // finished by the main thread (under reporters_mutex_)
  // On every rank (results_begun_ is the reporting rank's): finishing is collective.
  std::atomic<bool> results_started_ = false;  // read by the clock's thread too
  std::atomic<bool> results_finished_ = false;  // read by the clock's thread too
  RunSummary summary_;
  RowTotals totals_;
  RunEnding ending_;
  std::unique_ptr<PhaseProgress> phases_;
  std::unique_ptr<RunClock> clock_;  // after phases_: its thread ticks them

  // The phase a stop or a timeout names: "set-up" before the command named one.
  std::string phase_now() const;
  std::atomic<bool> interruption_said_ = false;
  // On the clock's thread, when the ranks did not agree on a signal within the grace
  // (the work is inside one long step) and the files are open (begin_results on every
  // rank): the files are closed as they are, complete: false, the phase said, and the
  // process ends with 128 + the signal.
  // On a rank that does not report: rank 0 has said that the job's files are written.
  bool rank_zero_is_done() const;
  [[noreturn]] void stop_overdue(int signal);
  // Closes the files as they stand (a timeout, an overdue stop), from another thread.
  // Waits at most `wait` for the main thread's hold on the reporters.
  void close_results_early(int exit_code, std::chrono::milliseconds wait);

  // Finishes what a run left open: `interruption` is the signal's exit code, or 0.
  int finish_open_results(int exit_code, int interruption);
  std::string record_kind_;
  std::size_t records_ = 0;

  void close_results_on_timeout();
};

}  // namespace commbench
