// bench-replay: a training job's own traces (one per rank) read as the collectives it ran.
#pragma once

namespace commbench {

int run_bench_replay(int argc, char** argv);

}  // namespace commbench
