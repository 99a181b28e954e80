#include "commbench/core/size.hpp"
#include "fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text = commbench::fuzz::as_text(data, size);
  commbench::fuzz::expect_value_or_usage_error([&] {
    const std::uint64_t bytes = commbench::parse_size(text, "-b/--min-bytes");
    if (bytes == 0) std::abort();  // zero is always refused
    (void)commbench::format_size(bytes);
  });
  return 0;
}
