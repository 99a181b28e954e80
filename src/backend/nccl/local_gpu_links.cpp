// bench-p2p --local's measurements on the GPUs this process sees (local_gpu_links.hpp).
#include "commbench/backend/local_gpu_links.hpp"

#include <cuda_runtime.h>
#include <linux/mempolicy.h>
#include <nccl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <functional>
#include <numeric>
#include <optional>
#include <random>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "commbench/core/error.hpp"
#include "commbench/core/host_memory.hpp"
#include "commbench/core/pci_bus_id.hpp"
#include "commbench/core/size.hpp"
#include "copy_kernels.hpp"
#include "cuda_resources.hpp"
#include "nccl_support.hpp"

namespace commbench {
namespace nccl {
namespace {

// Host memory of one transfer: anonymous pages, bound to a NUMA node when asked (before
// they are first touched, so they are placed there), page-locked unless pageable.
class HostBuffer {
 public:
  HostBuffer(std::uint64_t bytes, const HostMemory& memory, unsigned register_flags = cudaHostRegisterPortable)
      : bytes_(bytes) {
    // Every page is touched below: a size the host cannot hold would end in the OOM
    // killer, not in a message.
    require_host_memory(bytes, "-b/--bytes: a host buffer");
    void* mapped = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (mapped == MAP_FAILED)
      throw BackendError(fmt::format("cannot map {} bytes of host memory: {}", bytes, std::strerror(errno)));
    data_ = static_cast<unsigned char*>(mapped);
    if (memory.pinned && memory.numa >= 0) bind_to(memory.numa);
    std::memset(data_, 0, bytes);  // every page faulted in now, where the policy puts it
    if (memory.pinned && memory.numa >= 0 && note_.empty()) {
      int node = -1;
      if (syscall(SYS_get_mempolicy, &node, nullptr, 0UL, data_,
                  static_cast<unsigned long>(MPOL_F_NODE | MPOL_F_ADDR)) == 0 &&
          node != memory.numa)
        note_ = fmt::format("pages on NUMA node {}, not {}", node, memory.numa);
    }
    if (memory.pinned) {
      const cudaError_t status = cudaHostRegister(data_, bytes, register_flags);
      if (status != cudaSuccess) {
        munmap(data_, bytes_);
        throw BackendError(fmt::format("cudaHostRegister of {} bytes: {}", bytes, cudaGetErrorString(status)));
      }
      registered_ = true;
    }
  }
  ~HostBuffer() {
    if (registered_) cudaHostUnregister(data_);
    munmap(data_, bytes_);
  }
  HostBuffer(const HostBuffer&) = delete;
  HostBuffer& operator=(const HostBuffer&) = delete;

  unsigned char* data() { return data_; }
  // Empty, or why the pages are not on the node asked for.
  const std::string& note() const { return note_; }

 private:
  void bind_to(int numa) {
    constexpr int kBits = 8 * sizeof(unsigned long);
    std::vector<unsigned long> mask(static_cast<std::size_t>(numa / kBits + 1), 0UL);
    mask[static_cast<std::size_t>(numa / kBits)] |= 1UL << (numa % kBits);
    // The kernel reads maxnode - 1 bits: one more than the mask holds.
    const unsigned long max_node = mask.size() * kBits + 1;
    if (syscall(SYS_mbind, data_, bytes_, static_cast<unsigned long>(MPOL_BIND), mask.data(), max_node, 0UL) != 0)
      note_ = fmt::format("pages not bound to NUMA node {} (mbind: {})", numa, std::strerror(errno));
  }

