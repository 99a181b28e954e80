// bench-collectives: see `bench-collectives --help` and docs/collectives.md.
#include "commbench/cli/bench_collectives_app.hpp"

int main(int argc, char** argv) { return commbench::run_bench_collectives(argc, argv); }
