#include "commbench/cli/command_registry.hpp"

#include <array>

#include "commbench/cli/bench_collectives_app.hpp"
#include "commbench/cli/bench_p2p_app.hpp"
#include "commbench/cli/bench_patterns_app.hpp"
#include "commbench/cli/bench_replay_app.hpp"
#include "commbench/cli/bench_topology_app.hpp"
#include "commbench/cli/bench_validate_app.hpp"
#include "commbench/cli/job_command.hpp"
#include "commbench/core/error.hpp"

namespace commbench {

namespace {

constexpr std::array kCommands{
    RegisteredCommand{"bench-collectives", "docs/collectives.md", run_bench_collectives},
    RegisteredCommand{"bench-topology", "docs/topology.md", run_bench_topology},
    RegisteredCommand{"bench-patterns", "docs/patterns.md", run_bench_patterns},
    RegisteredCommand{"bench-replay", "docs/replay.md", run_bench_replay},
    RegisteredCommand{"bench-p2p", "docs/p2p.md", run_bench_p2p},
    RegisteredCommand{"bench-validate", "docs/validate.md", run_bench_validate},
};

}  // namespace

std::span<const RegisteredCommand> registered_commands() { return kCommands; }

int run_registered_command(std::string_view name, int argc, char** argv) {
  for (const RegisteredCommand& command : kCommands)
    if (command.name == name) return command.run(argc, argv);
  print_command_error(std::string(name).c_str(), "internal error: not a registered command");
  return static_cast<int>(ExitCode::backend);
}

}  // namespace commbench
