// bare-nccl-loop: the reference bench-collectives' NCCL backend is compared with on a GPU
// (scripts/gpu-session.sh, bench/compare_with_bare_nccl.py). It times one NCCL collective
// the plainest way: one process drives every visible GPU (ncclCommInitAll), as
// bench-collectives does without MPI; per size a warm-up, then `repeats` runs of N calls
// back to back between two CUDA events, every GPU's stream joined before the end event,
// and prints the median run's time per call in microseconds, the figure bench-collectives
// prints as time_us. N is sized from the warm-up so that a run takes about 20 ms. Sizes
// mean what they mean in bench-collectives (float elements): the whole buffer for
// allreduce and broadcast, the gathered buffer for allgather, the input buffer for
// reducescatter. Out of place, sum, root 0.
//
//   bare-nccl-loop allreduce 8,1024,1048576 [repeats=5]
//   -> "allreduce 8 4.512" per size (op, bytes, microseconds per call)
//
// Exit codes as the project's: 2 usage, 3 CUDA or NCCL error (one line on stderr).
#include <cuda_runtime.h>
#include <nccl.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

int usage(const std::string& why) {
  std::fprintf(stderr,
               "bare-nccl-loop: %s (usage: bare-nccl-loop allreduce|allgather|reducescatter|broadcast "
               "BYTES[,BYTES...] [repeats=R])\n",
               why.c_str());
  return 2;
}

struct Failure : std::runtime_error {
  using std::runtime_error::runtime_error;
};

void check_cuda(cudaError_t status, const char* what) {
  if (status != cudaSuccess) throw Failure(std::string(what) + ": " + cudaGetErrorString(status));
}

void check_nccl(ncclResult_t status, const char* what) {
  if (status != ncclSuccess) throw Failure(std::string(what) + ": " + ncclGetErrorString(status));
}

// "8,1024" -> {8, 1024}; empty when any part is not a positive multiple of 4 bytes.
std::vector<std::uint64_t> parse_sizes(const std::string& text) {
  std::vector<std::uint64_t> sizes;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t comma = std::min(text.find(',', start), text.size());
    const std::string part = text.substr(start, comma - start);
    // Digits only: strtoull would take "-8" (as a huge number) and leading spaces.
    if (part.empty() || part.find_first_not_of("0123456789") != std::string::npos) return {};
    errno = 0;
    const unsigned long long value = std::strtoull(part.c_str(), nullptr, 10);
    if (errno == ERANGE || value == 0 || value % sizeof(float) != 0) return {};
    sizes.push_back(value);
    start = comma + 1;
  }
  return sizes;
}

struct Gpu {
  int device = 0;
  ncclComm_t comm = nullptr;
  cudaStream_t stream = nullptr;
  void* send = nullptr;
  void* receive = nullptr;
};

class BareLoop {
 public:
  BareLoop(std::string op, std::uint64_t largest) : op_(std::move(op)) {
    int count = 0;
    check_cuda(cudaGetDeviceCount(&count), "cudaGetDeviceCount");
    if (count == 0) throw Failure("no GPU is visible");
    std::vector<int> devices(static_cast<std::size_t>(count));
    for (int device = 0; device < count; ++device) devices[static_cast<std::size_t>(device)] = device;
    std::vector<ncclComm_t> comms(devices.size());
    check_nccl(ncclCommInitAll(comms.data(), count, devices.data()), "ncclCommInitAll");
    for (int device = 0; device < count; ++device) {
      Gpu gpu;
      gpu.device = device;
      gpu.comm = comms[static_cast<std::size_t>(device)];
      check_cuda(cudaSetDevice(device), "cudaSetDevice");
      check_cuda(cudaStreamCreateWithFlags(&gpu.stream, cudaStreamNonBlocking), "cudaStreamCreate");
      // At least one float per GPU: a chunked call of fewer bytes than GPUs still moves one each.
      const std::uint64_t buffer = std::max<std::uint64_t>(largest, static_cast<std::uint64_t>(count) * sizeof(float));
      check_cuda(cudaMalloc(&gpu.send, buffer), "cudaMalloc");
      check_cuda(cudaMalloc(&gpu.receive, buffer), "cudaMalloc");
      check_cuda(cudaMemset(gpu.send, 0, buffer), "cudaMemset");
      gpus_.push_back(gpu);
    }
    check_cuda(cudaSetDevice(0), "cudaSetDevice");
    check_cuda(cudaEventCreate(&begin_), "cudaEventCreate");
    check_cuda(cudaEventCreate(&end_), "cudaEventCreate");
    for (std::size_t i = 0; i < gpus_.size(); ++i) {
      cudaEvent_t joined = nullptr;
      check_cuda(cudaSetDevice(gpus_[i].device), "cudaSetDevice");
      check_cuda(cudaEventCreateWithFlags(&joined, cudaEventDisableTiming), "cudaEventCreate");
      joined_.push_back(joined);
    }
  }

  ~BareLoop() {
    for (const Gpu& gpu : gpus_) ncclCommDestroy(gpu.comm);
  }
  BareLoop(const BareLoop&) = delete;
  BareLoop& operator=(const BareLoop&) = delete;

