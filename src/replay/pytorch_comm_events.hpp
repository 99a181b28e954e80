// The events of a torch.profiler trace that say what a rank communicated: each `c10d::`
// operator the training thread called (its tensors' shapes and types), each range the
// gloo backend ran it in, and the `ProfilerStep#N` windows. Collected one event at a time
// as the trace streams, then paired: the k-th call of an operation with the k-th range of
// the same operation, since a process group runs its work in the order it was called.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "commbench/replay/communication_trace.hpp"

namespace commbench {

// A rank's calls and what its backend ran: the backend's own runs (NCCL kernels, else gloo
// ranges) joined into the time they cover, and those no call claimed.
struct TracedCommunication {
  std::vector<TracedCollective> collectives;
  std::vector<std::pair<double, double>> backend_busy_us;  // merged [start, end) of every run
  std::size_t unclaimed_runs = 0;
  double unclaimed_seconds = 0;
  // How calls found their runs: "launch" (the kernels' correlation ids), "external id",
  // "order" (time and name), "" (no runs).
  std::string pairing;
};

// The argument an event made from one of NCCL's NVTX ranges carries its size in: nccl-tests'
// bytes from NCCL's payload, which names no type. No profiler writes it.
inline constexpr std::string_view kNcclPayloadBytesArgument = "commbench: NCCL payload bytes";

// What the reader turns into a one-line error that names the file.
struct MalformedEvent : std::runtime_error {
  using std::runtime_error::runtime_error;
};

class PytorchCommEvents {
 public:
  // Throws MalformedEvent for a communication or step event whose times are no numbers.
  void add(const nlohmann::json& event);
  std::vector<StepWindow> steps() const;
  // The communication no compute hid, in seconds. On a GPU: the time NCCL's kernels ran
  // while the process ran no other (compute) kernel. Without NCCL kernels, on CPU: the time
  // the backend's own ranges (gloo's) ran while the threads that called the collectives ran
  // no aten:: operator: they waited for it, or ran Python between operators. None when the
  // trace has neither. Merges the compute kernels in place, once every event is in.
  std::optional<double> exposed_seconds();
  // Whether exposed_seconds() is the CPU's reading (the training thread's operators).
  bool exposed_on_the_training_thread() const;
  // A kernel that is not NCCL's: the compute the communication can hide behind. Kept
  // merged as the kernels come: a trace holds millions, and in time order (the usual
  // case) a merged list needs no sorted copy when the exposure is computed.
  void add_compute_kernel(double start_us, double end_us);
  // An aten:: operator a CPU thread ran: compute, when that thread is one that called the
  // collectives.
  void add_cpu_operator(std::int64_t thread, double start_us, double end_us);
  // In call order; `group_ranks` for every call (0: unknown).
  std::vector<TracedCollective> collectives(int group_ranks) const;

  // One communication event as the trace gives it.
  struct Call {
    std::string op;    // canonical: "allreduce", "allgather", ...
    std::string name;  // "c10d::allreduce_", "gloo:all_reduce"
    double ts = 0, dur = 0;
    std::string dtype;  // canonical, "" unknown
    std::size_t dtype_bytes = 0;
    std::uint64_t elements = 0;
    bool elements_known = false;
    std::optional<std::uint64_t> bytes;  // kNcclPayloadBytesArgument's: sized, with no type
    std::string algo, proto;             // an NCCL kernel's, from its name
    std::optional<std::int64_t> thread;  // the trace's tid, where it is a number
    // PyTorch's "External id": a kernel's is that of the record_param_comms that launched it.
    std::optional<std::int64_t> external_id;
    // A kernel's CUPTI correlation id: the CPU launch that queued it carries the same.
    std::optional<std::int64_t> correlation;
    int group_ranks = 0;  // the ranks of its process group, where the event says; 0 unknown
    std::optional<std::int64_t> sequence;  // record_param_comms' "Seq": the call's number in its group
    std::string process_group;             // record_param_comms' "Process Group Name"
  };

  // A trace's calls and runs, in the order read: chunks, not one buffer copied as it
  // doubles (a trace of a GiB holds a hundred thousand); what points into them stays valid.
  using CallList = std::deque<Call>;

  // A CPU call that queued a kernel (cudaLaunchKernel, cuLaunchKernelEx...): its thread and
  // time place the kernel inside the communication call that launched it.
  struct Launch {
    std::int64_t correlation = 0;
    std::int64_t thread = 0;
    double ts = 0;
  };
  void add_launch(const Launch& launch) { launches_.push_back(launch); }

  // In call order: the calls, and what the rank's backend ran in all (TracedCommunication).
  TracedCommunication traced_communication(int group_ranks) const;

 private:
  CallList calls_;                                  // c10d operators on the calling thread
  CallList runs_;                                   // the backend's own: gloo's ranges, NCCL's kernels on the GPU
  CallList params_;                                 // record_param_comms: what PyTorch's NCCL backend says it sent
  CallList annotations_;                            // nccl:* ranges ProcessGroupNCCL marks its calls with
  std::vector<Launch> launches_;
  std::deque<std::pair<double, double>> compute_;  // other kernels on the GPU: start, end (us), kept merged
  std::map<std::int64_t, std::vector<std::pair<double, double>>> cpu_operators_;  // by thread, kept merged
  std::vector<StepWindow> steps_;

  bool has_nccl_kernels() const;
  std::optional<double> training_thread_exposure() const;
};

// "c10d::_allgather_base_" → "allgather", "gloo:reduce_scatter" → "reducescatter"; empty
// for a name that is no communication.
std::string canonical_comm_op(std::string_view name);

// The profiler's "Input type" name of a canonical type: "float32" → "float"; empty for a
// name it does not know.
std::string torch_type_name(std::string_view canonical);

}  // namespace commbench
