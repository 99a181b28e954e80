#include "nsys_export.hpp"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "commbench/core/error.hpp"
#include "commbench/core/interrupted.hpp"
#include "commbench/core/number_text.hpp"

extern char** environ;

namespace commbench {

namespace {

std::string temporary_folder(const std::string& report_path) {
  const char* base = std::getenv("TMPDIR");
  std::string pattern = fmt::format("{}/commbench-nsys-XXXXXX", base != nullptr && *base != '\0' ? base : "/tmp");
  if (mkdtemp(pattern.data()) == nullptr)
    throw UsageError(fmt::format("{}: no temporary folder to export it into ({})", report_path, std::strerror(errno)));
  return pattern;
}

std::string first_line_of(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line))
    if (line.find_first_not_of(" \t\r") != std::string::npos) return line;
  return "";
}

// Whether the export's log says `text` anywhere (an option it refused, after any banner).
bool log_mentions(const std::string& path, std::string_view text) {
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line))
    if (line.find(text) != std::string::npos) return true;
  return false;
}

// Stops the export and whatever it started (it runs in a process group of its own). The
// export is reaped only after the whole group was killed: until then its id still names
// the group, so a child that outlived SIGTERM is not missed.
void stop_export(pid_t pid) {
  kill(-pid, SIGTERM);
  for (int tries = 0; tries < 40; ++tries) {
    siginfo_t info{};
    if (waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOHANG | WNOWAIT) == 0 && info.si_pid == pid) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  kill(-pid, SIGKILL);
  while (waitpid(pid, nullptr, 0) < 0 && errno == EINTR) {
  }
}

// The first stop signal that came while an export ran; 0 for none.
volatile std::sig_atomic_t stop_signal_noted = 0;

extern "C" void note_stop_signal(int signal_number) {
  if (stop_signal_noted == 0) stop_signal_noted = signal_number;
}

// While the export runs, SIGINT, SIGTERM and SIGHUP are noted by a handler of its own,
// whichever thread takes them, and the wait stops the export: in a process group of its
// own, it does not see a terminal's Ctrl-C, and its temporary folder would be left behind.
// Signals the process ignores stay ignored; the handlers before come back afterwards.
class StopSignalsNoted {
 public:
  StopSignalsNoted() {
    stop_signal_noted = 0;
    struct sigaction noted {};
    noted.sa_handler = note_stop_signal;
    noted.sa_flags = SA_RESTART;
    sigemptyset(&noted.sa_mask);
    for (std::size_t i = 0; i < kSignals.size(); ++i) {
      sigaction(kSignals[i], nullptr, &before_[i]);
      if (before_[i].sa_handler == SIG_IGN) continue;
      installed_[i] = sigaction(kSignals[i], &noted, nullptr) == 0;
    }
  }
  ~StopSignalsNoted() {
    for (std::size_t i = 0; i < kSignals.size(); ++i)
      if (installed_[i]) sigaction(kSignals[i], &before_[i], nullptr);
  }
  StopSignalsNoted(const StopSignalsNoted&) = delete;
  StopSignalsNoted& operator=(const StopSignalsNoted&) = delete;
  int noted() const { return stop_signal_noted; }

 private:
  static constexpr std::array<int, 3> kSignals{SIGINT, SIGTERM, SIGHUP};
  std::array<struct sigaction, 3> before_{};
  std::array<bool, 3> installed_{};
};

struct ExportEnd {
  std::optional<int> status;  // the export's exit status; none when it was stopped
  int signal_number = 0;      // the signal that stopped it, 0 when the time limit did
};

