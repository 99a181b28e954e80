// The backend extensions on a real GPU (ctest label gpu; exit 77 where there is none):
// the spin kernel's calibration, stream/event ordering, overlap of an allreduce with the
// spin kernel, peer send/recv (a loopback on one GPU, a pair both ways on two), and a
// split keeping bus ids. Prints every measured number, for results/gpu/.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <exception>
#include <memory>
#include <string>

#include "commbench/backend/local_bootstrap.hpp"
#include "commbench/backend/nccl/nccl_backend.hpp"
#include "commbench/backend/peer_exchange.hpp"
#include "commbench/backend/stream_set.hpp"
#include "commbench/core/op_case.hpp"

namespace commbench {
namespace {

constexpr int kSkipped = 77;
int failures = 0;

void expect(bool holds, const std::string& what) {
  std::printf("%s: %s\n", holds ? "ok  " : "FAIL", what.c_str());
  if (!holds) ++failures;
}

std::string milliseconds(double seconds) { return std::to_string(seconds * 1e3) + " ms"; }

OpCase float32_allreduce(std::uint64_t bytes, int ranks) {
  return build_plan({{Collective::allreduce},
                     {DataType::float32},
                     {ReduceOp::sum},
                     {Placement::out_of_place},
                     {bytes},
                     0,
                     ranks,
                     {}})
      .front();
}

void spin_calibration(StreamSet& streams) {
  std::printf("\n== spin kernel calibration ==\noccupies: %s\n", streams.compute().occupies().c_str());
  const double durations[] = {20e-6, 100e-6, 1e-3, 10e-3, 100e-3};
  const ComputeCalibration calibration = streams.compute().calibrate(durations, 7);
  std::printf("offset (subtracted from requests): %.3f us\n", calibration.offset_seconds * 1e6);
  std::printf("%14s %14s %14s %14s %12s\n", "requested_us", "raw_us", "corrected_us", "fastest_us", "error_us");
  for (const CalibrationPoint& point : calibration.points)
    std::printf("%14.3f %14.3f %14.3f %14.3f %12.3f\n", point.requested_seconds * 1e6, point.raw_seconds * 1e6,
                point.corrected_seconds * 1e6, point.corrected_fastest_seconds * 1e6,
                (point.corrected_seconds - point.requested_seconds) * 1e6);
  std::printf("worst error after correction: %.3f us, %.3f %%\n", calibration.worst_absolute_error_seconds() * 1e6,
              calibration.worst_relative_error() * 100);
  // Events and %globaltimer both count real nanoseconds: what is left is launch jitter.
  for (const CalibrationPoint& point : calibration.points)
    expect(std::abs(point.corrected_seconds - point.requested_seconds) <= 20e-6 + 0.02 * point.requested_seconds,
           "calibrated spin of " + std::to_string(point.requested_seconds * 1e6) + " us within 20 us + 2 %");
}

void stream_ordering(Backend& backend, StreamSet& streams) {
  std::printf("\n== streams and events ==\n");
  const OpCase allreduce = float32_allreduce(1 << 20, backend.ranks());
  auto buffers = backend.allocate(allreduce.send_bytes(), allreduce.recv_bytes());
  backend.fill_inputs(allreduce, *buffers);
  constexpr double kCompute = 20e-3;
  const StreamEvent comm_begin = streams.record("comm");
  streams.enqueue_compute("compute", kCompute);
  const StreamEvent compute_done = streams.record("compute");
  streams.wait("comm", compute_done);
  streams.enqueue("comm", allreduce, *buffers);
  const StreamEvent comm_done = streams.record("comm");
  streams.synchronize_all();
  const double waited = streams.elapsed_seconds(comm_begin, comm_done);
  std::printf("comm stream waited for the compute event: begin -> allreduce done %s\n", milliseconds(waited).c_str());
  expect(waited >= kCompute * 0.99, "the allreduce ran after 20 ms of compute on another stream");
  expect(streams.elapsed_seconds(compute_done, comm_done) >= 0, "compute event before the allreduce's end");
  expect(backend.count_wrong(allreduce, *buffers) == 0, "the allreduce's result is right");

  streams.enqueue_compute("compute", kCompute);
  const StreamEvent compute_again = streams.record("compute");
  streams.enqueue("comm", allreduce, *buffers);
  const StreamEvent comm_again = streams.record("comm");
  streams.synchronize_all();
  expect(streams.elapsed_seconds(comm_again, compute_again) > 0,
         "without the wait the allreduce ends before the compute (streams run side by side)");
}

double seconds_of(const auto& step) {
  const auto begin = std::chrono::steady_clock::now();
  step();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
}

void overlap(Backend& backend, StreamSet& streams) {
  std::printf("\n== allreduce overlapped with the spin kernel ==\n");
  const OpCase allreduce = float32_allreduce(256 << 20, backend.ranks());
  auto buffers = backend.allocate(allreduce.send_bytes(), allreduce.recv_bytes());
  const auto communicate = [&] {
    for (int i = 0; i < 10; ++i) streams.enqueue("comm", allreduce, *buffers);
  };
  communicate();
  streams.synchronize_all();  // warm-up
  double communication = 1e9, compute = 0, overlapped = 1e9;
  for (int trial = 0; trial < 3; ++trial)
    communication = std::min(communication, seconds_of([&] {
                               communicate();
                               streams.synchronize("comm");
                             }));
  compute = std::max(10e-3, 2 * communication);
  for (int trial = 0; trial < 3; ++trial)
    overlapped = std::min(overlapped, seconds_of([&] {
                            streams.enqueue_compute("compute", compute);
                            communicate();
                            streams.synchronize_all();
                          }));
  std::printf("10 allreduces of 256 MiB: %s alone; compute %s; overlapped %s (sum %s)\n",
              milliseconds(communication).c_str(), milliseconds(compute).c_str(), milliseconds(overlapped).c_str(),
              milliseconds(communication + compute).c_str());
  expect(overlapped < compute + communication / 2, "at least half the communication hidden behind the spin kernel");
}

void peer_send_recv(Backend& backend) {
  std::printf("\n== peer send/recv ==\n");
  const int n = backend.ranks();
  const std::pair<int, int> pair[] = {{0, n - 1}};
  const PeerRound round = n >= 2 ? PeerRound::both_ways(pair, n) : PeerRound({{0, 0}}, n);
  std::printf("round: %s\n", n >= 2 ? "GPU pair 0 <-> last, both ways" : "loopback on the one GPU");
  for (const std::uint64_t bytes : {std::uint64_t{1000}, std::uint64_t{1} << 20, std::uint64_t{256} << 20}) {
    auto exchange = backend.peer_exchange(round, bytes);
    exchange->run_single();
    expect(exchange->count_wrong() == 0, std::to_string(bytes) + " B: received bytes right");
    const double seconds = exchange->time_rounds(20) / 20;
    std::printf("%12llu B: %.3f us per round, %.2f GB/s per direction\n", static_cast<unsigned long long>(bytes),
                seconds * 1e6, static_cast<double>(bytes) / seconds / 1e9);
    exchange->corrupt_received();
    expect(exchange->count_wrong() == 1, std::to_string(bytes) + " B: one damaged byte is caught");
  }
}

void split_keeps_bus_ids(Backend& backend) {
  std::printf("\n== split ==\n");
  auto sub = backend.split(0, 0);
  expect(sub->device_bus_ids() == backend.device_bus_ids() && !sub->device_bus_ids().empty(),
         "the sub-communicator keeps the bus ids " + backend.device_bus_ids().front());
}

int run() {
  const int devices = nccl::visible_cuda_devices();
  if (devices == 0) {
    std::printf("skipped: no CUDA device\n");
    return kSkipped;
  }
  nccl::NcclOptions options;
  options.gpus_per_process = std::min(devices, 2);  // two GPUs make a real pair
  nccl::NcclBackend backend(std::make_unique<LocalBootstrap>(), options);
  std::printf("%s\n", backend.library_version().c_str());
  for (const std::string& line : backend.device_descriptions()) std::printf("%s\n", line.c_str());
  auto streams = backend.streams();
  spin_calibration(*streams);
  stream_ordering(backend, *streams);
  overlap(backend, *streams);
  peer_send_recv(backend);
  split_keeps_bus_ids(backend);
  std::printf("\n%d failure(s)\n", failures);
  return failures == 0 ? 0 : 1;
}

}  // namespace
}  // namespace commbench

int main() {
  try {
    return commbench::run();
  } catch (const std::exception& error) {
    std::fprintf(stderr, "gpu extensions test: %s\n", error.what());
    return 1;
  }
}
