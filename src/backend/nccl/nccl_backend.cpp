#include "commbench/backend/nccl/nccl_backend.hpp"

#include <cuda_profiler_api.h>
#include <cuda_runtime.h>
#include <nccl.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <thread>

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
#include "nccl_state_access.hpp"

namespace commbench::nccl {
namespace {

constexpr unsigned char kStaleByte = 0xA5;  // fills outputs so stale results never pass a check

void check_cuda(cudaError_t code, const std::string& what) {
  if (code != cudaSuccess) throw BackendError(what + ": " + cudaGetErrorString(code));
}

void check_nccl(ncclResult_t code, const std::string& what, ncclComm_t comm = nullptr) {
  if (code == ncclSuccess || code == ncclInProgress) return;
  std::string message = what + ": " + ncclGetErrorString(code);
  const char* detail = comm != nullptr ? ncclGetLastError(comm) : ncclGetLastError(nullptr);
  if (detail != nullptr && *detail != '\0') message += std::string(" (") + detail + ")";
  throw BackendError(message);
}

ncclDataType_t nccl_type(DataType t) {
  switch (t) {
    case DataType::int8: return ncclInt8;
    case DataType::uint8: return ncclUint8;
    case DataType::int32: return ncclInt32;
    case DataType::uint32: return ncclUint32;
    case DataType::int64: return ncclInt64;
    case DataType::uint64: return ncclUint64;
    case DataType::float16: return ncclFloat16;
    case DataType::bfloat16: return ncclBfloat16;
    case DataType::float32: return ncclFloat32;
    case DataType::float64: return ncclFloat64;
    case DataType::float8_e4m3: return ncclFloat8e4m3;
    case DataType::float8_e5m2: return ncclFloat8e5m2;
  }
  return ncclFloat32;
}

ncclRedOp_t nccl_op(ReduceOp op) {
  switch (op) {
    case ReduceOp::prod: return ncclProd;
    case ReduceOp::min: return ncclMin;
    case ReduceOp::max: return ncclMax;
    case ReduceOp::avg: return ncclAvg;
    case ReduceOp::sum:
    case ReduceOp::none: break;
  }
  return ncclSum;
}

std::string version_text(int code) {
  // NCCL >= 2.9 encodes major*10000 + minor*100 + patch.
  return std::to_string(code / 10000) + "." + std::to_string(code % 10000 / 100) + "." + std::to_string(code % 100);
}

std::optional<std::string> environment(const char* name) {
  const char* value = std::getenv(name);
  return value != nullptr ? std::optional<std::string>(value) : std::nullopt;
}

}  // namespace

namespace {

// PCI bus ids of the devices this process sees, in ordinal order; empty without a device.
std::vector<std::string> visible_pci_bus_ids() {
  std::vector<std::string> ids;
  const int count = visible_cuda_devices();
  for (int d = 0; d < count; ++d) {
    char bus[32] = {};
    if (cudaDeviceGetPCIBusId(bus, sizeof bus, d) != cudaSuccess) {
      (void)cudaGetLastError();
      bus[0] = '\0';
    }
    ids.emplace_back(bus[0] != '\0' ? bus : "ordinal-" + std::to_string(d));
  }
  return ids;
}

std::string join(const std::vector<std::string>& items, char separator) {
  std::string out;
  for (const std::string& item : items) out += (out.empty() ? "" : std::string(1, separator)) + item;
  return out;
}

std::vector<std::string> split_text(const std::string& text, char separator) {
  std::vector<std::string> out;
  if (text.empty()) return out;
  std::size_t start = 0;
  for (;;) {
    const std::size_t end = text.find(separator, start);
    out.push_back(text.substr(start, end == std::string::npos ? std::string::npos : end - start));
    if (end == std::string::npos) return out;
    start = end + 1;
  }
}

}  // namespace

int visible_cuda_devices() {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    (void)cudaGetLastError();  // clear the sticky "no driver" error
    return 0;
  }
  return count;
}

std::vector<CudaDeviceInfo> list_cuda_devices(std::string& why_none) {
  std::vector<CudaDeviceInfo> devices;
  int count = 0;
  const cudaError_t status = cudaGetDeviceCount(&count);
  if (status != cudaSuccess) {
    why_none = cudaGetErrorString(status);
    (void)cudaGetLastError();
    return devices;
  }
  for (int d = 0; d < count; ++d) {
    cudaDeviceProp prop{};
    char bus[32] = {};
    if (cudaGetDeviceProperties(&prop, d) != cudaSuccess || cudaDeviceGetPCIBusId(bus, sizeof bus, d) != cudaSuccess) {
      (void)cudaGetLastError();
      continue;
    }
    devices.push_back({canonical_pci_bus_id(bus).value_or(bus), prop.name, prop.major * 10 + prop.minor});
  }
  if (devices.empty() && why_none.empty()) why_none = "no CUDA device";
  return devices;
}

