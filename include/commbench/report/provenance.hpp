// Facts about the run that make a result file reproducible and comparable.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace commbench {

// The variables that change how communication libraries behave, sorted by name.
std::vector<std::pair<std::string, std::string>> relevant_environment();
bool is_relevant_variable(std::string_view name);

// argv joined with shell quoting where needed, so it can be pasted back into a shell.
std::string quoted_command_line(int argc, const char* const* argv);

// Current UTC time as 2026-11-21T12:34:56Z.
std::string utc_timestamp();

// The note a run of one rank begins with, for records of the row kind: nothing crosses a
// link, so busbw is empty; `launched` false (no mpirun or srun in the environment) adds
// that one rank ran and how to start more. Empty for any other run.
std::optional<std::string> one_rank_note(int ranks, std::string_view record_kind, bool launched);

}  // namespace commbench
