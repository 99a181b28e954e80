// bench-validate: see `bench-validate --help` and docs/validate.md.
#include "commbench/cli/command_registry.hpp"

int main(int argc, char** argv) { return commbench::run_registered_command("bench-validate", argc, argv); }