// Waits for the export, polling so that a time limit (`limit_seconds` > 0) and signals
// are seen.
ExportEnd wait_for_export(pid_t pid, double limit_seconds, const StopSignalsNoted& signals) {
  using Clock = std::chrono::steady_clock;
  const auto deadline = Clock::now() + std::chrono::duration<double>(limit_seconds);
  int status = 0;
  for (;;) {
    const pid_t done = waitpid(pid, &status, WNOHANG);
    if (done == pid) break;
    if (done < 0 && errno != EINTR)
      throw BackendError(fmt::format("nsys export: its end could not be read ({})", std::strerror(errno)));
    if (const int signal_number = signals.noted(); signal_number != 0) {
      stop_export(pid);
      return {std::nullopt, signal_number};
    }
    if (limit_seconds > 0 && Clock::now() >= deadline) {
      if (waitpid(pid, &status, WNOHANG) == pid) break;  // it ended just now
      stop_export(pid);
      return {};
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  if (signals.noted() != 0) return {std::nullopt, signals.noted()};  // came as it ended: still a stop
  return {WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status)};
}

struct ExportRun {
  int spawn_error = 0;  // posix_spawnp's error (ENOENT: nsys not on the PATH)
  ExportEnd end;
};

// With `payloads`, NVTX extended payloads are asked for (--include-blobs, nsys 2025.3 and
// newer; left out by default): NCCL's ranges hold their message sizes there.
ExportRun run_export(const std::string& report_path, const std::string& sqlite_path, const std::string& log_path,
                     double limit_seconds, bool payloads) {
  std::vector<std::string> arguments{"nsys", "export", "--type", "sqlite"};
  if (payloads) arguments.emplace_back("--include-blobs=true");
  for (const std::string& argument :
       {std::string("--quiet=true"), std::string("--force-overwrite=true"), "--output=" + sqlite_path, report_path})
    arguments.push_back(argument);
  std::vector<char*> argv;
  for (std::string& argument : arguments) argv.push_back(argument.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, log_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO);
  const StopSignalsNoted signals;  // from before the spawn: no signal falls between it and the wait
  posix_spawnattr_t attributes;
  posix_spawnattr_init(&attributes);
  // The export starts with no signal blocked, whatever this thread blocks (the stop signals,
  // once they are taken by a listener thread).
  sigset_t no_signals;
  sigemptyset(&no_signals);
  posix_spawnattr_setsigmask(&attributes, &no_signals);
  posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK);
  posix_spawnattr_setpgroup(&attributes, 0);
  pid_t pid = 0;
  ExportRun run;
  run.spawn_error = posix_spawnp(&pid, "nsys", &actions, &attributes, argv.data(), environ);
  posix_spawnattr_destroy(&attributes);
  posix_spawn_file_actions_destroy(&actions);
  if (run.spawn_error == 0) run.end = wait_for_export(pid, limit_seconds, signals);
  return run;
}

}  // namespace

ExportedReport::~ExportedReport() {
  std::error_code ignored;
  if (!folder_.empty()) std::filesystem::remove_all(folder_, ignored);
}

ExportedReport::ExportedReport(ExportedReport&& other) noexcept
    : folder_(std::move(other.folder_)), sqlite_path_(std::move(other.sqlite_path_)) {
  other.folder_.clear();
}

ExportedReport export_nsys_report(const std::string& report_path, double limit_seconds) {
  if (access(report_path.c_str(), R_OK) != 0)
    throw UsageError(fmt::format("{}: cannot read ({})", report_path, std::strerror(errno)));
  const std::string folder = temporary_folder(report_path);
  ExportedReport exported(folder, folder + "/report.sqlite");
  const std::string log_path = folder + "/export.log";
  ExportRun run = run_export(report_path, exported.sqlite_path(), log_path, limit_seconds, true);
  // An nsys older than the option refuses it, naming it: the export again without payloads.
  if (run.spawn_error == 0 && run.end.status && *run.end.status != 0 && log_mentions(log_path, "include-blobs"))
    run = run_export(report_path, exported.sqlite_path(), log_path, limit_seconds, false);
  if (run.spawn_error != 0)
    throw UsageError(fmt::format(
        "{}: a .nsys-rep is read through `nsys export --type sqlite`, and nsys cannot be run here ({}): put it on "
        "the PATH, or export the report where it is and give the .sqlite",
        report_path, std::strerror(run.spawn_error)));
  if (run.end.signal_number != 0)
    throw Error(static_cast<ExitCode>(128 + run.end.signal_number),
                fmt::format("{}: nsys export stopped: interrupted by {}", report_path,
                            interruption_signal_name(run.end.signal_number)));
  if (!run.end.status)
    throw Error(ExitCode::timeout,
                fmt::format("{}: nsys export ran past {} s (--export-timeout) and was stopped: export the report "
                            "where it is (nsys export --type sqlite) and give the .sqlite, or allow it more time",
                            report_path, significant_text(limit_seconds)));
  if (*run.end.status != 0 || !std::filesystem::exists(exported.sqlite_path()))
    throw UsageError(
        fmt::format("{}: nsys export failed (exit {}): {}", report_path, *run.end.status, first_line_of(log_path)));
  return exported;
}

}  // namespace commbench
