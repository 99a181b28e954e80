// The whole bench-collectives command line: input split into arguments at NUL bytes and
// newlines, as a hostile wrapper script might pass them.
#include <vector>

#include "commbench/cli/collectives_options.hpp"
#include "commbench/core/sweep.hpp"
#include "fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::vector<std::string> args{"bench-collectives"};
  std::string current;
  for (std::size_t i = 0; i < size; ++i) {
    const char c = static_cast<char>(data[i]);
    if (c == '\0' || c == '\n') {
      args.push_back(current);
      current.clear();
    } else {
      current.push_back(c);
    }
  }
  if (!current.empty()) args.push_back(current);
  std::vector<const char*> argv;
  for (const std::string& a : args) argv.push_back(a.c_str());
  commbench::fuzz::expect_value_or_usage_error([&] {
    const auto parsed = commbench::parse_collectives_command_line(static_cast<int>(argv.size()), argv.data());
    if (!parsed.options) return;
    // What the command does next with accepted options must hold too.
    commbench::validate_for_ranks(*parsed.options, 4);
    if (commbench::sweep_sizes(parsed.options->sweep).empty()) std::abort();
  });
  return 0;
}
