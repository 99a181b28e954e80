#include <gtest/gtest.h>

#include "commbench/backend/device_selection.hpp"
#include "commbench/core/error.hpp"

namespace commbench {
namespace {

std::vector<std::string> gpus(std::initializer_list<int> ids) {
  std::vector<std::string> out;
  for (int id : ids) out.push_back("0000:" + std::to_string(10 + id) + ":00.0");
  return out;
}

// `local_size` processes on one host, all seeing the same `visible` GPUs.
DeviceSelectionInput shared(int local_rank, int local_size, int visible, int g = 1) {
  DeviceSelectionInput in;
  in.local_rank = local_rank;
  in.gpus_per_process = g;
  std::vector<std::string> all;
  for (int d = 0; d < visible; ++d) all.push_back("0000:" + std::to_string(10 + d) + ":00.0");
  in.node_visible.assign(static_cast<std::size_t>(local_size), all);
  in.host = "gpu01";
  return in;
}

TEST(DeviceSelection, SharedGpusGoByLocalRank) {
  EXPECT_EQ(select_devices(shared(0, 8, 8)).devices, std::vector<int>{0});
  EXPECT_EQ(select_devices(shared(5, 8, 8)).devices, std::vector<int>{5});
  EXPECT_EQ(select_devices(shared(3, 4, 8)).devices, std::vector<int>{3});
  EXPECT_EQ(select_devices(shared(0, 1, 8, 8)).devices, (std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7}));
  EXPECT_EQ(select_devices(shared(1, 2, 8, 4)).devices, (std::vector<int>{4, 5, 6, 7}));
  // Two ranks, CUDA_VISIBLE_DEVICES=0,1 for both, -g 1: shared, not "bound".
  EXPECT_EQ(select_devices(shared(1, 2, 2)).devices, std::vector<int>{1});
}

TEST(DeviceSelection, LauncherBoundGpusAreUsedAsGiven) {
  // srun --gpus-per-task=1: each of 4 tasks sees one different GPU.
  DeviceSelectionInput in;
  in.local_rank = 3;
  in.node_visible = {gpus({0}), gpus({1}), gpus({2}), gpus({3})};
  in.cuda_visible_devices = "3";
  in.host = "gpu01";
  const auto selection = select_devices(in);
  EXPECT_EQ(selection.devices, std::vector<int>{0});
  EXPECT_EQ(selection.reason, "the launcher gave each process its own GPUs");
  // --gpus-per-task=2 with -g 1 is fine (uses the first), with -g 2 uses both.
  in.node_visible = {gpus({0, 1}), gpus({2, 3})};
  in.local_rank = 1;
  EXPECT_EQ(select_devices(in).devices, std::vector<int>{0});
  in.gpus_per_process = 2;
  EXPECT_EQ(select_devices(in).devices, (std::vector<int>{0, 1}));
  in.gpus_per_process = 3;
  EXPECT_THROW(select_devices(in), UsageError);
}

TEST(DeviceSelection, SlurmLocalIdNeverOverridesTheMpiLocalRank) {
  // mpirun inside an sbatch script hands every rank the batch step's SLURM_LOCALID=0.
  auto in = shared(2, 4, 4);
  in.slurm_localid = "0";
  EXPECT_EQ(select_devices(in).devices, std::vector<int>{2});
}

TEST(DeviceSelection, NoDeviceIsABackendError) {
  try {
    select_devices(shared(0, 1, 0));
    FAIL();
  } catch (const BackendError& e) {
    EXPECT_EQ(e.exit_code(), ExitCode::backend);
    EXPECT_EQ(std::string(e.what()), "no CUDA device on host gpu01");
  }
  auto hidden = shared(0, 1, 0);
  hidden.cuda_visible_devices = "";
  EXPECT_THROW(select_devices(hidden), BackendError);
}

TEST(DeviceSelection, TooFewOrTangledGpusNameTheHost) {
  auto in = shared(2, 4, 2);
  in.cuda_visible_devices = "0,1";
  try {
    select_devices(in);
    FAIL();
  } catch (const UsageError& e) {
    EXPECT_EQ(std::string(e.what()),
              "-g/--gpus-per-process: 4 process(es) x 1 GPU(s) on host gpu01 need 4 GPUs but 2 are visible "
              "(CUDA_VISIBLE_DEVICES=0,1); NCCL cannot put two ranks on one GPU");
  }
  EXPECT_THROW(select_devices(shared(0, 2, 8, 5)), UsageError);
  DeviceSelectionInput tangled;
  tangled.node_visible = {gpus({0, 1}), gpus({1, 2})};
  tangled.host = "gpu01";
  try {
    select_devices(tangled);
    FAIL();
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("overlapping but different GPU sets"), std::string::npos);
  }
}

TEST(DeviceSelection, GarbageEnvironmentIsAUsageError) {
  for (const char* bad : {"zero", "0,,1", "1;2", "GPU-", "-1", "0,GPU-xyz!"}) {
    auto in = shared(0, 1, 1);
    in.cuda_visible_devices = bad;
    EXPECT_THROW(select_devices(in), UsageError) << bad;
  }
  EXPECT_NO_THROW(validate_cuda_visible_devices("0,1,7"));
  EXPECT_NO_THROW(validate_cuda_visible_devices("GPU-8f6d3f0e-1c2b-4a5d-9e7f-0123456789ab"));
  EXPECT_NO_THROW(validate_cuda_visible_devices("MIG-GPU-8f6d3f0e/1/0"));
  auto in = shared(0, 1, 1);
  in.slurm_localid = "first";
  try {
    select_devices(in);
    FAIL();
  } catch (const UsageError& e) {
    EXPECT_EQ(std::string(e.what()), "SLURM_LOCALID='first' is not a non-negative integer");
  }
  EXPECT_THROW(select_devices(shared(0, 1, 1, 0)), UsageError);
}

}  // namespace
}  // namespace commbench
