#include "nsys_export.hpp"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <vector>

#include <fmt/format.h>

#include "commbench/core/error.hpp"

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

// nsys export's exit status; -1 when nsys could not be started (ENOENT: not on the PATH).
int run_export(const std::string& report_path, const std::string& sqlite_path, const std::string& log_path,
               int& spawn_error) {
  std::vector<std::string> arguments{
      "nsys",     "export", "--type", "sqlite", "--quiet=true", "--force-overwrite=true", "--output=" + sqlite_path,
      report_path};
  std::vector<char*> argv;
  for (std::string& argument : arguments) argv.push_back(argument.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, log_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO);
  pid_t pid = 0;
  spawn_error = posix_spawnp(&pid, "nsys", &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (spawn_error != 0) return -1;
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
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

ExportedReport export_nsys_report(const std::string& report_path) {
  if (access(report_path.c_str(), R_OK) != 0)
    throw UsageError(fmt::format("{}: cannot read ({})", report_path, std::strerror(errno)));
  const std::string folder = temporary_folder(report_path);
  ExportedReport exported(folder, folder + "/report.sqlite");
  const std::string log_path = folder + "/export.log";
  int spawn_error = 0;
  const int status = run_export(report_path, exported.sqlite_path(), log_path, spawn_error);
  if (status < 0)
    throw UsageError(fmt::format(
        "{}: a .nsys-rep is read through `nsys export --type sqlite`, and nsys cannot be run here ({}): put it on "
        "the PATH, or export the report where it is and give the .sqlite",
        report_path, std::strerror(spawn_error)));
  if (status != 0 || !std::filesystem::exists(exported.sqlite_path()))
    throw UsageError(fmt::format("{}: nsys export failed (exit {}): {}", report_path, status, first_line_of(log_path)));
  return exported;
}

}  // namespace commbench
