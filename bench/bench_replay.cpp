// bench-replay: see `bench-replay --help` and docs/replay.md.
#include "commbench/cli/bench_replay_app.hpp"

int main(int argc, char** argv) { return commbench::run_bench_replay(argc, argv); }
