#include "commbench/backend/device_selection.hpp"
#include "fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text = commbench::fuzz::as_text(data, size);
  commbench::fuzz::expect_value_or_usage_error([&] { commbench::validate_cuda_visible_devices(text); });
  // The same bytes as SLURM_LOCALID on a node of two processes sharing four GPUs.
  commbench::DeviceSelectionInput in;
  in.node_visible = {{"a", "b", "c", "d"}, {"a", "b", "c", "d"}};
  in.slurm_localid = text;
  in.host = "fuzz";
  commbench::fuzz::expect_value_or_usage_error([&] { (void)commbench::select_devices(in); });
  return 0;
}
