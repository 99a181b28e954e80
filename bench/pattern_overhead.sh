#!/bin/sh
# The pattern runner's cost per collective (docs/performance.md, "bench-patterns"): a
# schedule of 10 000 8-byte allreduces against a bare start/wait loop, best of 5, 2 ranks.
set -eu
build=${1:-build}
mpirun -q --oversubscribe -np 2 "$build/bench/pattern-overhead" 10000
