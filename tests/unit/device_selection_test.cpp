#include <gtest/gtest.h>

#include "commbench/backend/device_selection.hpp"
#include "commbench/core/error.hpp"

namespace commbench {
namespace {

DeviceSelectionInput node(int local_rank, int local_size, int visible, int g = 1) {
  DeviceSelectionInput in;
  in.local_rank = local_rank;
  in.local_size = local_size;
  in.visible_devices = visible;
  in.gpus_per_process = g;
  in.host = "gpu01";
  return in;
}

TEST(DeviceSelection, OneGpuPerLocalRank) {
  EXPECT_EQ(select_devices(node(0, 8, 8)).devices, std::vector<int>{0});
  EXPECT_EQ(select_devices(node(5, 8, 8)).devices, std::vector<int>{5});
  EXPECT_EQ(select_devices(node(3, 4, 8)).devices, std::vector<int>{3});
}

TEST(DeviceSelection, SeveralGpusPerProcess) {
  EXPECT_EQ(select_devices(node(0, 1, 8, 8)).devices, (std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7}));
  EXPECT_EQ(select_devices(node(1, 2, 8, 4)).devices, (std::vector<int>{4, 5, 6, 7}));
}

TEST(DeviceSelection, LauncherBindingWins) {
  // srun --gpus-per-task=1: every task sees exactly one GPU, whatever its local rank.
  auto in = node(3, 4, 1);
  in.cuda_visible_devices = "3";
  const auto selection = select_devices(in);
  EXPECT_EQ(selection.devices, std::vector<int>{0});
  EXPECT_NE(selection.reason.find("bound"), std::string::npos);
}

TEST(DeviceSelection, SlurmLocalIdChoosesTheSlot) {
  auto in = node(0, 4, 4);
  in.slurm_localid = "2";
  EXPECT_EQ(select_devices(in).devices, std::vector<int>{2});
}

TEST(DeviceSelection, NoDeviceIsABackendError) {
  try {
    select_devices(node(0, 1, 0));
    FAIL();
  } catch (const BackendError& e) {
    EXPECT_EQ(e.exit_code(), ExitCode::backend);
    EXPECT_EQ(std::string(e.what()), "no CUDA device on host gpu01; use --backend mpi for host memory");
  }
  auto hidden = node(0, 1, 0);
  hidden.cuda_visible_devices = "";
  EXPECT_THROW(select_devices(hidden), BackendError);
}

TEST(DeviceSelection, TooFewGpusNamesTheNumbers) {
  auto in = node(2, 4, 2);
  in.cuda_visible_devices = "0,1";
  try {
    select_devices(in);
    FAIL();
  } catch (const UsageError& e) {
    EXPECT_EQ(std::string(e.what()),
              "-g/--gpus-per-process: 4 process(es) x 1 GPU(s) on host gpu01 need 4 GPUs but 2 are visible "
              "(CUDA_VISIBLE_DEVICES=0,1); NCCL cannot put two ranks on one GPU");
  }
  EXPECT_THROW(select_devices(node(0, 2, 8, 5)), UsageError);
}

TEST(DeviceSelection, GarbageEnvironmentIsAUsageError) {
  for (const char* bad : {"zero", "0,,1", "1;2", "GPU-", "-1", "0,GPU-xyz!"}) {
    auto in = node(0, 1, 1);
    in.cuda_visible_devices = bad;
    EXPECT_THROW(select_devices(in), UsageError) << bad;
  }
  EXPECT_NO_THROW(validate_cuda_visible_devices("0,1,7"));
  EXPECT_NO_THROW(validate_cuda_visible_devices("GPU-8f6d3f0e-1c2b-4a5d-9e7f-0123456789ab"));
  EXPECT_NO_THROW(validate_cuda_visible_devices("MIG-GPU-8f6d3f0e/1/0"));
  auto in = node(0, 1, 1);
  in.slurm_localid = "first";
  try {
    select_devices(in);
    FAIL();
  } catch (const UsageError& e) {
    EXPECT_EQ(std::string(e.what()), "SLURM_LOCALID='first' is not a non-negative integer");
  }
  EXPECT_THROW(select_devices(node(0, 1, 1, 0)), UsageError);
}

}  // namespace
}  // namespace commbench
