// bench-patterns: see `bench-patterns --help`, docs/patterns.md and docs/methodology.md.
#include "commbench/cli/bench_patterns_app.hpp"

int main(int argc, char** argv) { return commbench::run_bench_patterns(argc, argv); }
