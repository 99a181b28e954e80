#include "commbench/analysis/p2p_local_run.hpp"

#include <algorithm>
#include <concepts>
#include <cstdint>
#include <exception>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <type_traits>

#include <fmt/format.h>

#include "commbench/analysis/live_probe.hpp"
#include "commbench/analysis/local_node_model.hpp"
#include "commbench/backend/typed_exchange.hpp"
#include "commbench/config.hpp"
#include "commbench/core/error.hpp"
#include "commbench/topology/node_probe.hpp"

namespace commbench {
namespace {

// This node's topology as its first rank probed it, or why that failed.
struct NodeModel {
  std::optional<NodeTopology> topology;
  std::string failure;
};

NodeModel probe_own_node() {
  NodeModel model;
  try {
    model.topology = probe_node(probe_options_for_this_build("", "", ""));
  } catch (const Error& e) {
    model.failure = e.what();
  }
  return model;
}

std::string test_text(const LocalNode& node, const LocalLinkTest& test) {
  const auto gpu = [&](int index) {
    return fmt::format("GPU {} ({})", index, node.bus_ids[static_cast<std::size_t>(index)]);
  };
  const std::string ways = test.both_ways ? " both ways" : "";
  switch (test.transfer) {
    case LocalTransfer::gpu_to_gpu:
      return fmt::format("{} {} -> {}{}", method_text(test), gpu(test.source), gpu(test.destination), ways);
    case LocalTransfer::host_to_gpu: return fmt::format("{} host -> {}{}", method_text(test), gpu(test.gpu), ways);
    case LocalTransfer::gpu_to_host: return fmt::format("{} {} -> host{}", method_text(test), gpu(test.gpu), ways);
  }
  return method_text(test);
}

// What a node's first rank measured, as it travels to rank 0. The node's access matrix
// stays home: `peer_access` says it for the report.
struct NodeCells {
  LocalNodeResult result;
  std::uint64_t wrong_bytes = 0;
  std::vector<PairCell> cells;
};

template <typename Self, typename Visit>
requires std::same_as<std::remove_const_t<Self>, NodeCells>
void fields(Self& m, Visit& v) {
  v("host", m.result.node.host);
  v("rank", m.result.node.rank);
  v("gpus", m.result.node.bus_ids);
  v("gpu_numa", m.result.node.gpu_numa);
  v("numa_nodes", m.result.node.numa_nodes);
  v("peer_access", m.result.peer_access);
  v("notes", m.result.notes);
  v("wrong_bytes", m.wrong_bytes);
  v("cells", m.cells);
}

// One thing the node's first rank measures, under its own watchdog step.
struct WorkItem {
  std::string what;
  std::function<void()> run;
};

// What the first rank of a node measures and collects.
class NodeMeasurement {
 public:
  NodeMeasurement(const LocalRunSettings& settings, LocalGpuLinks& links, std::string host, int rank)
      : settings_(settings), links_(links), model_(probe_own_node()) {
    const int gpus = links.device_count();
    std::vector<std::string> bus_ids;
    std::vector<std::vector<PeerAccess>> access(static_cast<std::size_t>(gpus),
                                                std::vector<PeerAccess>(static_cast<std::size_t>(gpus)));
    for (int source = 0; source < gpus; ++source) {
      bus_ids.push_back(links.bus_id(source));
      for (int destination = 0; destination < gpus; ++destination)
        if (source != destination)
          access[static_cast<std::size_t>(source)][static_cast<std::size_t>(destination)] =
              links.peer_access(source, destination);
    }
    node_ = describe_local_node(topology(), std::move(host), rank, std::move(bus_ids), std::move(access));
    plan_ = plan_local_links(node_, settings.plan);
  }

  std::vector<WorkItem> work() {
    std::vector<WorkItem> items;
    for (const LocalLinkTest& test : plan_.tests)
      items.push_back({"measuring " + test_text(node_, test), [this, test] { measure(test); }});
    if (settings_.latency_loads == 0) return items;
    const int gpus = static_cast<int>(node_.bus_ids.size());
    for (int source = 0; source < gpus; ++source)
      for (int destination = 0; destination < gpus; ++destination)
        if (source != destination &&
            node_.access[static_cast<std::size_t>(source)][static_cast<std::size_t>(destination)].supported)
          items.push_back(
              {fmt::format("timing loads of GPU {} from GPU {}", source, destination), [this, source, destination] {
                 gpu_latency_us_[{source, destination}] =
                     1e6 * links_.load_latency_seconds(source, destination, -1, settings_.latency_loads);
               }});
    if (settings_.plan.host)
      for (int gpu = 0; gpu < gpus; ++gpu)
        items.push_back({fmt::format("timing loads of GPU {} from host memory", gpu), [this, gpu] {
                           host_latency_us_[gpu] =
                               1e6 * links_.load_latency_seconds(gpu, std::nullopt,
                                                                 node_.gpu_numa[static_cast<std::size_t>(gpu)],
                                                                 settings_.latency_loads);
                         }});
    return items;
  }

