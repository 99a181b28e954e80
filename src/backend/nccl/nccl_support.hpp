// The NCCL backend's plumbing, shared by its files: CUDA and NCCL error checks, NCCL's
// names for commbench's types and operations, and the CUDA devices this process sees.
#pragma once

#include <cuda_runtime.h>
#include <nccl.h>

#include <optional>
#include <string>
#include <vector>

#include "commbench/core/dtype.hpp"
#include "commbench/core/reduce_op.hpp"

namespace commbench::nccl::detail {

// BackendError naming `what` and the CUDA or NCCL error string (with NCCL's last error
// for `comm`, where it has one). ncclInProgress is not an error.
void check_cuda(cudaError_t code, const std::string& what);
void check_nccl(ncclResult_t code, const std::string& what, ncclComm_t comm = nullptr);

// Why cudaGetDeviceCount found no device, in words for a machine without GPUs: the CUDA
// runtime answers "CUDA driver version is insufficient" where no driver is installed at
// all, which reads as if an upgrade would help.
std::string no_device_reason(cudaError_t status);

ncclDataType_t nccl_type(DataType t);
ncclRedOp_t nccl_op(ReduceOp op);
// "2.28.9" from NCCL's version code.
std::string version_text(int code);
std::optional<std::string> environment(const char* name);

// PCI bus ids of the devices this process sees, in ordinal order; empty without a device.
std::vector<std::string> visible_pci_bus_ids();
std::string join(const std::vector<std::string>& items, char separator);
std::vector<std::string> split_text(const std::string& text, char separator);

}  // namespace commbench::nccl::detail
