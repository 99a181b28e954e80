// sysfs `rate` and `state` files with garbage in them (issue: hostile sysfs trees).
#include "commbench/topology/sysfs_ports.hpp"
#include "fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text = commbench::fuzz::as_text(data, size);
  commbench::fuzz::expect_value_or_usage_error([&] {
    const commbench::PortRate rate = commbench::parse_port_rate(text, "rate");
    if (!(rate.gbit > 0)) std::abort();
  });
  commbench::fuzz::expect_value_or_usage_error([&] { (void)commbench::parse_port_state(text, "state"); });
  return 0;
}