// One GPU this process drives, with its NCCL rank and the CUDA objects timing needs.
struct DeviceContext {
  int device = 0;
  int rank = 0;
  int compute_major = 0;
  ncclComm_t comm = nullptr;
  cudaStream_t stream = nullptr;
  cudaEvent_t start = nullptr;
  cudaEvent_t stop = nullptr;
  unsigned long long* counter = nullptr;
  cudaGraphExec_t graph = nullptr;
  std::string description;
  std::string bus_id;  // lower case
};

struct NcclBackend::State {
  NcclOptions options;
  int nranks = 0;
  std::string who;  // "rank 3 (host gpu01)"
  std::vector<DeviceContext> devices;
  // The captured graph belongs to one case and one set of buffers.
  std::string graph_key;

  ~State() {
    destroy_graphs();
    // Finalize all communicators of this process in one group (required with -g > 1, where
    // finalizing one alone would wait for the others), then destroy them.
    bool any_comm = false;
    for (DeviceContext& d : devices) any_comm = any_comm || d.comm != nullptr;
    if (any_comm) {
      ncclGroupStart();
      for (DeviceContext& d : devices)
        if (d.comm != nullptr) ncclCommFinalize(d.comm);
      ncclGroupEnd();
    }
    for (DeviceContext& d : devices) {
      cudaSetDevice(d.device);
      if (d.comm != nullptr) ncclCommDestroy(d.comm);
      if (d.counter != nullptr) cudaFree(d.counter);
      if (d.start != nullptr) cudaEventDestroy(d.start);
      if (d.stop != nullptr) cudaEventDestroy(d.stop);
      if (d.stream != nullptr) cudaStreamDestroy(d.stream);
    }
  }

  // Captured graphs reference the buffers they were captured with (and NCCL registers
  // those buffers for the graph's lifetime): they go before the buffers do.
  void destroy_graphs() noexcept {
    for (DeviceContext& d : devices) {
      if (d.graph == nullptr) continue;
      cudaSetDevice(d.device);
      cudaGraphExecDestroy(d.graph);
      d.graph = nullptr;
    }
    graph_key.clear();
  }

  std::string where(const DeviceContext& d) const {
    return who + ", GPU " + std::to_string(d.device) + ", NCCL rank " + std::to_string(d.rank);
  }

  void abort_all() noexcept {
    for (DeviceContext& d : devices) {
      if (d.comm != nullptr) ncclCommAbort(d.comm);
      d.comm = nullptr;
    }
  }

  // Whether every one of `events` (one per device) has completed, polling NCCL for
  // asynchronous errors while any has not: a peer that died or a network failure
  // surfaces here (communicators aborted, BackendError) instead of as a silent hang.
  bool poll(const std::vector<cudaEvent_t>& events, const char* what) {
    bool done = true;
    for (std::size_t i = 0; i < devices.size(); ++i) {
      cudaSetDevice(devices[i].device);
      const cudaError_t state = cudaEventQuery(events[i]);
      if (state == cudaErrorNotReady) {
        done = false;
      } else if (state != cudaSuccess) {
        const std::string message = where(devices[i]) + ": CUDA error while " + what + ": " + cudaGetErrorString(state);
        abort_all();
        throw BackendError(message);
      }
    }
    if (done) return true;
    for (DeviceContext& d : devices) {
      ncclResult_t async = ncclSuccess;
      if (d.comm != nullptr && ncclCommGetAsyncError(d.comm, &async) == ncclSuccess && async != ncclSuccess &&
          async != ncclInProgress) {
        const std::string message = where(d) + ": NCCL error while " + what + ": " + ncclGetErrorString(async) + " (" +
                                    ncclGetLastError(d.comm) + ")";
        abort_all();
        throw BackendError(message);
      }
    }
    return false;
  }

  void wait_for(const std::vector<cudaEvent_t>& events, const char* what) {
    while (!poll(events, what)) std::this_thread::yield();
  }

