// The NCCL backend (nccl_backend.hpp): GPU selection and communicator creation, buffers
// checked on the device, timed batches (eager or replayed CUDA graphs) and sub-communicators.
#include "commbench/backend/nccl/nccl_backend.hpp"

#include <cuda_profiler_api.h>
#include <cuda_runtime.h>
#include <nccl.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <string_view>

#include <fmt/format.h>

#include "check_kernels.hpp"
#include "commbench/backend/collective_try.hpp"
#include "commbench/backend/device_selection.hpp"
#include "commbench/core/buffer_region.hpp"
#include "commbench/core/collective_descriptor.hpp"
#include "commbench/core/error.hpp"
#include "commbench/core/output_check.hpp"
#include "commbench/core/pci_bus_id.hpp"
#include "commbench/core/size.hpp"
#include "cuda_resources.hpp"
#include "nccl_buffers.hpp"
#include "nccl_calls.hpp"
#include "nccl_state.hpp"
#include "nccl_state_access.hpp"
#include "nccl_support.hpp"

namespace commbench::nccl {

using namespace detail;

namespace {

constexpr unsigned char kStaleByte = 0xA5;  // fills outputs so stale results never pass a check

std::string graph_key(const OpCase& c, const Buffers& b) {
  return fmt::format("{}/{}/{}/{}/{}/{}/{}@{}", static_cast<int>(c.op), static_cast<int>(c.dtype),
                     static_cast<int>(c.redop), c.root, static_cast<int>(c.placement), c.shape.count,
                     to_string(c.distribution), reinterpret_cast<std::uintptr_t>(&b));
}

void create_device_objects(DeviceContext& d) {
  check_cuda(cudaSetDevice(d.device), fmt::format("cudaSetDevice({})", d.device));
  check_cuda(cudaStreamCreateWithFlags(&d.stream, cudaStreamNonBlocking), "cudaStreamCreate");
  check_cuda(cudaEventCreate(&d.start), "cudaEventCreate");
  check_cuda(cudaEventCreate(&d.stop), "cudaEventCreate");
  check_cuda(cudaMalloc(&d.counter, sizeof(unsigned long long)), "cudaMalloc");
}

// NCCL reads NCCL_PROFILER_PLUGIN when a communicator is created: STATIC_PLUGIN makes it
// look up ncclProfiler_v5 (then v4, v3) in the program itself, where
// backend/nccl_profiler_plugin.cpp defines them. A plugin the user named is theirs to keep.
std::optional<std::string> load_profiler_plugin() {
  const char* empty = "nccl_algo, nccl_proto, nccl_channels: empty";
  const char* theirs = std::getenv("NCCL_PROFILER_PLUGIN");
  if (theirs != nullptr && std::string_view(theirs) != kStaticProfilerPlugin)
    return fmt::format("{}: NCCL_PROFILER_PLUGIN={} is set, and that plugin is kept instead of commbench's", empty,
                       theirs);
  int version = 0;
  ncclGetVersion(&version);
  if (version < 22602)
    return fmt::format("{}: NCCL {} has no profiler plugin interface v3 (NCCL 2.26.2 and newer)", empty,
                       version_text(version));
  ::setenv("NCCL_PROFILER_PLUGIN", kStaticProfilerPlugin, 1);
  return std::nullopt;
}

}  // namespace

NcclBackend::NcclBackend(std::unique_ptr<Bootstrap> group, const NcclOptions& options)
    : group_(std::move(group)), state_(std::make_shared<State>()) {
  State& state = *state_;
  state.options = options;
  state.who = fmt::format("rank {} (host {})", group_->rank(), group_->hostname());
  const int gpus_per_process = options.gpus_per_process;

  // What every process of this node sees decides between "the launcher bound GPUs per
  // process" and "share the node's GPUs by local rank" (see device_selection.hpp).
  const std::vector<std::string> everyone = group_->all_gather(join(visible_pci_bus_ids(), ','));
  DeviceSelectionInput selection_input;
  for (int r = 0; r < group_->size(); ++r)
    if (group_->hostnames()[static_cast<std::size_t>(r)] == group_->hostname())
      selection_input.node_visible.push_back(split_text(everyone[static_cast<std::size_t>(r)], ','));

  DeviceSelection selection;
  collective_try(*group_, [&] {
    selection_input.local_rank = group_->local_rank();
    selection_input.gpus_per_process = gpus_per_process;
    selection_input.cuda_visible_devices = environment("CUDA_VISIBLE_DEVICES");
    selection_input.slurm_localid = environment("SLURM_LOCALID");
    selection_input.host = group_->hostname();
    selection = select_devices(selection_input);
    for (int i = 0; i < gpus_per_process; ++i) {
      DeviceContext d;
      d.device = selection.devices[static_cast<std::size_t>(i)];
      d.rank = group_->rank() * gpus_per_process + i;
      create_device_objects(d);
      cudaDeviceProp prop{};
      check_cuda(cudaGetDeviceProperties(&prop, d.device), "cudaGetDeviceProperties");
      char bus[32] = {};
      check_cuda(cudaDeviceGetPCIBusId(bus, sizeof bus, d.device), "cudaDeviceGetPCIBusId");
      d.compute_major = prop.major;
      d.bus_id = canonical_pci_bus_id(bus).value_or(bus);
      d.description = fmt::format("GPU {} (NCCL rank {}): {}, PCI {}, sm_{}{}, {}; {}", d.device, d.rank, prop.name,
                                  bus, prop.major, prop.minor, format_size(prop.totalGlobalMem), selection.reason);
      state.devices.push_back(d);
    }
  });

  state.nranks = group_->size() * gpus_per_process;
  state.choices_unavailable = load_profiler_plugin();
  // NCCL runs a one-rank collective as a copy on the GPU, choosing no algorithm, so the
  // plugin sees nothing to record (ncclLaunchOneRank).
  if (!state.choices_unavailable && state.nranks == 1)
    state.choices_unavailable =
        "nccl_algo, nccl_proto, nccl_channels: empty: on one rank NCCL runs each collective as a copy on the GPU "
        "and chooses no algorithm, protocol or channels";
  std::string id_bytes;
  collective_try(*group_, [&] {
    if (group_->rank() != 0) return;
    ncclUniqueId id{};
    check_nccl(ncclGetUniqueId(&id), "ncclGetUniqueId");
    id_bytes.assign(reinterpret_cast<const char*>(&id), sizeof id);
  });
  id_bytes = group_->broadcast(id_bytes, 0);
  ncclUniqueId id{};
  std::memcpy(&id, id_bytes.data(), sizeof id);

  // Grouped so that one process can create the communicators of all its GPUs (-g N).
  try {
    collective_try(*group_, [&] {
      check_nccl(ncclGroupStart(), "ncclGroupStart");
      for (DeviceContext& d : state.devices) {
        check_cuda(cudaSetDevice(d.device), "cudaSetDevice");
        ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
        config.blocking = 1;
        check_nccl(ncclCommInitRankConfig(&d.comm, state.nranks, id, d.rank, &config), "ncclCommInitRankConfig");
      }
      check_nccl(ncclGroupEnd(), "ncclCommInitRankConfig (group)");
    });
  } catch (...) {
    // The communicators created here would be finalized by ~State, which waits for the
    // peers whose creation failed: abort them instead, so every rank can report and exit.
    state.abort_all();
    throw;
  }
}

NcclBackend::NcclBackend(std::unique_ptr<Bootstrap> group, std::shared_ptr<State> state)
    : group_(std::move(group)), state_(std::move(state)) {}

NcclBackend::~NcclBackend() {
  // Destroying a communicator waits for its peers; while an error unwinds, they may never
  // come. Abort instead, so the process can report and exit.
  if (std::uncaught_exceptions() > 0 && state_.use_count() == 1) state_->abort_all();
}

int NcclBackend::ranks() const { return state_->nranks; }

std::string NcclBackend::library_version() const {
  int nccl_runtime = 0, cuda_runtime = 0, driver = 0;
  ncclGetVersion(&nccl_runtime);
  cudaRuntimeGetVersion(&cuda_runtime);
  cudaDriverGetVersion(&driver);
  auto cuda_text = [](int v) { return fmt::format("{}.{}", v / 1000, v % 1000 / 10); };
  return "NCCL " + version_text(nccl_runtime) + " (headers " + version_text(NCCL_VERSION_CODE) + "), CUDA runtime " +
         cuda_text(cuda_runtime) + ", driver " + cuda_text(driver);
}

std::vector<std::string> NcclBackend::device_descriptions() const {
  std::vector<std::string> lines;
  for (const DeviceContext& d : state_->devices) lines.push_back(d.description);
  return lines;
}

std::vector<std::string> NcclBackend::device_bus_ids() const {
  std::vector<std::string> ids;
  for (const DeviceContext& d : state_->devices) ids.push_back(d.bus_id);
  return ids;
}

std::optional<std::string> NcclBackend::unsupported_reason(Collective, DataType dtype, ReduceOp) const {
  if (dtype == DataType::float8_e4m3 || dtype == DataType::float8_e5m2) {
    int version = 0;
    ncclGetVersion(&version);
    if (version < 22400) return "-d/--dtype " + std::string(name_of(dtype)) + " needs NCCL 2.24 or newer";
    for (const DeviceContext& d : state_->devices)
      if (d.compute_major < 9)
        return fmt::format("-d/--dtype {} needs sm_90 or newer (GPU {} is sm_{}x)", name_of(dtype), d.device,
                           d.compute_major);
  }
  return std::nullopt;
}

std::optional<std::string> NcclBackend::unsupported_in_place(Collective op) const {
  if (!nccl_call(op).no_in_place.empty()) return std::string(nccl_call(op).no_in_place);
  return missing_in_place_form(op);
}

void NcclBackend::validate_plan(std::span<const OpCase>) const {}

// Each device this process drives holds `bytes_per_rank` (one NCCL rank per device).
void NcclBackend::require_memory(std::uint64_t bytes_per_rank, const std::string& what) {
  collective_try(*group_, [&] {
    for (const DeviceContext& d : state_->devices) {
      const std::size_t free_bytes = free_memory_on(d.device);
      if (bytes_per_rank > free_bytes)
        throw UsageError(fmt::format("{} need {} on GPU {} of {}, but only {} is free", what,
                                     format_size(bytes_per_rank), d.device, state_->who, format_size(free_bytes)));
    }
  });
}

std::unique_ptr<Buffers> NcclBackend::allocate(std::uint64_t send_bytes, std::uint64_t recv_bytes) {
  std::unique_ptr<NcclBuffers> buffers;
  collective_try(*group_, [&] {
    buffers = std::make_unique<NcclBuffers>(state_, send_bytes, recv_bytes, state_->options.register_buffers);
    for (DeviceContext& d : state_->devices) {
      const std::size_t free_bytes = free_memory_on(d.device);
      if (send_bytes + recv_bytes > free_bytes)
        throw UsageError(fmt::format("-e/--max-bytes: buffers need {} on GPU {} of {}, but only {} is free",
                                     format_size(send_bytes + recv_bytes), d.device, state_->who,
                                     format_size(free_bytes)));
      // Recorded before allocating, so the destructor frees whatever was allocated if a
      // later step throws.
      buffers->per_device.push_back(DeviceBuffers{d.device, d.comm});
      DeviceBuffers& b = buffers->per_device.back();
      b.send = buffers->allocate(send_bytes, d.stream);
      b.recv = buffers->allocate(recv_bytes, d.stream);
      if (buffers->registered()) {
        check_nccl(ncclCommRegister(d.comm, b.send, std::max<std::uint64_t>(send_bytes, 256), &b.send_handle),
                   "ncclCommRegister", d.comm);
        check_nccl(ncclCommRegister(d.comm, b.recv, std::max<std::uint64_t>(recv_bytes, 256), &b.recv_handle),
                   "ncclCommRegister", d.comm);
      }
    }
  });
  return buffers;
}

void NcclBackend::fill_inputs(const OpCase& c, Buffers& buffers) {
  NcclBuffers& b = device_buffers(buffers);
  for (std::size_t i = 0; i < state_->devices.size(); ++i) {
    const DeviceContext& d = state_->devices[i];
    check_cuda(cudaSetDevice(d.device), "cudaSetDevice");
    check_cuda(cudaMemsetAsync(b.per_device[i].recv, kStaleByte, b.recv_capacity(), d.stream), "cudaMemsetAsync");
    const BufferRegion in = input_region(c, d.rank);
    const CheckSpec spec = check_spec_for(c, d.rank, state_->nranks);
    launch_fill(c.dtype, data_of(b.per_device[i], in, c.dtype), in.elements, spec, 0, d.stream);
    check_cuda(cudaGetLastError(), "fill kernel launch");
  }
  state_->synchronize("filling check inputs");
}

std::uint64_t NcclBackend::count_wrong(const OpCase& c, Buffers& buffers) {
  NcclBuffers& b = device_buffers(buffers);
  std::vector<unsigned long long> counts(state_->devices.size(), 0);
  for (std::size_t i = 0; i < state_->devices.size(); ++i) {
    const DeviceContext& d = state_->devices[i];
    check_cuda(cudaSetDevice(d.device), "cudaSetDevice");
    const CheckSpec spec = check_spec_for(c, d.rank, state_->nranks);
    check_cuda(cudaMemsetAsync(d.counter, 0, sizeof(unsigned long long), d.stream), "cudaMemsetAsync");
    if (output_is_defined(spec)) {
      const BufferRegion out = output_region(c, d.rank, state_->nranks);
      std::byte* data = data_of(b.per_device[i], out, c.dtype);
      for (const CheckedPiece& piece : checked_pieces(c, d.rank, state_->nranks, out.elements))
        launch_count_mismatches(c.dtype, data + piece.first_element * size_of(c.dtype), piece.elements, piece.spec,
                                piece.first_index, d.counter, d.stream);
      check_cuda(cudaGetLastError(), "check kernel launch");
    }
    check_cuda(cudaMemcpyAsync(&counts[i], d.counter, sizeof(unsigned long long), cudaMemcpyDeviceToHost, d.stream),
               "cudaMemcpyAsync");
  }
  state_->synchronize("counting wrong elements");
  std::uint64_t total = 0;
  for (unsigned long long n : counts) total += n;
  return total;
}

void NcclBackend::corrupt_output(const OpCase& c, Buffers& buffers) {
  NcclBuffers& b = device_buffers(buffers);
  const DeviceContext& d = state_->devices.front();
  if (!output_is_defined(check_spec_for(c, d.rank, state_->nranks))) return;
  check_cuda(cudaSetDevice(d.device), "cudaSetDevice");
  const BufferRegion out = output_region(c, d.rank, state_->nranks);
  if (out.elements == 0) return;  // alltoallv: nothing was sent to this rank
  launch_corrupt(c.dtype, data_of(b.per_device.front(), out, c.dtype), 0, d.stream);
  state_->synchronize("corrupting an element");
}

void NcclBackend::run_single(const OpCase& c, Buffers& buffers) {
  enqueue_all(c, device_buffers(buffers), *state_);
  state_->synchronize(describe(c).c_str());
}

double NcclBackend::time_batch(const OpCase& c, Buffers& buffers, std::uint64_t iterations) {
  State& state = *state_;
  NcclBuffers& b = device_buffers(buffers);
  const std::uint64_t per_graph = state.options.cuda_graph_iterations;
  if (per_graph > 0 && state.graph_key != graph_key(c, buffers)) {
    // One eager operation first: NCCL connects peers on first use, which must not happen
    // inside a capture. Then capture `per_graph` operations; replays cost one launch each.
    run_single(c, buffers);
    state.destroy_graphs();
    for (DeviceContext& d : state.devices) {
      check_cuda(cudaSetDevice(d.device), "cudaSetDevice");
      check_cuda(cudaStreamBeginCapture(d.stream, cudaStreamCaptureModeRelaxed), "cudaStreamBeginCapture");
    }
    try {
      for (std::uint64_t i = 0; i < per_graph; ++i) enqueue_all(c, b, state);
    } catch (...) {
      for (DeviceContext& d : state.devices) {  // leave no stream capturing
        cudaSetDevice(d.device);
        cudaGraph_t partial = nullptr;
        if (cudaStreamEndCapture(d.stream, &partial) == cudaSuccess && partial != nullptr) cudaGraphDestroy(partial);
      }
      throw;
    }
    for (DeviceContext& d : state.devices) {
      check_cuda(cudaSetDevice(d.device), "cudaSetDevice");
      cudaGraph_t graph = nullptr;
      check_cuda(cudaStreamEndCapture(d.stream, &graph), "cudaStreamEndCapture");
      check_cuda(cudaGraphInstantiate(&d.graph, graph, 0), "cudaGraphInstantiate");
      cudaGraphDestroy(graph);
    }
    state.graph_key = graph_key(c, buffers);
  }

  for (DeviceContext& d : state.devices) {
    check_cuda(cudaSetDevice(d.device), "cudaSetDevice");
    check_cuda(cudaEventRecord(d.start, d.stream), "cudaEventRecord");
  }
  std::uint64_t executed = iterations;
  if (per_graph > 0) {
    const std::uint64_t launches = (iterations + per_graph - 1) / per_graph;
    for (std::uint64_t l = 0; l < launches; ++l)
      for (DeviceContext& d : state.devices) {
        check_cuda(cudaSetDevice(d.device), "cudaSetDevice");
        check_cuda(cudaGraphLaunch(d.graph, d.stream), "cudaGraphLaunch");
      }
    executed = launches * per_graph;
  } else {
    for (std::uint64_t i = 0; i < iterations; ++i) {
      enqueue_all(c, b, state);
      if (state.options.blocking) state.synchronize("waiting for one operation (--blocking)");
    }
  }
  std::vector<cudaEvent_t> stops;
  for (DeviceContext& d : state.devices) {
    check_cuda(cudaSetDevice(d.device), "cudaSetDevice");
    check_cuda(cudaEventRecord(d.stop, d.stream), "cudaEventRecord");
    stops.push_back(d.stop);
  }
  state.wait_for(stops, describe(c).c_str());
  float slowest_ms = 0;
  for (DeviceContext& d : state.devices) {
    float ms = 0;
    check_cuda(cudaEventElapsedTime(&ms, d.start, d.stop), "cudaEventElapsedTime");
    slowest_ms = std::max(slowest_ms, ms);
  }
  // A graph replays whole captures; report the time of the iterations asked for.
  return static_cast<double>(slowest_ms) / 1e3 * static_cast<double>(iterations) / static_cast<double>(executed);
}

std::unique_ptr<PendingOperation> NcclBackend::start(const OpCase& c, Buffers& buffers) {
  enqueue_all(c, device_buffers(buffers), *state_);
  std::vector<cudaStream_t> streams;
  for (const DeviceContext& d : state_->devices) streams.push_back(d.stream);
  return pending_on(state_, streams);
}

std::unique_ptr<Backend> NcclBackend::split(int color, int key) {
  auto sub_group = group_->split(color, key);
  auto sub = std::make_shared<State>();
  sub->options = state_->options;
  sub->who = state_->who;
  const int devices_per_process = static_cast<int>(state_->devices.size());
  sub->nranks = sub_group->size() * devices_per_process;
  collective_try(*group_, [&] {
    for (const DeviceContext& parent : state_->devices) {
      DeviceContext d;
      d.device = parent.device;
      d.compute_major = parent.compute_major;
      d.description = parent.description;
      d.bus_id = parent.bus_id;  // the sub-communicator's GPUs are the parent's
      create_device_objects(d);
      sub->devices.push_back(d);
    }
    check_nccl(ncclGroupStart(), "ncclGroupStart");
    for (std::size_t i = 0; i < state_->devices.size(); ++i) {
      check_cuda(cudaSetDevice(state_->devices[i].device), "cudaSetDevice");
      ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
      config.blocking = 1;
      check_nccl(ncclCommSplit(state_->devices[i].comm, color, key * devices_per_process + static_cast<int>(i),
                               &sub->devices[i].comm, &config),
                 "ncclCommSplit", state_->devices[i].comm);
    }
    check_nccl(ncclGroupEnd(), "ncclCommSplit (group)");
    for (DeviceContext& d : sub->devices) check_nccl(ncclCommUserRank(d.comm, &d.rank), "ncclCommUserRank", d.comm);
  });
  return std::unique_ptr<Backend>(new NcclBackend(std::move(sub_group), std::move(sub)));
}

void NcclBackend::abort() noexcept { state_->abort_all(); }

NcclChoiceSummary NcclBackend::take_library_choices() {
  return state_->choices_unavailable ? NcclChoiceSummary{} : nccl_choice_tally().take();
}

std::optional<std::string> NcclBackend::library_choices_unavailable() const { return state_->choices_unavailable; }

void NcclBackend::set_capture_range(bool start) {
  // The profiler captures per context: every device this process drives.
  for (const DeviceContext& d : state_->devices) {
    check_cuda(cudaSetDevice(d.device), "cudaSetDevice");
    check_cuda(start ? cudaProfilerStart() : cudaProfilerStop(), start ? "cudaProfilerStart" : "cudaProfilerStop");
  }
}

}  // namespace commbench::nccl