  std::uint64_t bytes_;
  unsigned char* data_ = nullptr;
  bool registered_ = false;
  std::string note_;
};

// cudaMalloc'ed memory of one device, freed there.
class DeviceMemory {
 public:
  DeviceMemory() = default;
  DeviceMemory(int device, std::uint64_t bytes) : device_(device) {
    check_cuda_call(cudaSetDevice(device), "cudaSetDevice");
    check_cuda_call(cudaMalloc(&data_, bytes), fmt::format("cudaMalloc of {} bytes on device {}", bytes, device));
  }
  ~DeviceMemory() {
    if (data_ == nullptr) return;
    cudaSetDevice(device_);
    cudaFree(data_);
  }
  DeviceMemory(DeviceMemory&& other) noexcept : device_(other.device_), data_(std::exchange(other.data_, nullptr)) {}
  DeviceMemory& operator=(DeviceMemory&& other) noexcept {
    std::swap(device_, other.device_);
    std::swap(data_, other.data_);
    return *this;
  }
  unsigned char* data() const { return static_cast<unsigned char*>(data_); }

 private:
  int device_ = 0;
  void* data_ = nullptr;
};

// One direction of a measurement: where from and where to, each on a device or (-1) in
// host memory, and the stream that carries it.
struct Lane {
  unsigned char* from = nullptr;
  unsigned char* to = nullptr;
  int from_device = -1;
  int to_device = -1;
  int stream_device = 0;
  cudaStream_t stream = nullptr;
  unsigned seed = 0;
};

// Host memory for the latency chain: page-locked and mapped for the GPU.
constexpr unsigned kMappedHostMemory = cudaHostRegisterPortable | cudaHostRegisterMapped;

class CudaLocalGpuLinks final : public LocalGpuLinks {
 public:
  CudaLocalGpuLinks() {
    int count = 0;
    const cudaError_t status = cudaGetDeviceCount(&count);
    if (status != cudaSuccess || count == 0) {
      const std::string reason = status != cudaSuccess ? nccl::detail::no_device_reason(status) : "none visible";
      (void)cudaGetLastError();
      throw BackendError("no CUDA device: " + reason);
    }
    for (int device = 0; device < count; ++device) {
      char bus[32] = {};
      check_cuda_call(cudaDeviceGetPCIBusId(bus, sizeof bus, device), "cudaDeviceGetPCIBusId");
      bus_ids_.push_back(canonical_pci_bus_id(bus).value_or(bus));
      int multiprocessors = 0;
      check_cuda_call(cudaDeviceGetAttribute(&multiprocessors, cudaDevAttrMultiProcessorCount, device),
                      "cudaDeviceGetAttribute");
      multiprocessors_.push_back(multiprocessors);
      streams_.push_back(new_stream(device));
      reverse_streams_.push_back(new_stream(device));
      send_.emplace_back();
      receive_.emplace_back();
      counters_.emplace_back(device, sizeof(unsigned long long));
    }
    enable_peer_access();
  }
  ~CudaLocalGpuLinks() override {
    for (ncclComm_t comm : comms_) ncclCommDestroy(comm);
  }

  int device_count() const override { return static_cast<int>(bus_ids_.size()); }
  void require_room_for_buffers(std::uint64_t bytes) const override {
    for (int device = 0; device < device_count(); ++device) require_room_for(device, 2 * bytes);
  }
  std::string bus_id(int device) const override { return bus_ids_[index(device)]; }

  PeerAccess peer_access(int source, int destination) override {
    PeerAccess access;
    access.supported = enabled_[index(source)][index(destination)];
    int value = 0;
    if (cudaDeviceGetP2PAttribute(&value, cudaDevP2PAttrNativeAtomicSupported, source, destination) == cudaSuccess)
      access.native_atomics = value != 0;
    if (cudaDeviceGetP2PAttribute(&value, cudaDevP2PAttrPerformanceRank, source, destination) == cudaSuccess)
      access.performance_rank = value;
    (void)cudaGetLastError();
    return access;
  }