  // alltoallv's counts for each device's rank, kept for the last case so that timed loops
  // do not rebuild them (O(ranks)) every iteration.
  struct PeerCountsCache {
    PeerDistribution distribution;
    std::uint64_t elements_per_rank = 0;
    std::vector<PeerCounts> per_device;
  };
  PeerCountsCache peer_counts_cache;

  const PeerCounts& peer_counts_for(const OpCase& c, std::size_t device_index) {
    PeerCountsCache& cache = peer_counts_cache;
    if (cache.per_device.empty() || cache.distribution != c.distribution ||
        cache.elements_per_rank != c.shape.send_elements) {
      cache.per_device.clear();
      for (const DeviceContext& d : devices)
        cache.per_device.push_back(peer_counts(c.distribution, c.shape.send_elements, nranks, d.rank));
      cache.distribution = c.distribution;
      cache.elements_per_rank = c.shape.send_elements;
    }
    return cache.per_device[device_index];
  }

  void synchronize(const char* what) {
    std::vector<cudaEvent_t> events;
    for (DeviceContext& d : devices) {
      check_cuda(cudaSetDevice(d.device), "cudaSetDevice");
      check_cuda(cudaEventRecord(d.stop, d.stream), "cudaEventRecord");
      events.push_back(d.stop);
    }
    wait_for(events, what);
  }
};

namespace {

struct DeviceBuffers {
  int device = 0;
  ncclComm_t comm = nullptr;
  std::byte* send = nullptr;
  std::byte* recv = nullptr;
  void* send_handle = nullptr;
  void* recv_handle = nullptr;
};

class NcclBuffers final : public Buffers {
 public:
  NcclBuffers(std::shared_ptr<NcclBackend::State> state, std::uint64_t send_bytes, std::uint64_t recv_bytes,
              bool registered)
      : state_(std::move(state)), send_bytes_(send_bytes), recv_bytes_(recv_bytes), registered_(registered) {}
  ~NcclBuffers() override {
    state_->destroy_graphs();
    for (std::size_t i = 0; i < per_device.size(); ++i) {
      DeviceBuffers& b = per_device[i];
      cudaSetDevice(b.device);
      // Read the communicator now: an abort after an error leaves it null, and
      // deregistering on an aborted communicator would crash and hide the real error.
      ncclComm_t comm = state_->devices[i].comm;
      if (b.send_handle != nullptr && comm != nullptr) ncclCommDeregister(comm, b.send_handle);
      if (b.recv_handle != nullptr && comm != nullptr) ncclCommDeregister(comm, b.recv_handle);
      release(b.send);
      release(b.recv);
    }
  }
  std::uint64_t send_capacity() const override { return send_bytes_; }
  std::uint64_t recv_capacity() const override { return recv_bytes_; }
  bool registered() const { return registered_; }

  std::byte* allocate(std::uint64_t bytes, cudaStream_t stream) {
    void* p = nullptr;
    const std::size_t size = std::max<std::uint64_t>(bytes, 256);
    if (registered_)
      check_nccl(ncclMemAlloc(&p, size), "ncclMemAlloc");
    else
      check_cuda(cudaMalloc(&p, size), "cudaMalloc");
    // On the device's own (non-blocking) stream: a legacy-stream memset could land after
    // the check pattern that is later written on that stream.
    check_cuda(cudaMemsetAsync(p, 0, size, stream), "cudaMemsetAsync");
    check_cuda(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
    return static_cast<std::byte*>(p);
  }

  std::vector<DeviceBuffers> per_device;

 private:
  void release(std::byte* p) {
    if (p == nullptr) return;
    if (registered_)
      ncclMemFree(p);
    else
      cudaFree(p);
  }
  std::shared_ptr<NcclBackend::State> state_;
  std::uint64_t send_bytes_;
  std::uint64_t recv_bytes_;
  bool registered_;
};

NcclBuffers& device_buffers(Buffers& b) { return static_cast<NcclBuffers&>(b); }

std::byte* data_of(const DeviceBuffers& b, const BufferRegion& region, DataType dtype) {
  return (region.buffer == BufferSide::send ? b.send : b.recv) + region.first_element * size_of(dtype);
}

// What one NCCL call needs for one device.
struct CallArguments {
  const DeviceContext& device;
  ncclDataType_t type;
  ncclRedOp_t redop;
  std::size_t count;
  std::uint64_t element_bytes;
  bool in_place;
  int root;
  int ranks;
  std::byte* send;
  std::byte* recv;
  const PeerCounts* peers;  // alltoallv only