  // The node's report, once every item has run: latencies joined to their cells.
  NodeCells result() {
    for (PairCell& cell : cells_) {
      if (cell.direction == PairDirection::both) continue;
      const int source = index_of(cell.src_device);
      const int destination = index_of(cell.dst_device);
      if (between_peers(cell)) {
        if (const auto found = gpu_latency_us_.find({source, destination}); found != gpu_latency_us_.end())
          cell.latency_us = found->second;
      } else if (cell.method == "pinned-near" && destination >= 0) {
        if (const auto found = host_latency_us_.find(destination); found != host_latency_us_.end())
          cell.latency_us = found->second;
      }
    }
    NodeCells measured;
    measured.result.node.host = node_.host;
    measured.result.node.rank = node_.rank;
    measured.result.node.bus_ids = node_.bus_ids;
    measured.result.node.gpu_numa = node_.gpu_numa;
    measured.result.node.numa_nodes = node_.numa_nodes;
    measured.result.peer_access = peer_access_codes(node_, nvlink_matrix(topology(), node_.bus_ids));
    measured.result.notes = plan_.notes;
    if (!model_.topology) measured.result.notes.push_back("topology probe failed: " + model_.failure);
    measured.wrong_bytes = wrong_bytes_;
    measured.cells = cells_;
    return measured;
  }

 private:
  void measure(const LocalLinkTest& test) {
    CopyRequest request = settings_.copy;
    request.both_ways = test.both_ways;
    const CopyTiming timing =
        test.transfer == LocalTransfer::gpu_to_gpu
            ? links_.gpu_to_gpu(test.method, test.source, test.destination, request)
            : links_.host_and_gpu(test.gpu, test.transfer == LocalTransfer::host_to_gpu, test.memory, request);
    wrong_bytes_ += timing.wrong_bytes;
    const LinkSpec spec = local_link_spec(topology(), model_.failure, node_, test);
    for (PairCell& cell : local_cells(node_, test, request, timing)) {
      apply_link_spec(spec, cell);
      cells_.push_back(std::move(cell));
    }
  }

  const NodeTopology* topology() const { return model_.topology ? &*model_.topology : nullptr; }

  int index_of(const std::string& device) const {
    for (std::size_t gpu = 0; gpu < node_.bus_ids.size(); ++gpu)
      if (device == "GPU " + node_.bus_ids[gpu]) return static_cast<int>(gpu);
    return -1;
  }

  const LocalRunSettings& settings_;
  LocalGpuLinks& links_;
  NodeModel model_;
  LocalNode node_;
  LocalLinkPlan plan_;
  std::vector<PairCell> cells_;
  std::map<std::pair<int, int>, double> gpu_latency_us_;
  std::map<int, double> host_latency_us_;
  std::uint64_t wrong_bytes_ = 0;
};

}  // namespace

LocalRunResult run_local_links(JobSteps& session, const LocalRunSettings& settings,
                               const std::function<void()>& opened) {
  Bootstrap& world = session.world();
  const bool measures = world.local_rank() == 0;
  std::unique_ptr<LocalGpuLinks> links;
  std::unique_ptr<NodeMeasurement> measurement;
  // Freeing GPU memory and destroying NCCL communicators can wait on a stuck GPU. On the
  // way out after an error no watchdog step holds them, so they are left to the process's
  // exit instead; on success they are released inside a step of their own (below).
  struct LeaveToExitOnError {
    std::unique_ptr<LocalGpuLinks>& links;
    std::unique_ptr<NodeMeasurement>& measurement;
    int exceptions_at_start = std::uncaught_exceptions();
    ~LeaveToExitOnError() {
      if (std::uncaught_exceptions() == exceptions_at_start) return;
      (void)measurement.release();
      (void)links.release();
    }
  } leave_to_exit{links, measurement};
  std::vector<WorkItem> items;
  session.step("opening this node's GPUs and probing its topology", [&] {
    if (!measures) return;
#if COMMBENCH_HAVE_NCCL
    links = open_local_gpu_links();
    links->require_room_for_buffers(settings.copy.bytes);
#else
    throw UsageError("--local: this bench-p2p was built without CUDA (configure with -DCOMMBENCH_WITH_NCCL=ON)");
#endif
    measurement = std::make_unique<NodeMeasurement>(settings, *links, world.hostname(), world.rank());
    items = measurement->work();
  });
  int steps = 0;
  session.step("agreeing on the number of measurements", [&] { steps = world.max(static_cast<int>(items.size())); });
  opened();
  for (int step = 0; step < steps; ++step) {
    const auto item = static_cast<std::size_t>(step);
    session.step(item < items.size() ? items[item].what : "waiting for another node's GPUs", [&] {
      if (item < items.size()) items[item].run();
    });
  }
  LocalRunResult result;
  session.step("gathering every node's cells", [&] {
    const std::optional<NodeCells> own = measurement ? std::optional(measurement->result()) : std::nullopt;
    const std::vector<std::optional<NodeCells>> gathered = all_gather_as(world, own);
    if (world.rank() != 0) return;
    for (const std::optional<NodeCells>& node : gathered) {
      if (!node) continue;
      result.nodes.push_back(node->result);
      result.wrong_bytes += node->wrong_bytes;
      result.cells.insert(result.cells.end(), node->cells.begin(), node->cells.end());
    }
  });
  session.step("releasing this node's GPUs", [&] {
    measurement.reset();
    links.reset();
  });
  return result;
}

}  // namespace commbench
