#include "commbench/report/provenance.hpp"

#include <algorithm>
#include <array>
#include <ctime>

#include <fmt/format.h>

extern char** environ;

namespace commbench {

bool is_relevant_variable(std::string_view name) {
  // Launcher internals (PMIx URIs, job keys) say nothing about performance and may be
  // secrets: names that look like credentials are never recorded.
  static constexpr std::array<std::string_view, 6> kSecretHints{"KEY",      "TOKEN",      "SECRET",
                                                                "PASSWORD", "CREDENTIAL", "precondition_transports"};
  for (std::string_view hint : kSecretHints)
    if (name.find(hint) != std::string_view::npos) return false;
  static constexpr std::array<std::string_view, 6> kPrefixes{"NCCL_", "UCX_", "OMPI_", "SLURM_", "FI_", "COMMBENCH_"};
  static constexpr std::array<std::string_view, 4> kNames{"OMP_NUM_THREADS", "CUDA_VISIBLE_DEVICES",
                                                          "CUDA_DEVICE_ORDER", "LD_LIBRARY_PATH"};
  for (std::string_view p : kPrefixes)
    if (name.substr(0, p.size()) == p) return true;
  return std::find(kNames.begin(), kNames.end(), name) != kNames.end();
}

std::vector<std::pair<std::string, std::string>> relevant_environment() {
  std::vector<std::pair<std::string, std::string>> vars;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    const std::string_view entry(*e);
    const auto eq = entry.find('=');
    if (eq == std::string_view::npos) continue;
    const std::string_view name = entry.substr(0, eq);
    if (is_relevant_variable(name)) vars.emplace_back(std::string(name), std::string(entry.substr(eq + 1)));
  }
  std::sort(vars.begin(), vars.end());
  return vars;
}

std::string quoted_command_line(int argc, const char* const* argv) {
  std::string line;
  for (int i = 0; i < argc; ++i) {
    const std::string_view arg(argv[i]);
    if (i > 0) line += ' ';
    const bool plain =
        !arg.empty() &&
        arg.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./=,:%+@") ==
            std::string_view::npos;
    if (plain) {
      line += arg;
      continue;
    }
    line += '\'';
    for (char c : arg) {
      if (c == '\'')
        line += "'\\''";
      else
        line += c;
    }
    line += '\'';
  }
  return line;
}

std::string utc_timestamp() {
  const std::time_t now = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&now, &utc);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &utc);
  return text;
}

std::optional<std::string> one_rank_note(int ranks, std::string_view record_kind, bool launched) {
  if (ranks != 1 || record_kind != "row") return std::nullopt;
  const std::string busbw = "nothing crosses a link, so busbw is empty (- in the table) and has no average";
  if (launched) return fmt::format("one rank: {}", busbw);
  return fmt::format("ran one rank (started without mpirun or srun): {}; start more with mpirun -np N or srun -n N",
                     busbw);
}

}  // namespace commbench