  CopyTiming gpu_to_gpu(GpuCopyMethod method, int source, int destination, const CopyRequest& request) override {
    prepare_buffers(request.bytes);
    std::vector<Lane> lanes{device_lane(source, destination, streams_[index(source)].get())};
    if (request.both_ways) {
      // NCCL's receive of the reverse direction runs on the destination's stream anyway; the
      // copy engine and the SM kernel push from the sending GPU, each on its own stream.
      lanes.push_back(device_lane(destination, source, streams_[index(destination)].get()));
    }
    std::function<void()> one;
    switch (method) {
      case GpuCopyMethod::copy_engine:
        one = [&] {
          for (const Lane& lane : lanes)
            check_cuda_call(
                cudaMemcpyPeerAsync(lane.to, lane.to_device, lane.from, lane.from_device, request.bytes, lane.stream),
                "cudaMemcpyPeerAsync");
        };
        break;
      case GpuCopyMethod::sm_kernel:
        // A kernel storing into memory it cannot reach faults and takes the whole CUDA
        // context with it: refuse instead (the plan leaves such pairs out).
        for (const Lane& lane : lanes)
          if (!enabled_[index(lane.from_device)][index(lane.to_device)])
            throw BackendError(fmt::format("sm-copy {} -> {}: no peer access", lane.from_device, lane.to_device));
        one = [&] {
          for (const Lane& lane : lanes) {
            check_cuda_call(cudaSetDevice(lane.stream_device), "cudaSetDevice");
            launch_sm_copy(lane.from, lane.to, request.bytes, sm_copy_blocks(lane.stream_device), lane.stream);
            check_cuda_call(cudaGetLastError(), "the SM copy kernel's launch");
          }
        };
        break;
      case GpuCopyMethod::nccl:
        open_communicators();
        one = [&] {
          check_nccl_call(ncclGroupStart(), "ncclGroupStart");
          // A failed call must still close the group, or this thread stays inside it.
          struct GroupEnd {
            bool open = true;
            ~GroupEnd() {
              if (open) ncclGroupEnd();
            }
          } group;
          for (const Lane& lane : lanes) {
            ncclComm_t sender = comms_[index(lane.from_device)];
            ncclComm_t receiver = comms_[index(lane.to_device)];
            check_nccl_call(ncclSend(lane.from, request.bytes, ncclInt8, lane.to_device, sender,
                                     streams_[index(lane.from_device)].get()),
                            "ncclSend", sender);
            check_nccl_call(ncclRecv(lane.to, request.bytes, ncclInt8, lane.from_device, receiver,
                                     streams_[index(lane.to_device)].get()),
                            "ncclRecv", receiver);
          }
          group.open = false;
          check_nccl_call(ncclGroupEnd(), "ncclGroupEnd");
        };
        break;
    }
    std::vector<Lane> timed_streams = lanes;
    if (method == GpuCopyMethod::nccl && !request.both_ways)
      timed_streams.push_back(device_lane(destination, source, streams_[index(destination)].get()));
    return measure(lanes, timed_streams, one, request, "");
  }

  CopyTiming host_and_gpu(int device, bool to_device, const HostMemory& memory, const CopyRequest& request) override {
    prepare_buffers(request.bytes);
    HostBuffer host(request.bytes, memory);
    std::optional<HostBuffer> reverse_host;
    std::vector<Lane> lanes{host_lane(device, to_device, host.data(), streams_[index(device)].get())};
    if (request.both_ways) {
      reverse_host.emplace(request.bytes, memory);
      lanes.push_back(host_lane(device, !to_device, reverse_host->data(), reverse_streams_[index(device)].get()));
    }
    const auto one = [&] {
      for (const Lane& lane : lanes)
        check_cuda_call(
            cudaMemcpyAsync(lane.to, lane.from, request.bytes,
                            lane.to_device >= 0 ? cudaMemcpyHostToDevice : cudaMemcpyDeviceToHost, lane.stream),
            "cudaMemcpyAsync");
    };
    return measure(lanes, lanes, one, request, host.note());
  }