  // NCCL's in-place convention: the input is read from the receive buffer.
  std::byte* input() const { return in_place ? recv : send; }
  std::uint64_t chunk_bytes() const { return count * element_bytes; }
  std::byte* own_chunk_of_recv() const { return recv + static_cast<std::uint64_t>(device.rank) * chunk_bytes(); }
};

// One point-to-point transfer of an exchange: a buffer, its element count and the peer.
struct Transfer {
  std::byte* data;
  std::size_t count;
  int peer;
};

// Enqueue one send or one receive (inside the caller's group).
void send_to(const CallArguments& a, const Transfer& to) {
  check_nccl(ncclSend(to.data, to.count, a.type, to.peer, a.device.comm, a.device.stream), "ncclSend", a.device.comm);
}
void receive_from(const CallArguments& a, const Transfer& from) {
  check_nccl(ncclRecv(from.data, from.count, a.type, from.peer, a.device.comm, a.device.stream), "ncclRecv",
             a.device.comm);
}
void send_and_receive(const CallArguments& a, const Transfer& to, const Transfer& from) {
  send_to(a, to);
  receive_from(a, from);
}

// One collective's NCCL call. Point-to-point exchanges need a group around all their
// sends and receives; `no_in_place` says why NCCL has no in-place form, if it has none.
struct NcclCall {
  Collective op;
  void (*enqueue)(const CallArguments&);
  bool grouped = false;
  std::string_view no_in_place = {};
};

constexpr std::array kNcclCalls{
    NcclCall{.op = Collective::allreduce,
             .enqueue =
                 [](const CallArguments& a) {
                   check_nccl(
                       ncclAllReduce(a.input(), a.recv, a.count, a.type, a.redop, a.device.comm, a.device.stream),
                       "ncclAllReduce", a.device.comm);
                 }},
    NcclCall{.op = Collective::allgather,
             .enqueue =
                 [](const CallArguments& a) {
                   check_nccl(ncclAllGather(a.in_place ? a.own_chunk_of_recv() : a.send, a.recv, a.count, a.type,
                                            a.device.comm, a.device.stream),
                              "ncclAllGather", a.device.comm);
                 }},
    NcclCall{.op = Collective::reducescatter,
             .enqueue =
                 [](const CallArguments& a) {
                   check_nccl(ncclReduceScatter(a.input(), a.in_place ? a.own_chunk_of_recv() : a.recv, a.count, a.type,
                                                a.redop, a.device.comm, a.device.stream),
                              "ncclReduceScatter", a.device.comm);
                 }},
    NcclCall{.op = Collective::broadcast,
             .enqueue =
                 [](const CallArguments& a) {
                   check_nccl(ncclBroadcast(a.input(), a.recv, a.count, a.type, a.root, a.device.comm, a.device.stream),
                              "ncclBroadcast", a.device.comm);
                 }},
    NcclCall{.op = Collective::reduce,
             .enqueue =
                 [](const CallArguments& a) {
                   check_nccl(
                       ncclReduce(a.input(), a.recv, a.count, a.type, a.redop, a.root, a.device.comm, a.device.stream),
                       "ncclReduce", a.device.comm);
                 }},
    // Grouped point-to-point works on every NCCL with send/recv (2.7+), like nccl-tests.
    NcclCall{.op = Collective::alltoall,
             .enqueue =
                 [](const CallArguments& a) {
                   for (int peer = 0; peer < a.ranks; ++peer) {
                     const std::uint64_t offset = static_cast<std::uint64_t>(peer) * a.chunk_bytes();
                     send_and_receive(a, {a.send + offset, a.count, peer}, {a.recv + offset, a.count, peer});
                   }
                 },
             .grouped = true,
             .no_in_place = "in-place alltoall: NCCL needs separate send and receive buffers"},
    NcclCall{.op = Collective::sendrecv,
             .enqueue =
                 [](const CallArguments& a) {
                   const int next = (a.device.rank + 1) % a.ranks;
                   const int previous = (a.device.rank + a.ranks - 1) % a.ranks;
                   send_and_receive(a, {a.send, a.count, next}, {a.recv, a.count, previous});
                 },
             .grouped = true,
             .no_in_place = "in-place sendrecv: the send and receive would overlap in one buffer"},
    // NCCL has no alltoallv: one send and one receive per peer in a group, skipping empty
    // pieces as PyTorch's all_to_all_single does (both sides know the counts, so they skip
    // the same pairs). The in-place refusal comes from the descriptor.
    NcclCall{.op = Collective::alltoallv,
             .enqueue =
                 [](const CallArguments& a) {
                   const PeerCounts& peers = *a.peers;
                   for (int peer = 0; peer < a.ranks; ++peer) {
                     const auto p = static_cast<std::size_t>(peer);
                     if (peers.send_counts[p] > 0)
                       send_to(a, {a.send + peers.send_offsets[p] * a.element_bytes, peers.send_counts[p], peer});
                     if (peers.recv_counts[p] > 0)
                       receive_from(a, {a.recv + peers.recv_offsets[p] * a.element_bytes, peers.recv_counts[p], peer});
                   }
                 },
             .grouped = true},
};

static_assert(lists_every_collective_in_order(kNcclCalls), "kNcclCalls: one entry per collective, in enum order");

const NcclCall& nccl_call(Collective op) { return kNcclCalls[static_cast<std::size_t>(op)]; }

// Enqueues `c` on each device's stream as `devices` gives them (the state's own streams,
// or a stream set's).
void enqueue_on_devices(const OpCase& c, NcclBuffers& buffers, NcclBackend::State& state,
                        const std::vector<DeviceContext>& devices) {
  const NcclCall& call = nccl_call(c.op);
  const bool split_per_peer = descriptor_of(c.op).split_per_peer();
  const bool grouped = call.grouped || devices.size() > 1;
  if (grouped) check_nccl(ncclGroupStart(), "ncclGroupStart");
  for (std::size_t i = 0; i < devices.size(); ++i) {
    if (devices.size() > 1) check_cuda(cudaSetDevice(devices[i].device), "cudaSetDevice");
    const DeviceBuffers& b = buffers.per_device[i];
    call.enqueue(CallArguments{devices[i], nccl_type(c.dtype), nccl_op(c.redop), c.shape.count, size_of(c.dtype),
                               c.placement == Placement::in_place, c.root, state.nranks, b.send, b.recv,
                               split_per_peer ? &state.peer_counts_for(c, i) : nullptr});
  }
  if (grouped) check_nccl(ncclGroupEnd(), "ncclGroupEnd");
}

void enqueue_all(const OpCase& c, NcclBuffers& buffers, NcclBackend::State& state) {
  enqueue_on_devices(c, buffers, state, state.devices);
}

std::string graph_key(const OpCase& c, const Buffers& b) {
  return std::to_string(static_cast<int>(c.op)) + "/" + std::to_string(static_cast<int>(c.dtype)) + "/" +
         std::to_string(static_cast<int>(c.redop)) + "/" + std::to_string(c.root) + "/" +
         std::to_string(static_cast<int>(c.placement)) + "/" + std::to_string(c.shape.count) + "/" +
         to_string(c.distribution) + "@" + std::to_string(reinterpret_cast<std::uintptr_t>(&b));
}

class NcclPending final : public PendingOperation {
 public:
  NcclPending(std::shared_ptr<NcclBackend::State> state, std::vector<cudaEvent_t> events)
      : state_(std::move(state)), events_(std::move(events)) {}
  ~NcclPending() override {
    for (std::size_t i = 0; i < events_.size(); ++i) {
      cudaSetDevice(state_->devices[i].device);
      cudaEventDestroy(events_[i]);
    }
  }
  // A caller polling test() (overlapping compute with the operation) would never call
  // wait(): the asynchronous-error check must happen here too, or a dead peer hangs it.
  bool test() override { return state_->poll(events_, "testing a started operation"); }
  void wait() override { state_->wait_for(events_, "waiting for a started operation"); }

