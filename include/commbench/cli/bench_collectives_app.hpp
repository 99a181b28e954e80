// The whole of bench-collectives behind its thin main: parse, start MPI, plan, measure,
// report, and map every failure to its documented exit code.
#pragma once

namespace commbench {

int run_bench_collectives(int argc, char** argv);

}  // namespace commbench