  double load_latency_seconds(int device, std::optional<int> target, int host_numa, std::uint64_t loads) override {
    // Links 128 bytes apart (one per L2 line) in one random cycle with more links than
    // loads: each load's address depends on the one before, so no two overlap, no
    // prefetcher guesses the next, and no line is read twice, so no cache can answer.
    constexpr std::uint64_t kMostLinks = std::uint64_t{1} << 20;  // 128 MiB of chain
    constexpr std::size_t kStride = 128 / sizeof(std::uint64_t);
    const auto links_count = static_cast<std::size_t>(std::min(loads + 1, kMostLinks));
    std::vector<std::uint64_t> order(links_count);
    std::iota(order.begin(), order.end(), 0);
    std::shuffle(order.begin() + 1, order.end(), std::mt19937_64(20261124));
    std::vector<std::uint64_t> chain(links_count * kStride, 0);
    for (std::size_t i = 0; i < links_count; ++i) chain[order[i] * kStride] = order[(i + 1) % links_count] * kStride;
    const std::uint64_t chain_bytes = chain.size() * sizeof(std::uint64_t);

    std::optional<DeviceMemory> on_peer;
    std::optional<HostBuffer> on_host;
    const std::uint64_t* links = nullptr;
    if (target) {
      on_peer.emplace(*target, chain_bytes);
      check_cuda_call(cudaMemcpy(on_peer->data(), chain.data(), chain_bytes, cudaMemcpyHostToDevice), "cudaMemcpy");
      // From pageable memory cudaMemcpy may return before the DMA lands; the chase runs on
      // another device's stream, which nothing orders after it.
      check_cuda_call(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
      links = reinterpret_cast<const std::uint64_t*>(on_peer->data());
    } else {
      on_host.emplace(chain_bytes, HostMemory{true, host_numa}, kMappedHostMemory);
      std::memcpy(on_host->data(), chain.data(), chain_bytes);
      void* mapped = nullptr;
      check_cuda_call(cudaHostGetDevicePointer(&mapped, on_host->data(), 0), "cudaHostGetDevicePointer");
      links = static_cast<const std::uint64_t*>(mapped);
    }
    DeviceMemory sink(device, sizeof(std::uint64_t));
    cudaStream_t stream = streams_[index(device)].get();
    check_cuda_call(cudaSetDevice(device), "cudaSetDevice");
    // Warm: the kernel loaded and the first lines' translations in place, which the timed
    // chase then passes through 16 of its loads.
    launch_pointer_chase(links, 16, reinterpret_cast<std::uint64_t*>(sink.data()), stream);
    CudaEvent begin = recorded_event(device, true, stream);
    launch_pointer_chase(links, loads, reinterpret_cast<std::uint64_t*>(sink.data()), stream);
    check_cuda_call(cudaGetLastError(), "the pointer chase's launch");
    CudaEvent end = recorded_event(device, true, stream);
    check_cuda_call(cudaEventSynchronize(end.get()), "cudaEventSynchronize");
    float milliseconds = 0;
    check_cuda_call(cudaEventElapsedTime(&milliseconds, begin.get(), end.get()), "cudaEventElapsedTime");
    return static_cast<double>(milliseconds) / 1e3 / static_cast<double>(loads);
  }

 private:
  static std::size_t index(int device) { return static_cast<std::size_t>(device); }

  void enable_peer_access() {
    const int count = device_count();
    enabled_.assign(index(count), std::vector<bool>(index(count), false));
    for (int source = 0; source < count; ++source)
      for (int destination = 0; destination < count; ++destination) {
        if (source == destination) continue;
        int can = 0;
        if (cudaDeviceCanAccessPeer(&can, source, destination) != cudaSuccess || can == 0) {
          (void)cudaGetLastError();
          continue;
        }
        check_cuda_call(cudaSetDevice(source), "cudaSetDevice");
        const cudaError_t status = cudaDeviceEnablePeerAccess(destination, 0);
        (void)cudaGetLastError();
        // cudaErrorTooManyPeers past 8 peers on some systems: that pair is staged then.
        enabled_[index(source)][index(destination)] =
            status == cudaSuccess || status == cudaErrorPeerAccessAlreadyEnabled;
      }
  }

  void prepare_buffers(std::uint64_t bytes) {
    if (bytes == buffer_bytes_) return;
    buffer_bytes_ = 0;  // until every device has its new buffers
    for (int device = 0; device < device_count(); ++device) {
      send_[index(device)] = DeviceMemory();
      receive_[index(device)] = DeviceMemory();
      require_room_for(device, 2 * bytes);
      send_[index(device)] = DeviceMemory(device, bytes);
      receive_[index(device)] = DeviceMemory(device, bytes);
    }
    buffer_bytes_ = bytes;
  }

  static void require_room_for(int device, std::uint64_t bytes) {
    const std::size_t free_bytes = free_memory_on(device);
    if (bytes > free_bytes)
      throw UsageError(fmt::format("-b/--bytes: a send and a receive buffer need {} on GPU {}, but only {} is free",
                                   format_size(bytes), device, format_size(free_bytes)));
  }

  void open_communicators() {
    if (!comms_.empty()) return;
    std::vector<ncclComm_t> comms(index(device_count()), nullptr);
    check_nccl_call(ncclCommInitAll(comms.data(), device_count(), nullptr), "ncclCommInitAll");
    comms_ = std::move(comms);
  }

  // Two blocks of 512 threads per SM: many 16-byte stores in flight per SM, so the link,
  // not the kernel, should bound the copy (a choice by reasoning, not by measurement).
  int sm_copy_blocks(int device) const { return 2 * multiprocessors_[index(device)]; }

  Lane device_lane(int from, int to, cudaStream_t stream) const {
    return {send_[index(from)].data(),      receive_[index(to)].data(), from, to, from, stream,
            static_cast<unsigned>(from + 1)};
  }

  Lane host_lane(int device, bool to_device, unsigned char* host, cudaStream_t stream) const {
    if (to_device) return {host, receive_[index(device)].data(), -1, device, device, stream, 0U};
    return {send_[index(device)].data(), host, device, -1, device, stream, static_cast<unsigned>(device + 1)};
  }

  // Sources filled with their pattern (on the lane's stream, which is the source GPU's) and
  // destinations cleared, so a transfer that moved nothing fails the check.
  void fill(const std::vector<Lane>& lanes, std::uint64_t bytes) {
    for (const Lane& lane : lanes) {
      if (lane.from_device >= 0) {
        check_cuda_call(cudaSetDevice(lane.from_device), "cudaSetDevice");
        launch_fill_pattern(lane.from, bytes, lane.seed, lane.stream);
        check_cuda_call(cudaGetLastError(), "the fill kernel's launch");
      } else {
        for (std::uint64_t i = 0; i < bytes; ++i) lane.from[i] = copy_pattern_byte(i, lane.seed);
      }
      if (lane.to_device >= 0) {
        // cudaMemset may return before it is done, on a stream ours do not wait for.
        check_cuda_call(cudaSetDevice(lane.to_device), "cudaSetDevice");
        check_cuda_call(cudaMemset(lane.to, 0, bytes), "cudaMemset");
        check_cuda_call(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
      } else {
        std::memset(lane.to, 0, bytes);
      }
    }
    synchronize(lanes);
  }

  std::uint64_t count_wrong(const std::vector<Lane>& lanes, std::uint64_t bytes) {
    std::uint64_t wrong = 0;
    for (const Lane& lane : lanes) {
      if (lane.to_device < 0) {
        for (std::uint64_t i = 0; i < bytes; ++i) wrong += lane.to[i] != copy_pattern_byte(i, lane.seed);
        continue;
      }
      auto* counter = reinterpret_cast<unsigned long long*>(counters_[index(lane.to_device)].data());
      check_cuda_call(cudaSetDevice(lane.to_device), "cudaSetDevice");
      check_cuda_call(cudaMemset(counter, 0, sizeof *counter), "cudaMemset");
      launch_count_pattern_mismatches(lane.to, bytes, lane.seed, counter, nullptr);
      check_cuda_call(cudaGetLastError(), "the check kernel's launch");
      unsigned long long counted = 0;
      check_cuda_call(cudaMemcpy(&counted, counter, sizeof counted, cudaMemcpyDeviceToHost), "cudaMemcpy");
      wrong += counted;
    }
    return wrong;
  }

  static void synchronize(const std::vector<Lane>& lanes) {
    for (const Lane& lane : lanes) {
      check_cuda_call(cudaSetDevice(lane.stream_device), "cudaSetDevice");
      check_cuda_call(cudaStreamSynchronize(lane.stream), "cudaStreamSynchronize");
    }
  }

  // Warm-up (and the check), then `iterations` of `one` between two events on the first
  // lane's stream; every other stream waits for the first event and the first waits for
  // theirs before the last, so the span covers every lane's transfers. The span starts
  // when the first transfer is queued, so for very short transfers the host's queuing
  // rate may show in it (docs/p2p.md).
  CopyTiming measure(const std::vector<Lane>& lanes, const std::vector<Lane>& streams, const std::function<void()>& one,
                     const CopyRequest& request, std::string note) {
    CopyTiming timing;
    timing.note = std::move(note);
    fill(lanes, request.bytes);
    // At least one untimed round even with -w 0: NCCL connects a pair at its first
    // send/recv and CUDA loads a kernel at its first launch, neither of which is the link.
    const std::uint64_t warmup = std::max<std::uint64_t>(request.warmup, 1);
    for (std::uint64_t i = 0; i < warmup; ++i) one();
    synchronize(streams);
    if (request.check) timing.wrong_bytes = count_wrong(lanes, request.bytes);

    const Lane& lead = streams.front();
    CudaEvent begin = recorded_event(lead.stream_device, true, lead.stream);
    for (std::size_t i = 1; i < streams.size(); ++i) {
      check_cuda_call(cudaSetDevice(streams[i].stream_device), "cudaSetDevice");
      check_cuda_call(cudaStreamWaitEvent(streams[i].stream, begin.get(), 0), "cudaStreamWaitEvent");
    }
    for (std::uint64_t i = 0; i < request.iterations; ++i) one();
    std::vector<CudaEvent> joins;
    for (std::size_t i = 1; i < streams.size(); ++i) {
      joins.push_back(recorded_event(streams[i].stream_device, false, streams[i].stream));
      check_cuda_call(cudaSetDevice(lead.stream_device), "cudaSetDevice");
      check_cuda_call(cudaStreamWaitEvent(lead.stream, joins.back().get(), 0), "cudaStreamWaitEvent");
    }
    CudaEvent end = recorded_event(lead.stream_device, true, lead.stream);
    check_cuda_call(cudaEventSynchronize(end.get()), "cudaEventSynchronize");
    float milliseconds = 0;
    check_cuda_call(cudaEventElapsedTime(&milliseconds, begin.get(), end.get()), "cudaEventElapsedTime");
    timing.seconds = static_cast<double>(milliseconds) / 1e3 / static_cast<double>(request.iterations);
    return timing;
  }

  std::vector<std::string> bus_ids_;
  std::vector<int> multiprocessors_;
  std::vector<CudaStream> streams_;
  std::vector<CudaStream> reverse_streams_;  // the second direction of a GPU's host transfers
  std::vector<DeviceMemory> send_, receive_, counters_;
  std::uint64_t buffer_bytes_ = 0;
  std::vector<std::vector<bool>> enabled_;  // [source][destination]: peer access on
  std::vector<ncclComm_t> comms_;           // one per device, opened at the first NCCL test
};

}  // namespace
}  // namespace nccl

std::unique_ptr<LocalGpuLinks> open_local_gpu_links() { return std::make_unique<nccl::CudaLocalGpuLinks>(); }

}  // namespace commbench
