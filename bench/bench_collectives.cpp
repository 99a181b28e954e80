// bench-collectives: see `bench-collectives --help` and docs/collectives.md.
#include "commbench/cli/command_registry.hpp"

int main(int argc, char** argv) { return commbench::run_registered_command("bench-collectives", argc, argv); }
