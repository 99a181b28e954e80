// bench-validate: the check before a training job; names the bad nodes and links, prints
// the exclude list and exits 1 when anything failed (docs/validate.md).
#pragma once

namespace commbench {

int run_bench_validate(int argc, char** argv);

}  // namespace commbench