 private:
  std::shared_ptr<NcclBackend::State> state_;
  std::vector<cudaEvent_t> events_;
};

void create_device_objects(DeviceContext& d) {
  check_cuda(cudaSetDevice(d.device), "cudaSetDevice(" + std::to_string(d.device) + ")");
  check_cuda(cudaStreamCreateWithFlags(&d.stream, cudaStreamNonBlocking), "cudaStreamCreate");
  check_cuda(cudaEventCreate(&d.start), "cudaEventCreate");
  check_cuda(cudaEventCreate(&d.stop), "cudaEventCreate");
  check_cuda(cudaMalloc(&d.counter, sizeof(unsigned long long)), "cudaMalloc");
}

}  // namespace

NcclBackend::NcclBackend(std::unique_ptr<Bootstrap> group, const NcclOptions& options)
    : group_(std::move(group)), state_(std::make_shared<State>()) {
  State& state = *state_;
  state.options = options;
  state.who = "rank " + std::to_string(group_->rank()) + " (host " + group_->hostname() + ")";
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
      d.description = "GPU " + std::to_string(d.device) + " (NCCL rank " + std::to_string(d.rank) + "): " + prop.name +
                      ", PCI " + bus + ", sm_" + std::to_string(prop.major) + std::to_string(prop.minor) + ", " +
                      format_size(prop.totalGlobalMem) + "; " + selection.reason;
      state.devices.push_back(d);
    }
  });

  state.nranks = group_->size() * gpus_per_process;
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
  auto cuda_text = [](int v) { return std::to_string(v / 1000) + "." + std::to_string(v % 1000 / 10); };
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
        return "-d/--dtype " + std::string(name_of(dtype)) + " needs sm_90 or newer (GPU " + std::to_string(d.device) +
               " is sm_" + std::to_string(d.compute_major) + "x)";
  }
  return std::nullopt;
}