  // Microseconds per call: the median of `repeats` runs.
  double time_us(std::uint64_t bytes, int repeats) {
    issue(bytes, 5);
    const double warm = run_us(bytes, 10) / 10;
    const auto calls = static_cast<std::uint64_t>(std::clamp(20000.0 / std::max(warm, 0.1), 10.0, 100000.0));
    std::vector<double> per_call;
    for (int repeat = 0; repeat < repeats; ++repeat) per_call.push_back(run_us(bytes, calls) / static_cast<double>(calls));
    std::sort(per_call.begin(), per_call.end());
    return per_call[per_call.size() / 2];
  }

 private:
  // `calls` collectives on every GPU, in one group per call.
  void issue(std::uint64_t bytes, std::uint64_t calls) {
    const std::size_t ranks = gpus_.size();
    const std::uint64_t floats = bytes / sizeof(float);
    // Each GPU's share of a chunked call, at least one float, as bench-collectives shapes it
    // (core/collective.cpp, shape_for): never a call that moves nothing.
    const std::uint64_t chunk = std::max<std::uint64_t>(1, floats / ranks);
    for (std::uint64_t call = 0; call < calls; ++call) {
      check_nccl(ncclGroupStart(), "ncclGroupStart");
      for (const Gpu& gpu : gpus_) {
        ncclResult_t status = ncclSuccess;
        if (op_ == "allreduce")
          status = ncclAllReduce(gpu.send, gpu.receive, floats, ncclFloat, ncclSum, gpu.comm, gpu.stream);
        else if (op_ == "allgather")
          status = ncclAllGather(gpu.send, gpu.receive, chunk, ncclFloat, gpu.comm, gpu.stream);
        else if (op_ == "reducescatter")
          status = ncclReduceScatter(gpu.send, gpu.receive, chunk, ncclFloat, ncclSum, gpu.comm, gpu.stream);
        else
          status = ncclBroadcast(gpu.send, gpu.receive, floats, ncclFloat, 0, gpu.comm, gpu.stream);
        check_nccl(status, op_.c_str());
      }
      check_nccl(ncclGroupEnd(), "ncclGroupEnd");
    }
  }

  // One run's time, from GPU 0's begin event to its end event after every stream's work.
  double run_us(std::uint64_t bytes, std::uint64_t calls) {
    check_cuda(cudaSetDevice(0), "cudaSetDevice");
    check_cuda(cudaEventRecord(begin_, gpus_[0].stream), "cudaEventRecord");
    for (std::size_t i = 1; i < gpus_.size(); ++i)
      check_cuda(cudaStreamWaitEvent(gpus_[i].stream, begin_, 0), "cudaStreamWaitEvent");
    issue(bytes, calls);
    for (std::size_t i = 1; i < gpus_.size(); ++i) {
      check_cuda(cudaSetDevice(gpus_[i].device), "cudaSetDevice");
      check_cuda(cudaEventRecord(joined_[i], gpus_[i].stream), "cudaEventRecord");
      check_cuda(cudaStreamWaitEvent(gpus_[0].stream, joined_[i], 0), "cudaStreamWaitEvent");
    }
    check_cuda(cudaSetDevice(0), "cudaSetDevice");
    check_cuda(cudaEventRecord(end_, gpus_[0].stream), "cudaEventRecord");
    check_cuda(cudaEventSynchronize(end_), "cudaEventSynchronize");
    float milliseconds = 0;
    check_cuda(cudaEventElapsedTime(&milliseconds, begin_, end_), "cudaEventElapsedTime");
    return 1000.0 * milliseconds;
  }

  std::string op_;
  std::vector<Gpu> gpus_;
  std::vector<cudaEvent_t> joined_;
  cudaEvent_t begin_ = nullptr, end_ = nullptr;
};

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3 || argc > 4) return usage("an operation and sizes are needed");
  const std::string op = argv[1];
  if (op != "allreduce" && op != "allgather" && op != "reducescatter" && op != "broadcast")
    return usage("'" + op + "' is not one of the four operations");
  const std::vector<std::uint64_t> sizes = parse_sizes(argv[2]);
  if (sizes.empty()) return usage(std::string("'") + argv[2] + "': sizes are positive multiples of 4 bytes, comma-separated");
  int repeats = 5;
  if (argc == 4) {
    const std::string extra = argv[3];
    char* end = nullptr;
    const long value = extra.rfind("repeats=", 0) == 0 ? std::strtol(extra.c_str() + 8, &end, 10) : 0;
    if (end == nullptr || *end != '\0' || value < 1 || value > 1000)
      return usage("'" + extra + "': repeats=R with R from 1 to 1000");
    repeats = static_cast<int>(value);
  }
  try {
    BareLoop loop(op, *std::max_element(sizes.begin(), sizes.end()));
    int version = 0;
    check_nccl(ncclGetVersion(&version), "ncclGetVersion");
    std::printf("# bare-nccl-loop: NCCL %d, %s, median of %d runs\n", version, op.c_str(), repeats);
    for (const std::uint64_t bytes : sizes) {
      std::printf("%s %llu %.3f\n", op.c_str(), static_cast<unsigned long long>(bytes), loop.time_us(bytes, repeats));
      std::fflush(stdout);
    }
  } catch (const Failure& failure) {
    std::fprintf(stderr, "bare-nccl-loop: %s\n", failure.what());
    return 3;
  }
  return 0;
}
