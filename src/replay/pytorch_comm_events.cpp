#include "pytorch_comm_events.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <iterator>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <utility>

#include <fmt/format.h>

#include "call_pairing.hpp"
#include "commbench/replay/nccl_kernel_name.hpp"
#include "time_intervals.hpp"

namespace commbench {

namespace {

using nlohmann::json;

struct TorchType {
  std::string_view trace_name;   // as the profiler's "Input type" writes it
  std::string_view scalar_name;  // as record_param_comms and NCCL kernels write it (c10::ScalarType)
  std::string_view name;
  std::size_t bytes;
};

constexpr std::array kTorchTypes{
    TorchType{"float", "Float", "float32", 4},
    TorchType{"double", "Double", "float64", 8},
    TorchType{"c10::Half", "Half", "float16", 2},
    TorchType{"c10::BFloat16", "BFloat16", "bfloat16", 2},
    TorchType{"long int", "Long", "int64", 8},
    TorchType{"long", "Long", "int64", 8},
    TorchType{"int", "Int", "int32", 4},
    TorchType{"short int", "Short", "int16", 2},
    TorchType{"signed char", "Char", "int8", 1},
    TorchType{"unsigned char", "Byte", "uint8", 1},
    TorchType{"bool", "Bool", "bool", 1},
    TorchType{"c10::Float8_e4m3fn", "Float8_e4m3fn", "float8_e4m3", 1},
    TorchType{"c10::Float8_e5m2", "Float8_e5m2", "float8_e5m2", 1},
};

// The type a trace names, by the profiler's spelling (`scalar` false) or c10's.
const TorchType* torch_type(std::string_view name, bool scalar = false) {
  for (const TorchType& type : kTorchTypes)
    if ((scalar ? type.scalar_name : type.trace_name) == name) return &type;
  return nullptr;
}

constexpr std::array<std::string_view, 12> kOps{"allreduce", "allgather", "reducescatter", "broadcast",
                                                "reduce",    "alltoall",  "gather",        "scatter",
                                                "barrier",   "send",      "recv",          "monitoredbarrier"};

// A member the trace may write in another type than PyTorch does: "" when it is no string.
std::string text_member(const json& event, const char* key) {
  const auto found = event.find(key);
  return found != event.end() && found->is_string() ? found->get<std::string>() : std::string();
}

// A time in microseconds; absent is 0, anything but a finite number is no trace PyTorch
// wrote.
double time_member(const json& event, const char* key, const std::string& name) {
  const auto found = event.find(key);
  if (found == event.end()) return 0.0;
  if (found->is_number()) {
    const double value = found->get<double>();
    if (std::isfinite(value) && std::fabs(value) < 1e18) return value;
  }
  throw MalformedEvent(fmt::format("event '{}' has a '{}' that is no time in microseconds", name, key));
}

bool ends_with(const std::string& text, std::string_view suffix) {
  return text.size() >= suffix.size() && text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// Elements of a shape: a tensor's dims multiply (none: a scalar, one element); a list of
// tensors adds up. PyTorch nests no deeper than a list of shapes.
std::uint64_t elements_of(const json& dims, int depth = 0) {
  if (!dims.is_array() || depth > 8) return 0;
  if (dims.empty()) return 1;
  if (std::all_of(dims.begin(), dims.end(), [](const json& d) { return d.is_number_integer(); })) {
    std::uint64_t product = 1;
    for (const json& d : dims) product *= static_cast<std::uint64_t>(std::max<std::int64_t>(d.get<std::int64_t>(), 0));
    return product;
  }
  std::uint64_t sum = 0;
  for (const json& d : dims) sum += elements_of(d, depth + 1);
  return sum;
}

// Which argument holds the buffer of nccl-tests' size: the gathered output of an
// all-gather, the scattered input of a reduce-scatter, else the first tensor.
std::size_t size_argument(const std::string& op) { return op == "reducescatter" ? 1 : 0; }

// The group an all-gather or reduce-scatter ran on, from its shapes: the gathered output
// (the scattered input) is the group's size times the rank's part. 0 when they do not say.
int group_from_shapes(const std::string& op, const json& dims) {
  if ((op != "allgather" && op != "reducescatter") || !dims.is_array() || dims.size() < 2) return 0;
  const std::uint64_t whole = elements_of(dims[op == "allgather" ? 0 : 1]);
  const std::uint64_t part = elements_of(dims[op == "allgather" ? 1 : 0]);
  if (part == 0 || whole < part || whole % part != 0 || whole / part > 1u << 20) return 0;
  return static_cast<int>(whole / part);
}

PytorchCommEvents::Call call_of(const json& event, const std::string& op, const std::string& name) {
  PytorchCommEvents::Call call;
  call.op = op;
  call.name = name;
  call.ts = time_member(event, "ts", name);
  call.dur = time_member(event, "dur", name);
  if (const auto tid = event.find("tid"); tid != event.end() && tid->is_number_integer())
    call.thread = tid->get<std::int64_t>();
  static const json kNoArgs = json::object();
  const auto found_args = event.find("args");
  const json& args = found_args != event.end() && found_args->is_object() ? *found_args : kNoArgs;
  // gloo's ranges and ProcessGroupNCCL's own hold the one tensor the rank sends.
  const bool one_tensor = name.rfind("gloo:", 0) == 0 || name.rfind("nccl:", 0) == 0;
  const std::size_t argument = one_tensor ? 0 : size_argument(op);
  const json* types = args.contains("Input type") ? &args["Input type"] : nullptr;
  const json* dims = args.contains("Input Dims") ? &args["Input Dims"] : nullptr;
  if (types != nullptr && types->is_array() && argument < types->size() && (*types)[argument].is_string()) {
    if (const TorchType* type = torch_type((*types)[argument].get<std::string>())) {
      call.dtype = type->name;
      call.dtype_bytes = type->bytes;
    }
  }
  if (const auto payload = args.find(kNcclPayloadBytesArgument); payload != args.end() && payload->is_number_unsigned())
    call.bytes = payload->get<std::uint64_t>();
  if (op == "barrier") {
    // A barrier's token tensor is no payload: nccl-tests counts no bytes for it.
    call.dtype.clear();
    call.elements_known = true;
    return call;
  }
  // No shape and no type is an argument the profiler did not record (the list of output
  // lists of c10d::allgather_, which FSDP1 calls on gloo), not a scalar: its size is then
  // the backend's range's.
  // Older profilers wrote a list of tensors as "TensorList" with no shape at all.
  const bool unrecorded = types != nullptr && types->is_array() && argument < types->size() &&
                          ((*types)[argument] == "" || (*types)[argument] == "TensorList") && dims != nullptr &&
                          dims->is_array() && argument < dims->size() && (*dims)[argument].empty();
  if (dims != nullptr && dims->is_array() && argument < dims->size() && !unrecorded) {
    // A dimension of 0 is a call of no bytes (an all-to-all with nothing to send), not an
    // unknown size.
    call.elements = elements_of((*dims)[argument]);
    call.elements_known = (*dims)[argument].is_array();
  }
  if (!one_tensor && dims != nullptr) call.group_ranks = group_from_shapes(op, *dims);
  return call;
}

std::uint64_t whole_member(const json& args, const char* key) {
  const auto found = args.find(key);
  return found != args.end() && found->is_number_unsigned() ? found->get<std::uint64_t>() : 0;
}

// The ranks of the call's group: "Group size", else the list "Process Group Ranks" ("[0, 1]").
int group_of_record(const json& args) {
  if (const std::uint64_t size = whole_member(args, "Group size"); size > 0 && size <= 1u << 20)
    return static_cast<int>(size);
  const std::string ranks = text_member(args, "Process Group Ranks");
  if (ranks.size() < 3 || ranks.front() != '[') return 0;
  return static_cast<int>(std::count(ranks.begin(), ranks.end(), ',')) + 1;
}

// What PyTorch's NCCL backend recorded of a call (record_param_comms, and the same members
// on the NCCL kernel it launched): the operation, its type and the elements of nccl-tests'
// buffer (an all-gather's output, else the input).
PytorchCommEvents::Call nccl_record_of(const json& event, const std::string& op, const std::string& name) {
  PytorchCommEvents::Call call;
  call.op = op;
  call.name = name;
  call.ts = time_member(event, "ts", name);
  call.dur = time_member(event, "dur", name);
  if (const auto tid = event.find("tid"); tid != event.end() && tid->is_number_integer())
    call.thread = tid->get<std::int64_t>();
  const auto found_args = event.find("args");
  if (found_args == event.end() || !found_args->is_object()) return call;
  const json& args = *found_args;
  if (const auto id = args.find("External id"); id != args.end() && id->is_number_integer())
    call.external_id = id->get<std::int64_t>();
  if (const TorchType* type = torch_type(text_member(args, "dtype"), true)) {
    call.dtype = type->name;
    call.dtype_bytes = type->bytes;
  }
  if (args.contains("In msg nelems")) {
    call.elements = whole_member(args, op == "allgather" ? "Out msg nelems" : "In msg nelems");
    call.elements_known = true;
  }
  call.group_ranks = group_of_record(args);
  if (const auto seq = args.find("Seq"); seq != args.end() && seq->is_number_integer())
    call.sequence = seq->get<std::int64_t>();
  call.process_group = text_member(args, "Process Group Name");
  return call;
}

// An NCCL kernel: the run of a call on the GPU, with the algorithm and protocol its name
// holds; a generic kernel's operation is the one its arguments name, when they do.
std::optional<PytorchCommEvents::Call> nccl_kernel_of(const json& event, const std::string& name) {
  const std::optional<NcclKernelName> kernel = parse_nccl_kernel_name(name);
  if (!kernel) return std::nullopt;
  std::string op = kernel->op;
  const auto args = event.find("args");
  if (op.empty() && args != event.end() && args->is_object())
    op = canonical_comm_op("c10d::" + text_member(*args, "Collective name"));
  PytorchCommEvents::Call run = nccl_record_of(event, op, name);
  if (args != event.end() && args->is_object())
    if (const auto id = args->find("correlation"); id != args->end() && id->is_number_integer())
      run.correlation = id->get<std::int64_t>();
  run.algo = kernel->algo;
  // Before NCCL 2.19 one kernel ran every protocol of its function, and its name holds the
  // first one compiled (LL): the name says nothing of the protocol a call ran.
  if (name.rfind("ncclKernel_", 0) != 0) run.proto = kernel->proto;
  return run;
}

}  // namespace

std::string canonical_comm_op(std::string_view name) {
  std::string_view rest;
  if (name.rfind("c10d::", 0) == 0)
    rest = name.substr(6);
  else if (name.rfind("gloo:", 0) == 0 || name.rfind("nccl:", 0) == 0)
    rest = name.substr(5);
  else if (name.size() > 4 && name.rfind("nccl", 0) == 0 && std::isupper(static_cast<unsigned char>(name[4])))
    rest = name.substr(4);  // NCCL's own API, as its NVTX ranges name it: ncclAllReduce, ncclBcast
  else
    return "";
  std::string op;
  for (const char c : rest)
    if (c != '_') op += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  for (bool stripped = true; stripped;) {
    stripped = false;
    for (const std::string_view suffix : {"base", "coalesced", "intotensor", "tensor", "anysource"})
      if (ends_with(op, suffix) && op.size() > suffix.size()) {
        op.resize(op.size() - suffix.size());
        stripped = true;
      }
  }
  if (op == "alltoallv") op = "alltoall";
  if (op == "bcast") op = "broadcast";
  if (op == "monitoredbarrier") op = "barrier";
  if (std::find(kOps.begin(), kOps.end(), op) == kOps.end()) return "";
  return op;
}

std::string torch_type_name(std::string_view canonical) {
  for (const TorchType& type : kTorchTypes)
    if (type.name == canonical) return std::string(type.trace_name);
  return "";
}

void PytorchCommEvents::add(const json& event) {
  if (!event.is_object() || text_member(event, "ph") != "X") return;
  const std::string name = text_member(event, "name");
  if (name.rfind("ProfilerStep#", 0) == 0) {
    // A GPU trace also holds the step's range as the GPU ran it (gpu_user_annotation): a
    // projection of the same step, not a step of its own.
    if (text_member(event, "cat") == "gpu_user_annotation") return;
    StepWindow step;
    const char* digits = name.c_str() + 13;
    if (std::from_chars(digits, name.c_str() + name.size(), step.number).ec != std::errc())
      throw MalformedEvent(fmt::format("event '{}' numbers no step", name));
    step.start_us = time_member(event, "ts", name);
    step.end_us = step.start_us + time_member(event, "dur", name);
    steps_.push_back(step);
    return;
  }
  if (text_member(event, "cat") == "kernel") {
    if (std::optional<Call> run = nccl_kernel_of(event, name)) {
      runs_.push_back(std::move(*run));
    } else {
      const double start = time_member(event, "ts", name);
      add_compute_kernel(start, start + time_member(event, "dur", name));
    }
    return;
  }
  if (name == "record_param_comms") {
    const auto args = event.find("args");
    const std::string op = args != event.end() && args->is_object()
                               ? canonical_comm_op("c10d::" + text_member(*args, "Collective name"))
                               : std::string();
    if (!op.empty()) params_.push_back(nccl_record_of(event, op, name));
    return;
  }
  const std::string op = canonical_comm_op(name);
  if (op.empty()) return;
  if (name.rfind("nccl:", 0) == 0) {
    // Its gpu_user_annotation twin is the same range projected on the GPU.
    if (text_member(event, "cat") == "user_annotation") annotations_.push_back(call_of(event, op, name));
    return;
  }
  if (name.rfind("gloo:", 0) == 0)
    runs_.push_back(call_of(event, op, name));
  else if (text_member(event, "cat") == "cpu_op")
    calls_.push_back(call_of(event, op, name));
}

bool PytorchCommEvents::has_nccl_kernels() const { return std::any_of(runs_.begin(), runs_.end(), is_nccl_kernel); }

void PytorchCommEvents::add_compute_kernel(double start_us, double end_us) {
  add_interval(compute_, {start_us, end_us});
}

void PytorchCommEvents::add_cpu_operator(std::int64_t thread, double start_us, double end_us) {
  add_interval(cpu_operators_[thread], {start_us, end_us});
}

std::optional<double> PytorchCommEvents::exposed_seconds() {
  if (!has_nccl_kernels()) return training_thread_exposure();
  std::vector<TimeInterval> communication;
  for (const Call& run : runs_)
    if (is_nccl_kernel(run)) communication.emplace_back(run.ts, run.ts + run.dur);
  // Kernels on several streams at once are communication once.
  communication = merged_intervals(std::move(communication));
  // The kernels merged where they are: the union they cover is all that is read of them.
  merge_in_place(compute_);
  return (total_length(communication) - overlap_length(communication, compute_)) * 1e-6;
}

bool PytorchCommEvents::exposed_on_the_training_thread() const {
  const auto gloo = [](const Call& run) { return run.name.rfind("gloo:", 0) == 0; };
  const auto caller_known = [](const Call& call) { return call.thread.has_value(); };
  return !has_nccl_kernels() && std::any_of(runs_.begin(), runs_.end(), gloo) &&
         std::any_of(calls_.begin(), calls_.end(), caller_known);
}

std::optional<double> PytorchCommEvents::training_thread_exposure() const {
  std::vector<TimeInterval> communication;
  for (const Call& run : runs_)
    if (run.name.rfind("gloo:", 0) == 0) communication.emplace_back(run.ts, run.ts + run.dur);
  std::set<std::int64_t> callers;
  for (const Call& call : calls_)
    if (call.thread) callers.insert(*call.thread);
  if (communication.empty() || callers.empty()) return std::nullopt;
  communication = merged_intervals(std::move(communication));
  double covered = 0;
  if (callers.size() == 1) {
    // The common case, one training thread: its list is merged already when the trace was
    // in order, and a trace's operators are many, so it is not copied then.
    const auto found = cpu_operators_.find(*callers.begin());
    if (found != cpu_operators_.end())
      covered = is_merged(found->second) ? overlap_length(communication, found->second)
                                         : overlap_length(communication, merged_intervals(found->second));
  } else {
    std::vector<TimeInterval> compute;
    for (const std::int64_t thread : callers)
      if (const auto found = cpu_operators_.find(thread); found != cpu_operators_.end())
        compute.insert(compute.end(), found->second.begin(), found->second.end());
    covered = overlap_length(communication, merged_intervals(std::move(compute)));
  }
  return (total_length(communication) - covered) * 1e-6;
}

std::vector<StepWindow> PytorchCommEvents::steps() const {
  std::vector<StepWindow> steps = steps_;
  std::sort(steps.begin(), steps.end(),
            [](const StepWindow& a, const StepWindow& b) { return a.start_us < b.start_us; });
  return steps;
}

}  // namespace commbench
