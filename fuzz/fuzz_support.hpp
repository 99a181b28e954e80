// Shared by the fuzz targets: a parser may succeed or throw UsageError on any input;
// anything else (another exception, a crash, undefined behaviour) is a bug.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <string>

#include "commbench/core/error.hpp"

namespace commbench::fuzz {

template <typename Parse>
void expect_value_or_usage_error(Parse&& parse) {
  try {
    parse();
  } catch (const UsageError& e) {
    const std::string message = e.what();
    // Every usage error is one line that names what was wrong.
    if (message.empty() || message.find('\n') != std::string::npos) std::abort();
  } catch (...) {
    std::abort();
  }
}

inline std::string as_text(const std::uint8_t* data, std::size_t size) {
  return std::string(reinterpret_cast<const char*>(data), size);
}

}  // namespace commbench::fuzz
