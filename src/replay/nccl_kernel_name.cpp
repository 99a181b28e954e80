#include "commbench/replay/nccl_kernel_name.hpp"

#include <array>
#include <vector>

namespace commbench {

namespace {

struct NamedCollective {
  std::string_view nccl;
  std::string_view op;
};

constexpr std::array kCollectives{NamedCollective{"AllReduce", "allreduce"},
                                  NamedCollective{"AllGather", "allgather"},
                                  NamedCollective{"ReduceScatter", "reducescatter"},
                                  NamedCollective{"Broadcast", "broadcast"},
                                  NamedCollective{"Reduce", "reduce"},
                                  NamedCollective{"SendRecv", "sendrecv"},
                                  NamedCollective{"AllToAll", "alltoall"}};

// Longest first: NVLS_TREE before NVLS, COLLNET_DIRECT before its parts.
constexpr std::array<std::string_view, 7> kAlgorithms{"COLLNET_DIRECT", "COLLNET_CHAIN", "NVLS_TREE", "NVLS",
                                                      "RING",           "TREE",          "PAT"};
constexpr std::array<std::string_view, 3> kProtocols{"LL128", "SIMPLE", "LL"};

std::vector<std::string_view> split(std::string_view text) {
  std::vector<std::string_view> parts;
  while (!text.empty()) {
    const std::size_t at = text.find('_');
    parts.push_back(text.substr(0, at));
    if (at == std::string_view::npos) break;
    text.remove_prefix(at + 1);
  }
  return parts;
}

// The algorithm and protocol among `parts`, which may spell an algorithm in two parts
// ("NVLS", "TREE"; "COLLNET", "DIRECT").
void find_algorithm_and_protocol(const std::vector<std::string_view>& parts, NcclKernelName& kernel) {
  for (std::size_t i = 0; i < parts.size(); ++i) {
    const std::string joined =
        i + 1 < parts.size() ? std::string(parts[i]) + "_" + std::string(parts[i + 1]) : std::string(parts[i]);
    for (const std::string_view algo : kAlgorithms) {
      if (kernel.algo.empty() && (joined == algo || parts[i] == algo)) kernel.algo = std::string(algo);
    }
    for (const std::string_view proto : kProtocols)
      if (kernel.proto.empty() && parts[i] == proto) kernel.proto = std::string(proto);
  }
}

}  // namespace

std::optional<NcclKernelName> parse_nccl_kernel_name(std::string_view name) {
  name = name.substr(0, name.find('('));
  std::string_view rest;
  for (const std::string_view prefix : {"ncclDevKernel_", "ncclKernel_"})
    if (name.substr(0, prefix.size()) == prefix) rest = name.substr(prefix.size());
  if (rest.empty()) return std::nullopt;
  const std::vector<std::string_view> parts = split(rest);
  NcclKernelName kernel;
  if (parts.front() == "Generic") return kernel;
  for (const NamedCollective& collective : kCollectives)
    if (parts.front() == collective.nccl) kernel.op = std::string(collective.op);
  if (kernel.op.empty()) return std::nullopt;
  find_algorithm_and_protocol(parts, kernel);
  return kernel;
}

}  // namespace commbench
