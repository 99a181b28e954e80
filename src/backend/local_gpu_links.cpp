#include "commbench/backend/local_gpu_links.hpp"

namespace commbench {

std::string_view name_of(GpuCopyMethod method) {
  switch (method) {
    case GpuCopyMethod::copy_engine: return "copy-engine";
    case GpuCopyMethod::sm_kernel: return "sm-copy";
    case GpuCopyMethod::nccl: return "nccl";
  }
  return "copy-engine";
}

}  // namespace commbench
