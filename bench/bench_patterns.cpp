// bench-patterns: see `bench-patterns --help` and docs/patterns.md.
#include "commbench/cli/command_registry.hpp"

int main(int argc, char** argv) { return commbench::run_registered_command("bench-patterns", argc, argv); }
