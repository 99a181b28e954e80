// The profiler plugin's entry points called as NCCL calls them: the table NCCL finds by
// name, init with the shared activation mask, and start/stop with descriptors of every
// interface version (2.26's v3, 2.27's v4, 2.28's v5), laid out as NCCL fills them.
#include <gtest/gtest.h>

#include "commbench/backend/nccl_choices.hpp"
#include "commbench/backend/nccl_profiler_abi.hpp"

namespace commbench {
namespace {

using namespace nccl_profiler;

constexpr int kEventGroup = 1;  // ncclProfileGroup: not asked for, not counted

template <typename Descriptor>
Descriptor collective(std::uint64_t type) {
  Descriptor d{};
  d.type = static_cast<decltype(d.type)>(type);
  d.rank = 3;
  return d;
}

DescriptorV3 v3(const char* algo, const char* proto, int channels, int warps, int type = kEventColl) {
  DescriptorV3 d = collective<DescriptorV3>(type);
  d.coll.func = "AllReduce";
  d.coll.datatype = "ncclFloat32";
  d.coll.n_max_channels = static_cast<std::uint8_t>(channels);
  d.coll.n_warps = static_cast<std::uint8_t>(warps);
  d.coll.algo = algo;
  d.coll.proto = proto;
  return d;
}

CollV4 coll_v4(const char* algo, const char* proto, int channels, int warps) {
  CollV4 c{};
  c.func = "AllGather";
  c.n_channels = static_cast<std::uint8_t>(channels);
  c.n_warps = static_cast<std::uint8_t>(warps);
  c.algo = algo;
  c.proto = proto;
  return c;
}

TEST(NcclProfilerPlugin, InitAddsCollectiveEventsToTheSharedMask) {
  int mask = 1 << 8;  // another communicator's choice stays
  void* context = nullptr;
  EXPECT_EQ(ncclProfiler_v3.init(&context, &mask), 0);
  EXPECT_EQ(mask, (1 << 8) | kEventColl);
  mask = 0;
  EXPECT_EQ(ncclProfiler_v4.init(&context, &mask, "comm", 42, 2, 16, 3, nullptr), 0);
  EXPECT_EQ(mask, kEventColl);
  mask = 0;
  EXPECT_EQ(ncclProfiler_v5.init(&context, 42, &mask, "comm", 2, 16, 3, nullptr), 0);
  EXPECT_EQ(mask, kEventColl);
  EXPECT_NE(context, nullptr);
  EXPECT_STREQ(ncclProfiler_v5.name, "commbench");
  EXPECT_EQ(ncclProfiler_v5.finalize(context), 0);
}

TEST(NcclProfilerPlugin, Version3CountsEachLaunchAndSaysWhenTheAlgorithmChangedWithinACase) {
  nccl_choice_tally().take();
  void* context = nullptr;
  int mask = 0;
  ncclProfiler_v3.init(&context, &mask);
  void* handle = nullptr;
  for (DescriptorV3 d : {v3("RING", "SIMPLE", 16, 16), v3("RING", "SIMPLE", 16, 16), v3("TREE", "SIMPLE", 16, 16),
                         v3("RING", "LL", 4, 8, kEventGroup)}) {
    ASSERT_EQ(ncclProfiler_v3.start_event(context, &handle, &d), 0);
    ASSERT_NE(handle, nullptr);  // NCCL hands it back to stop and state calls
    ASSERT_EQ(ncclProfiler_v3.record_event_state(handle, 0, nullptr), 0);
    ASSERT_EQ(ncclProfiler_v3.stop_event(handle), 0);
  }
  const NcclChoiceSummary summary = nccl_choice_tally().take();
  EXPECT_EQ(summary.launches, 3u);  // the group event is not a launch
  EXPECT_EQ(summary.algo, "mixed");
  EXPECT_EQ(summary.algo_split, (std::map<std::string, std::uint64_t>{{"RING", 2}, {"TREE", 1}}));
  EXPECT_EQ(summary.proto, "SIMPLE");
  EXPECT_EQ(summary.channels, "16");
  EXPECT_EQ(summary.warps, "16");
  // take() starts afresh: the next case sees only its own launches.
  EXPECT_EQ(nccl_choice_tally().take().launches, 0u);
}

TEST(NcclProfilerPlugin, Version4ReadsTheChannelsUsed) {
  nccl_choice_tally().take();
  void* handle = nullptr;
  DescriptorV4 d = collective<DescriptorV4>(kEventColl);
  d.coll = coll_v4("NVLS", "SIMPLE", 24, 16);
  ncclProfiler_v4.start_event(nullptr, &handle, &d);
  d.coll = coll_v4("NVLS", "SIMPLE", 32, 16);
  ncclProfiler_v4.start_event(nullptr, &handle, &d);
  const NcclChoiceSummary summary = nccl_choice_tally().take();
  EXPECT_EQ(summary.algo, "NVLS");
  EXPECT_EQ(summary.channels, "mixed");
  EXPECT_EQ(summary.channels_split, (std::map<std::string, std::uint64_t>{{"24", 1}, {"32", 1}}));
}

TEST(NcclProfilerPlugin, Version5ReadsPastItsWiderTypeAndNamesAMissingAlgorithmUnknown) {
  nccl_choice_tally().take();
  void* handle = nullptr;
  DescriptorV5 d = collective<DescriptorV5>(kEventColl);
  d.coll.v4 = coll_v4("PAT", "LL128", 2, 4);
  ncclProfiler_v5.start_event(nullptr, &handle, &d);
  d.coll.v4 = coll_v4(nullptr, nullptr, 2, 4);
  ncclProfiler_v5.start_event(nullptr, &handle, &d);
  d.type = std::uint64_t{1} << 9;  // ncclProfileCollApi: the API call, not a launch
  ncclProfiler_v5.start_event(nullptr, &handle, &d);
  const NcclChoiceSummary summary = nccl_choice_tally().take();
  EXPECT_EQ(summary.launches, 2u);
  EXPECT_EQ(summary.algo_split, (std::map<std::string, std::uint64_t>{{"PAT", 1}, {"unknown", 1}}));
  EXPECT_EQ(summary.proto, "mixed");
  EXPECT_EQ(summary.warps, "4");
}

TEST(NcclProfilerPlugin, NoLaunchesLeaveEveryFieldEmpty) {
  nccl_choice_tally().take();
  const NcclChoiceSummary summary = nccl_choice_tally().take();
  EXPECT_EQ(summary.launches, 0u);
  EXPECT_EQ(summary.algo, "");
  EXPECT_EQ(summary.channels, "");
}

}  // namespace
}  // namespace commbench