std::optional<std::string> NcclBackend::unsupported_in_place(Collective op) const {
  if (!nccl_call(op).no_in_place.empty()) return std::string(nccl_call(op).no_in_place);
  return missing_in_place_form(op);
}

void NcclBackend::validate_plan(std::span<const OpCase>) const {}

std::unique_ptr<Buffers> NcclBackend::allocate(std::uint64_t send_bytes, std::uint64_t recv_bytes) {
  std::unique_ptr<NcclBuffers> buffers;
  collective_try(*group_, [&] {
    buffers = std::make_unique<NcclBuffers>(state_, send_bytes, recv_bytes, state_->options.register_buffers);
    for (DeviceContext& d : state_->devices) {
      const std::size_t free_bytes = free_memory_on(d.device);
      if (send_bytes + recv_bytes > free_bytes)
        throw UsageError("-e/--max-bytes: buffers need " + format_size(send_bytes + recv_bytes) + " on GPU " +
                         std::to_string(d.device) + " of " + state_->who + ", but only " + format_size(free_bytes) +
                         " is free");
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

void NcclBackend::set_capture_range(bool start) {
  // The profiler captures per context: every device this process drives.
  for (const DeviceContext& d : state_->devices) {
    check_cuda(cudaSetDevice(d.device), "cudaSetDevice");
    check_cuda(start ? cudaProfilerStart() : cudaProfilerStop(), start ? "cudaProfilerStart" : "cudaProfilerStop");
  }
}

// ---- The door for the extensions (nccl_state_access.hpp) ----

std::vector<DeviceHandle> device_handles(const NcclBackend::State& state) {
  std::vector<DeviceHandle> handles;
  for (const DeviceContext& d : state.devices) handles.push_back({d.device, d.rank, d.comm, d.stream});
  return handles;
}

NcclBackend::State& state_of(NcclBackend& backend) { return *backend.state_; }

bool poll_events(NcclBackend::State& state, const std::vector<cudaEvent_t>& events, const char* what) {
  return state.poll(events, what);
}

void wait_for_events(NcclBackend::State& state, const std::vector<cudaEvent_t>& events, const char* what) {
  state.wait_for(events, what);
}

std::unique_ptr<PendingOperation> pending_on(std::shared_ptr<NcclBackend::State> state,
                                             const std::vector<cudaStream_t>& streams) {
  std::vector<cudaEvent_t> events;
  for (std::size_t i = 0; i < streams.size(); ++i) {
    check_cuda(cudaSetDevice(state->devices[i].device), "cudaSetDevice");
    cudaEvent_t done = nullptr;
    check_cuda(cudaEventCreateWithFlags(&done, cudaEventDisableTiming), "cudaEventCreate");
    check_cuda(cudaEventRecord(done, streams[i]), "cudaEventRecord");
    events.push_back(done);
  }
  return std::make_unique<NcclPending>(std::move(state), std::move(events));
}

void enqueue_on(const OpCase& c, Buffers& buffers, NcclBackend::State& state,
                const std::vector<cudaStream_t>& streams) {
  std::vector<DeviceContext> devices = state.devices;  // handles only: the copies own nothing
  for (std::size_t i = 0; i < devices.size(); ++i) devices[i].stream = streams[i];
  enqueue_on_devices(c, device_buffers(buffers), state, devices);
}

void check_cuda_call(cudaError_t code, const std::string& what) { check_cuda(code, what); }
void check_nccl_call(ncclResult_t code, const std::string& what, ncclComm_t comm) { check_nccl(code, what, comm); }

}  // namespace commbench::nccl
