// NVTX ranges, so that a profiler's timeline (Nsight Systems, and Paraver through it)
// says which case, phase, pattern step or validation round each kernel and each wait
// belongs to. The ranges live in a domain of their own, "commbench", with one category
// per command. They cost one branch when no tool is attached: names are built only when
// a tool asked for NVTX, which every NVTX tool does by setting NVTX_INJECTION64_PATH in
// the process it profiles. Builds without the NVTX header (COMMBENCH_WITH_NVTX) emit none.
#pragma once

#include <concepts>
#include <cstdint>
#include <string>
#include <string_view>

namespace commbench {

enum class ProfileCategory : std::uint32_t {
  collectives = 1,  // bench-collectives
  patterns = 2,     // bench-patterns
  p2p = 3,          // bench-p2p
  validate = 4,     // bench-validate
  topology = 5,     // bench-topology
};

// The command this process runs: its ranges carry that category (named once for the tool).
void set_profile_category(ProfileCategory category);

// Whether ranges are emitted: built with NVTX, and a tool attached.
bool profiler_attached();

// A range from construction to destruction, on the calling thread; ranges nest.
class ProfileRange {
 public:
  explicit ProfileRange(std::string_view name) : active_(profiler_attached()) {
    if (active_) push(std::string(name));
  }
  // The name is built only when a tool is attached: `make_name` returns it.
  template <typename MakeName>
    requires std::invocable<MakeName&>
  explicit ProfileRange(MakeName&& make_name) : active_(profiler_attached()) {
    if (active_) push(std::string(make_name()));
  }
  ~ProfileRange() {
    if (active_) pop();
  }
  ProfileRange(const ProfileRange&) = delete;
  ProfileRange& operator=(const ProfileRange&) = delete;

 private:
  static void push(const std::string& name);
  static void pop();
  bool active_;
};

}  // namespace commbench
