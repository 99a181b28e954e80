#include "commbench/p2p/local_link_plan.hpp"

#include <algorithm>
#include <map>
#include <set>

#include <fmt/format.h>

#include "commbench/core/number_text.hpp"
#include "commbench/core/size.hpp"

namespace commbench {
namespace {

std::string gpu_device(const LocalNode& node, int gpu) {
  return "GPU " + node.bus_ids[static_cast<std::size_t>(gpu)];
}

std::string host_device(const LocalLinkTest& test) {
  return test.memory.pinned ? (test.memory.numa >= 0 ? fmt::format("host NUMA {} pinned", test.memory.numa)
                                                     : std::string("host pinned"))
                            : std::string("host pageable");
}

bool has_access(const LocalNode& node, int source, int destination) {
  return node.access[static_cast<std::size_t>(source)][static_cast<std::size_t>(destination)].supported;
}

// The host memory of each role for `gpu`: its own node, the first other node after it
// (wrapping), pageable. A role the host cannot offer is left out with a note.
std::vector<std::pair<HostMemoryRole, HostMemory>> host_memories(const LocalNode& node, int gpu,
                                                                 std::vector<std::string>& notes) {
  const int near = node.gpu_numa[static_cast<std::size_t>(gpu)];
  std::vector<std::pair<HostMemoryRole, HostMemory>> memories{{HostMemoryRole::pinned_near, {true, near}}};
  std::optional<int> far;
  if (near >= 0) {
    for (const int numa : node.numa_nodes)
      if (numa > near) {
        far = numa;
        break;
      }
    for (const int numa : node.numa_nodes)
      if (!far && numa != near) far = numa;
  }
  if (far)
    memories.push_back({HostMemoryRole::pinned_far, {true, *far}});
  else if (gpu == 0)
    notes.push_back(near < 0 ? "the GPUs' NUMA nodes are unknown: no pinned-far test, pinned-near memory is not bound"
                             : "the host has one NUMA node: no pinned-far test");
  memories.push_back({HostMemoryRole::pageable, {false, -1}});
  return memories;
}

}  // namespace

LocalLinkPlan plan_local_links(const LocalNode& node, const LocalPlanRequest& request) {
  LocalLinkPlan plan;
  const int gpus = static_cast<int>(node.bus_ids.size());
  for (const GpuCopyMethod method : request.methods) {
    for (int source = 0; source < gpus; ++source)
      for (int destination = 0; destination < gpus; ++destination) {
        if (source == destination) continue;
        if (method == GpuCopyMethod::sm_kernel && !has_access(node, source, destination)) {
          plan.notes.push_back(fmt::format("no sm-copy {} -> {}: {} cannot reach {}'s memory (no peer access)", source,
                                           destination, gpu_device(node, source), gpu_device(node, destination)));
          continue;
        }
        LocalLinkTest test;
        test.method = method;
        test.source = source;
        test.destination = destination;
        plan.tests.push_back(test);
        if (request.both_ways && source < destination &&
            (method != GpuCopyMethod::sm_kernel || has_access(node, destination, source))) {
          test.both_ways = true;
          plan.tests.push_back(test);
        }
      }
  }
  if (!request.host) return plan;
  if (request.both_ways && gpus > 0)
    plan.notes.push_back(
        "pageable memory is not measured both ways: the driver copies it with the calling thread, one direction "
        "after the other");
  for (int gpu = 0; gpu < gpus; ++gpu)
    for (const auto& [role, memory] : host_memories(node, gpu, plan.notes))
      for (const LocalTransfer transfer : {LocalTransfer::host_to_gpu, LocalTransfer::gpu_to_host}) {
        LocalLinkTest test;
        test.transfer = transfer;
        test.role = role;
        test.memory = memory;
        test.gpu = gpu;
        plan.tests.push_back(test);
        if (request.both_ways && transfer == LocalTransfer::host_to_gpu && role != HostMemoryRole::pageable) {
          test.both_ways = true;
          plan.tests.push_back(test);
        }
      }
  return plan;
}

std::string method_text(const LocalLinkTest& test) {
  if (test.transfer == LocalTransfer::gpu_to_gpu) return std::string(name_of(test.method));
  switch (test.role) {
    case HostMemoryRole::pinned_near: return "pinned-near";
    case HostMemoryRole::pinned_far: return "pinned-far";
    case HostMemoryRole::pageable: return "pageable";
  }
  return "pageable";
}

std::vector<PairCell> local_cells(const LocalNode& node, const LocalLinkTest& test, const CopyRequest& request,
                                  const CopyTiming& timing) {
  PairCell cell;
  cell.src_host = cell.dst_host = node.host;
  cell.src_rank = cell.dst_rank = node.rank;
  cell.bytes = request.bytes;
  cell.method = method_text(test);
  cell.direction = test.both_ways ? PairDirection::both : PairDirection::forward;
  cell.gbps = timing.seconds > 0 ? static_cast<double>(request.bytes) / timing.seconds / 1e9 : 0;
  std::string source, destination;
  switch (test.transfer) {
    case LocalTransfer::gpu_to_gpu:
      source = gpu_device(node, test.source);
      destination = gpu_device(node, test.destination);
      break;
    case LocalTransfer::host_to_gpu:
      source = host_device(test);
      destination = gpu_device(node, test.gpu);
      break;
    case LocalTransfer::gpu_to_host:
      source = gpu_device(node, test.gpu);
      destination = host_device(test);
      break;
  }
  cell.src_device = source;
  cell.dst_device = destination;
  cell.link = timing.note;
  std::vector<PairCell> cells{cell};
  if (test.both_ways) {
    std::swap(cell.src_device, cell.dst_device);
    cells.push_back(cell);
  }
  return cells;
}

namespace {

std::vector<std::string> gpu_devices(const LocalNode& node) {
  std::vector<std::string> devices;
  for (int gpu = 0; gpu < static_cast<int>(node.bus_ids.size()); ++gpu) devices.push_back(gpu_device(node, gpu));
  return devices;
}

// Rows GPUs, a column per host memory and direction measured ("pinned-near h2d"), in the
// order the plan measured them.
std::string host_table_text(const LocalNode& node, const std::vector<PairCell>& cells) {
  std::vector<std::string> columns;
  std::map<std::pair<std::string, std::string>, std::string> text;
  for (const PairCell& cell : cells) {
    if (between_peers(cell)) continue;
    const bool to_gpu = cell.src_device.rfind("host", 0) == 0;
    const std::string gpu = to_gpu ? cell.dst_device : cell.src_device;
    const std::string column = cell.method + (cell.direction == PairDirection::both ? " both " : " ") +
                               (to_gpu ? "h2d" : "d2h");
    if (std::find(columns.begin(), columns.end(), column) == columns.end()) columns.push_back(column);
    text[{gpu, column}] = fixed_text(cell.gbps, 2) + (cell.flagged ? "!" : "");
  }
  if (columns.empty()) return "";
  std::size_t width = 9;
  for (const std::string& column : columns) width = std::max(width, column.size());
  std::string table = fmt::format("{:>8}", "GB/s");
  for (const std::string& column : columns) table += fmt::format(" {:>{}}", column, width);
  table += '\n';
  const std::vector<std::string> devices = gpu_devices(node);
  for (std::size_t gpu = 0; gpu < devices.size(); ++gpu) {
    table += fmt::format("{:>8}", gpu);
    for (const std::string& column : columns) {
      const auto found = text.find({devices[gpu], column});
      table += fmt::format(" {:>{}}", found == text.end() ? "-" : found->second, width);
    }
    table += '\n';
  }
  return table;
}

}  // namespace

std::string local_report_text(const LocalNode& node, const std::vector<PairCell>& cells) {
  const std::vector<std::string> devices = gpu_devices(node);
  std::string text = fmt::format("\n{}: {} GPU{}", node.host, devices.size(), devices.size() == 1 ? "" : "s");
  for (std::size_t gpu = 0; gpu < devices.size(); ++gpu)
    text += fmt::format("{} {} {}", gpu == 0 ? ":" : ",", gpu, node.bus_ids[gpu]);
  text += '\n';
  std::vector<std::pair<std::string, bool>> matrices;  // (method, both ways) in measured order
  for (const PairCell& cell : cells) {
    if (!between_peers(cell)) continue;
    const std::pair key{cell.method, cell.direction == PairDirection::both};
    if (std::find(matrices.begin(), matrices.end(), key) == matrices.end()) matrices.push_back(key);
  }
  for (const auto& [method, together] : matrices) {
    std::vector<PairCell> shown;
    for (const PairCell& cell : cells)
      if (between_peers(cell) && cell.method == method && (cell.direction == PairDirection::both) == together)
        shown.push_back(cell);
    text += fmt::format("\n{} bandwidth (GB/s), {}, {} messages; rows send, columns receive; ! = outlier\n{}",
                        method, together ? "both directions at once" : "one direction at a time",
                        format_size(shown.front().bytes), device_matrix_text(shown, devices, false));
  }
  std::vector<PairCell> latencies;
  for (const PairCell& cell : cells)
    if (between_peers(cell) && cell.latency_us) latencies.push_back(cell);
  if (!latencies.empty())
    text += fmt::format("\nload latency (us): one 8-byte load by a GPU (row) from a peer's memory (column)\n{}",
                        device_matrix_text(latencies, devices, true));
  const std::string host = host_table_text(node, cells);
  if (!host.empty()) {
    text += fmt::format("\nhost <-> GPU bandwidth (GB/s), copy engine; h2d = host to GPU, d2h = GPU to host\n{}", host);
    for (const PairCell& cell : cells)
      if (!between_peers(cell) && cell.latency_us && cell.direction != PairDirection::both)
        text += fmt::format("load latency of {} from {}: {} us\n", cell.dst_device, cell.src_device,
                            fixed_text(*cell.latency_us, 2));
  }
  return text;
}

PeerAccessCodes peer_access_codes(const LocalNode& node, const std::vector<std::vector<std::optional<bool>>>& nvlink) {
  const std::size_t gpus = node.bus_ids.size();
  PeerAccessCodes codes(gpus, std::vector<std::string>(gpus, "X"));
  for (std::size_t source = 0; source < gpus; ++source)
    for (std::size_t destination = 0; destination < gpus; ++destination) {
      if (source == destination) continue;
      const bool known = nvlink.size() > source && nvlink[source].size() > destination &&
                         nvlink[source][destination].has_value();
      const bool over_nvlink = known && nvlink[source][destination].value_or(false);
      codes[source][destination] = !node.access[source][destination].supported ? "host"
                                   : !known                                   ? "P2P?"
                                   : over_nvlink                              ? "NV"
                                                                              : "P2P";
    }
  return codes;
}

std::string peer_access_text(const PeerAccessCodes& codes) {
  std::string table = fmt::format("{:>8}", "access");
  for (std::size_t destination = 0; destination < codes.size(); ++destination)
    table += fmt::format(" {:>6}", destination);
  table += '\n';
  for (std::size_t source = 0; source < codes.size(); ++source) {
    table += fmt::format("{:>8}", source);
    for (const std::string& code : codes[source]) table += fmt::format(" {:>6}", code);
    table += '\n';
  }
  return table;
}

}  // namespace commbench
