// bench-p2p: see `bench-p2p --help` and docs/p2p.md.
#include "commbench/cli/bench_p2p_app.hpp"

int main(int argc, char** argv) { return commbench::run_bench_p2p(argc, argv); }
