// Launcher variables (OMPI_COMM_WORLD_RANK, SLURM_PROCID, ...) with garbage in them.
#include "commbench/core/launcher_env.hpp"
#include "fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text = commbench::fuzz::as_text(data, size);
  const auto value = commbench::parse_non_negative_int(text.c_str());
  if (value && *value < 0) std::abort();
  const auto rank = commbench::launcher_rank([&](const char*) { return text.c_str(); });
  if (rank != value) std::abort();  // every variable holds the same text here
  return 0;
}
