// bench-topology: probe each node, print the matrix and NIC table, compare nodes.
#pragma once

namespace commbench {

int run_bench_topology(int argc, char** argv);

}  // namespace commbench
