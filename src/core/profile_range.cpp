#include "commbench/core/profile_range.hpp"

#include <array>
#include <atomic>
#include <cstdlib>

#include "commbench/config.hpp"

#if COMMBENCH_HAVE_NVTX
#include <nvtx3/nvToolsExt.h>
#endif

namespace commbench {
namespace {

std::atomic<ProfileCategory> current_category{ProfileCategory::collectives};

#if COMMBENCH_HAVE_NVTX
// The domain is created on first use; NVTX itself loads the tool then.
nvtxDomainHandle_t commbench_domain() {
  static const nvtxDomainHandle_t domain = [] {
    const nvtxDomainHandle_t created = nvtxDomainCreateA("commbench");
    constexpr std::array<std::pair<ProfileCategory, const char*>, 5> kNames = {{
        {ProfileCategory::collectives, "bench-collectives"},
        {ProfileCategory::patterns, "bench-patterns"},
        {ProfileCategory::p2p, "bench-p2p"},
        {ProfileCategory::validate, "bench-validate"},
        {ProfileCategory::topology, "bench-topology"},
    }};
    for (const auto& [category, name] : kNames)
      nvtxDomainNameCategoryA(created, static_cast<std::uint32_t>(category), name);
    return created;
  }();
  return domain;
}
#endif

}  // namespace

void set_profile_category(ProfileCategory category) { current_category.store(category); }

bool profiler_attached() {
#if COMMBENCH_HAVE_NVTX
  static const bool attached = [] {
    const char* tool = std::getenv("NVTX_INJECTION64_PATH");
    return tool != nullptr && *tool != '\0';
  }();
  return attached;
#else
  return false;
#endif
}

void ProfileRange::push(const std::string& name) {
#if COMMBENCH_HAVE_NVTX
  nvtxEventAttributes_t attributes{};
  attributes.version = NVTX_VERSION;
  attributes.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
  attributes.category = static_cast<std::uint32_t>(current_category.load());
  attributes.messageType = NVTX_MESSAGE_TYPE_ASCII;
  attributes.message.ascii = name.c_str();
  nvtxDomainRangePushEx(commbench_domain(), &attributes);
#else
  (void)name;
#endif
}

void ProfileRange::pop() {
#if COMMBENCH_HAVE_NVTX
  nvtxDomainRangePop(commbench_domain());
#endif
}

}  // namespace commbench
