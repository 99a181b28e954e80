#include "commbench/analysis/live_probe.hpp"

#include "commbench/config.hpp"

#if COMMBENCH_HAVE_NCCL
#include "commbench/backend/nccl/nccl_backend.hpp"
#endif

namespace commbench {

ProbeOptions probe_options_for_this_build(const std::string& hwloc_xml, const std::string& sysfs_root,
                                          const std::string& nccl_topo_xml) {
  ProbeOptions options;
  options.hwloc_xml = hwloc_xml;
  options.sysfs_root = sysfs_root;
  options.nccl_topo_xml = nccl_topo_xml;
#if COMMBENCH_HAVE_NCCL
  options.cuda_gpus = [](std::string& why_none) {
    std::vector<CudaGpu> gpus;
    for (const nccl::CudaDeviceInfo& d : nccl::list_cuda_devices(why_none)) gpus.push_back({d.bus_id, d.name, d.sm});
    return gpus;
  };
#endif
  return options;
}

}  // namespace commbench
