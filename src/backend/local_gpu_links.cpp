#include "commbench/backend/local_gpu_links.hpp"

#include <array>

#include "commbench/core/name_lookup.hpp"

namespace commbench {
namespace {

using NamedMethod = detail::NamedValue<GpuCopyMethod>;
constexpr std::array kMethodNames{NamedMethod{"copy-engine", GpuCopyMethod::copy_engine},
                                  NamedMethod{"sm-copy", GpuCopyMethod::sm_kernel},
                                  NamedMethod{"nccl", GpuCopyMethod::nccl}};

}  // namespace

std::string_view name_of(GpuCopyMethod method) { return detail::name_in<GpuCopyMethod>(kMethodNames, method); }

std::optional<GpuCopyMethod> copy_method_named(std::string_view name) {
  return detail::value_named<GpuCopyMethod>(kMethodNames, name);
}

}  // namespace commbench
