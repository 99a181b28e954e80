// bench-replay: see `bench-replay --help` and docs/replay.md.
#include "commbench/cli/command_registry.hpp"

int main(int argc, char** argv) { return commbench::run_registered_command("bench-replay", argc, argv); }
