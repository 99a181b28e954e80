// One collective enqueued on every GPU this process drives: the NCCL call each collective
// maps to, and the group around them that lets one process drive several GPUs.
#pragma once

#include <cuda_runtime.h>

#include <string_view>
#include <vector>

#include "commbench/core/collective.hpp"
#include "commbench/core/op_case.hpp"
#include "nccl_buffers.hpp"
#include "nccl_state.hpp"

namespace commbench::nccl::detail {

// What one NCCL call needs for one device (nccl_calls.cpp).
struct CallArguments;

// One collective's NCCL call. Point-to-point exchanges need a group around all their
// sends and receives; `no_in_place` says why NCCL has no in-place form, if it has none.
struct NcclCall {
  Collective op;
  void (*enqueue)(const CallArguments&);
  bool grouped = false;
  std::string_view no_in_place = {};
};

const NcclCall& nccl_call(Collective op);

// Enqueues `c` on each device's stream as `devices` gives them (the state's own streams,
// or a stream set's).
void enqueue_on_devices(const OpCase& c, NcclBuffers& buffers, NcclBackend::State& state,
                        const std::vector<DeviceContext>& devices);
// Enqueues `c` on the state's own streams.
void enqueue_all(const OpCase& c, NcclBuffers& buffers, NcclBackend::State& state);

}  // namespace commbench::nccl::detail
