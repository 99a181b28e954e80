// bench-topology: see `bench-topology --help` and docs/topology.md.
#include "commbench/cli/command_registry.hpp"

int main(int argc, char** argv) { return commbench::run_registered_command("bench-topology", argc, argv); }
