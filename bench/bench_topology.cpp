// bench-topology: see `bench-topology --help` and docs/bandwidth-model.md.
#include "commbench/cli/bench_topology_app.hpp"

int main(int argc, char** argv) { return commbench::run_bench_topology(argc, argv); }
