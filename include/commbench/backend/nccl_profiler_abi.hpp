// The parts of NCCL's profiler plugin interface that commbench's plugin uses, laid out as
// NCCL 2.26 (interface v3), 2.27 (v4) and 2.28 (v5) lay them out (NCCL's
// src/include/plugin/profiler/profiler_v{3,4,5}.h): the table of entry points NCCL looks
// up by name in the plugin (newest version first), and the descriptor NCCL passes when a
// collective starts. Only the collective member of the descriptor's union is spelled
// out: the plugin reads nothing else, and NCCL owns the memory.
#pragma once

#include <cstddef>
#include <cstdint>

namespace commbench::nccl_profiler {

using Result = int;                   // ncclResult_t; 0 is ncclSuccess
inline constexpr int kEventColl = 2;  // ncclProfileColl, a bit of the activation mask
using Logger = void (*)(int level, unsigned long flags, const char* file, int line, const char* format, ...);

struct CollV3 {
  const char* name;
  std::uint64_t comm_hash;
  std::uint64_t seq_number;
  const char* func;
  const void* send_buff;
  void* recv_buff;
  std::size_t count;
  int root;
  const char* datatype;
  std::uint8_t n_max_channels;
  std::uint8_t n_warps;
  const char* algo;
  const char* proto;
};

// v4 moved the communicator's name and hash to init and counts the channels used.
struct CollV4 {
  std::uint64_t seq_number;
  const char* func;
  const void* send_buff;
  void* recv_buff;
  std::size_t count;
  int root;
  const char* datatype;
  std::uint8_t n_channels;
  std::uint8_t n_warps;
  const char* algo;
  const char* proto;
};

struct CollV5 {
  CollV4 v4;
  void* parent_group;
};

template <typename Type, typename Coll>
struct Descriptor {
  Type type;  // uint8_t up to v4, uint64_t in v5
  void* parent_obj;
  int rank;
  union {
    Coll coll;
  };
};
using DescriptorV3 = Descriptor<std::uint8_t, CollV3>;
using DescriptorV4 = Descriptor<std::uint8_t, CollV4>;
using DescriptorV5 = Descriptor<std::uint64_t, CollV5>;

template <typename Descr, typename Init>
struct Table {
  const char* name;
  Init init;
  Result (*start_event)(void* context, void** handle, Descr* descriptor);
  Result (*stop_event)(void* handle);
  Result (*record_event_state)(void* handle, int state, void* arguments);
  Result (*finalize)(void* context);
};
using InitV3 = Result (*)(void** context, int* activation_mask);
using InitV4 = Result (*)(void** context, int* activation_mask, const char* comm_name, std::uint64_t comm_hash,
                          int nodes, int ranks, int rank, Logger log);
using InitV5 = Result (*)(void** context, std::uint64_t comm_id, int* activation_mask, const char* comm_name, int nodes,
                          int ranks, int rank, Logger log);
using TableV3 = Table<DescriptorV3, InitV3>;
using TableV4 = Table<DescriptorV4, InitV4>;
using TableV5 = Table<DescriptorV5, InitV5>;

}  // namespace commbench::nccl_profiler

// The names NCCL looks up (dlsym) in the library NCCL_PROFILER_PLUGIN names, or, for
// STATIC_PLUGIN, in the program itself.
extern "C" {
extern commbench::nccl_profiler::TableV3 ncclProfiler_v3;
extern commbench::nccl_profiler::TableV4 ncclProfiler_v4;
extern commbench::nccl_profiler::TableV5 ncclProfiler_v5;
}

// The offsets NCCL's headers give on LP64 platforms (x86_64, aarch64): a change here would
// read the wrong fields of NCCL's descriptor.
namespace commbench::nccl_profiler {
static_assert(offsetof(DescriptorV3, rank) == 16 && offsetof(DescriptorV3, coll) == 24);
static_assert(offsetof(DescriptorV5, rank) == 16 && offsetof(DescriptorV5, coll) == 24);
static_assert(offsetof(CollV3, datatype) == 64 && offsetof(CollV3, n_max_channels) == 72 &&
              offsetof(CollV3, n_warps) == 73 && offsetof(CollV3, algo) == 80 && offsetof(CollV3, proto) == 88);
static_assert(offsetof(CollV4, datatype) == 48 && offsetof(CollV4, n_channels) == 56 &&
              offsetof(CollV4, n_warps) == 57 && offsetof(CollV4, algo) == 64 && offsetof(CollV4, proto) == 72);
static_assert(offsetof(CollV5, parent_group) == 80);
}  // namespace commbench::nccl_profiler
