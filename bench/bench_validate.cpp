// bench-validate: see `bench-validate --help` and docs/validate.md.
#include "commbench/cli/bench_validate_app.hpp"

int main(int argc, char** argv) { return commbench::run_bench_validate(argc, argv); }
