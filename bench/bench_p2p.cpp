// bench-p2p: see `bench-p2p --help` and docs/p2p.md.
#include "commbench/cli/command_registry.hpp"

int main(int argc, char** argv) { return commbench::run_registered_command("bench-p2p", argc, argv); }
