// Every command commbench installs, in one table (as nvbandwidth lists its testcases): its
// program name, the page of docs/ that is its manual, and the function that runs it on the
// command shell. The thin mains run their entry; tests hold the README's command table,
// the docs and the package's programs to this list.
#pragma once

#include <span>
#include <string_view>

namespace commbench {

struct RegisteredCommand {
  std::string_view name;  // "bench-replay": the program
  std::string_view doc;   // "docs/replay.md": its manual
  int (*run)(int argc, char** argv);
};

std::span<const RegisteredCommand> registered_commands();

// Runs the command named `name` (a program's main). An unregistered name is a bug of the
// build, reported on stderr with exit 3.
int run_registered_command(std::string_view name, int argc, char** argv);

}  // namespace commbench
