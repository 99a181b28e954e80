// bench-patterns: one training step's communication (the schedule of a framework's
// collectives), run with compute standing in for the model, taken apart and explained.
#pragma once

namespace commbench {

int run_bench_patterns(int argc, char** argv);

}  // namespace commbench
