// The NCCL backend's plumbing (nccl_support.hpp), and the CUDA device listing that needs no
// backend (visible_cuda_devices, list_cuda_devices).
#include "nccl_support.hpp"

#include <cstdlib>

#include <fmt/format.h>

#include "commbench/backend/nccl/nccl_backend.hpp"
#include "commbench/core/error.hpp"
#include "commbench/core/pci_bus_id.hpp"

namespace commbench::nccl {
namespace detail {

void check_cuda(cudaError_t code, const std::string& what) {
  if (code != cudaSuccess) throw BackendError(what + ": " + cudaGetErrorString(code));
}

std::string no_device_reason(cudaError_t status) {
  int driver = 0;
  const bool no_driver = cudaDriverGetVersion(&driver) != cudaSuccess || driver == 0;
  if (status == cudaErrorInsufficientDriver && no_driver) return "no NVIDIA driver/GPU found";
  if (status == cudaErrorNoDevice) return "no NVIDIA GPU found";
  return cudaGetErrorString(status);
}

void check_nccl(ncclResult_t code, const std::string& what, ncclComm_t comm) {
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
  return fmt::format("{}.{}.{}", code / 10000, code % 10000 / 100, code % 100);
}

std::optional<std::string> environment(const char* name) {
  const char* value = std::getenv(name);
  return value != nullptr ? std::optional<std::string>(value) : std::nullopt;
}

std::vector<std::string> visible_pci_bus_ids() {
  std::vector<std::string> ids;
  const int count = visible_cuda_devices();
  for (int d = 0; d < count; ++d) {
    char bus[32] = {};
    if (cudaDeviceGetPCIBusId(bus, sizeof bus, d) != cudaSuccess) {
      (void)cudaGetLastError();
      bus[0] = '\0';
    }
    ids.emplace_back(bus[0] != '\0' ? bus : fmt::format("ordinal-{}", d));
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

}  // namespace detail

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
    why_none = detail::no_device_reason(status);
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

}  // namespace commbench::nccl
