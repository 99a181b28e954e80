// The one job runtime every command runs in, so a new command is a main, an options struct
// and a workload (docs/architecture.md, "How to add a command"). It owns, in this order:
// the world group, the heartbeat channel and the watchdog (before anything collective, so
// a rank that stalls in set-up is named, not waited for), the backend (aborted by the
// watchdog on expiry), the run's provenance, and the reporter set on the reporting rank.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "commbench/backend/backend.hpp"
#include "commbench/backend/backend_factory.hpp"
#include "commbench/backend/job_runtime.hpp"
#include "commbench/report/reporter_set.hpp"
#include "commbench/report/run_context.hpp"
#include "commbench/runner/heartbeat.hpp"
#include "commbench/runner/watchdog.hpp"

namespace commbench {

struct SessionSettings {
  std::string program;       // "bench-collectives": error prefixes and provenance
  std::string command_line;  // shell-quoted, for provenance
  double timeout_seconds = 300;
  std::string schema;  // the JSON document's schema name
};

class JobSession {
 public:
  JobSession(JobRuntime& runtime, SessionSettings settings);
  ~JobSession();
  JobSession(const JobSession&) = delete;
  JobSession& operator=(const JobSession&) = delete;

  Bootstrap& world() { return *world_; }
  Watchdog& watchdog() { return *watchdog_; }
  // Rank 0 prints and writes the results.
  bool reporting() const { return world_->rank() == 0; }

  // Runs `body` on every rank under the watchdog (named `what` in a timeout) and makes
  // every rank leave it the same way (collective_try): one error message, one exit code.
  void step(const std::string& what, const std::function<void()>& body);

  // Builds the backend the user asked for (collective, guarded). From then on a timeout
  // names each rank's GPUs, and the watchdog aborts the backend before the process ends.
  Backend& create_backend(const BackendRequest& request);
  Backend* backend() { return backend_.get(); }

  // The provenance of this run: program, build, command line, launcher, hosts, and the
  // backend's name, versions, ranks and devices when it has one. Collective (it gathers
  // every rank's devices).
  RunContext run_context(std::vector<std::pair<std::string, std::string>> settings);

  // The reporter set on the reporting rank (no-ops elsewhere). open_outputs and the
  // begin/finish calls are collective and guarded; a FIFO with no reader times out.
  void open_outputs(const OutputRequest& request);
  void begin_results(const RunContext& context);
  void add_row(const ResultRow& row);
  void finish_results(const RunSummary& summary);

 private:
  SessionSettings settings_;
  JobRuntime& runtime_;
  std::unique_ptr<Bootstrap> world_;
  std::unique_ptr<HeartbeatChannel> heartbeat_;
  std::atomic<Backend*> live_backend_{nullptr};
  std::unique_ptr<Watchdog> watchdog_;
  std::unique_ptr<Backend> backend_;
  ReporterSet reporters_;
};

}  // namespace commbench
