// Rank identity from the environments torchrun, Open MPI, PMI launchers and Slurm set.
#include "inject/rank_identity.h"

#include <gtest/gtest.h>

#include <map>
#include <string>

#include "support/temp_dir.h"

namespace gpuperf::inject {
namespace {

RankIdentity Read(const std::map<std::string, std::string>& env) {
  return ReadRankIdentity([&env](const char* name) -> const char* {
    auto it = env.find(name);
    return it == env.end() ? nullptr : it->second.c_str();
  });
}

TEST(RankIdentity, TorchrunWorker) {
  RankIdentity id = Read({{"RANK", "3"},
                          {"LOCAL_RANK", "1"},
                          {"WORLD_SIZE", "4"},
                          {"LOCAL_WORLD_SIZE", "2"},
                          {"GROUP_RANK", "1"},
                          {"MASTER_ADDR", "10.0.0.1"},
                          {"MASTER_PORT", "29500"},
                          {"TORCHELASTIC_RUN_ID", "job7"},
                          {"CUDA_VISIBLE_DEVICES", "0,1"}});
  EXPECT_EQ(id.rank, 3);
  EXPECT_EQ(id.local_rank, 1);
  EXPECT_EQ(id.world_size, 4);
  EXPECT_EQ(id.local_world_size, 2);
  EXPECT_EQ(id.node_rank, 1);
  EXPECT_EQ(id.launcher, "torchrun");
  EXPECT_EQ(id.job_id, "job7");
  EXPECT_EQ(id.master, "10.0.0.1:29500");
  EXPECT_EQ(id.visible_devices, "0,1");
}

TEST(RankIdentity, FrameworkRankWinsOverTheSlurmTask) {
  // srun torchrun ...: Slurm numbers the torchrun agents, RANK the workers.
  RankIdentity id = Read({{"RANK", "5"},
                          {"SLURM_PROCID", "1"},
                          {"SLURM_JOB_ID", "991"},
                          {"SLURM_NODEID", "1"},
                          {"WORLD_SIZE", "8"},
                          {"SLURM_NTASKS", "2"}});
  EXPECT_EQ(id.rank, 5);
  EXPECT_EQ(id.world_size, 8);
  EXPECT_EQ(id.launcher, "env");
  EXPECT_EQ(id.node_rank, 1);
  EXPECT_EQ(id.job_id, "991");
}

TEST(RankIdentity, OpenMpiPmiAndSlurmAlone) {
  RankIdentity ompi = Read({{"OMPI_COMM_WORLD_RANK", "2"},
                            {"OMPI_COMM_WORLD_SIZE", "4"},
                            {"OMPI_COMM_WORLD_LOCAL_RANK", "0"},
                            {"OMPI_COMM_WORLD_LOCAL_SIZE", "2"},
                            {"OMPI_COMM_WORLD_NODE_RANK", "1"}});
  EXPECT_EQ(ompi.rank, 2);
  EXPECT_EQ(ompi.world_size, 4);
  EXPECT_EQ(ompi.local_rank, 0);
  EXPECT_EQ(ompi.local_world_size, 2);
  EXPECT_EQ(ompi.node_rank, 1);
  EXPECT_EQ(ompi.launcher, "openmpi");

  RankIdentity pmi = Read({{"PMI_RANK", "1"}, {"PMI_SIZE", "2"}, {"MPI_LOCALRANKID", "1"}});
  EXPECT_EQ(pmi.rank, 1);
  EXPECT_EQ(pmi.world_size, 2);
  EXPECT_EQ(pmi.local_rank, 1);
  EXPECT_EQ(pmi.launcher, "pmi");

  RankIdentity slurm = Read({{"SLURM_PROCID", "7"},
                             {"SLURM_NTASKS", "16"},
                             {"SLURM_LOCALID", "3"},
                             {"SLURM_JOB_ID", "12"}});
  EXPECT_EQ(slurm.rank, 7);
  EXPECT_EQ(slurm.world_size, 16);
  EXPECT_EQ(slurm.local_rank, 3);
  EXPECT_EQ(slurm.launcher, "slurm");
  EXPECT_EQ(slurm.job_id, "12");
}

TEST(RankIdentity, NoLauncherMeansNoRankAndBadValuesAreSkipped) {
  RankIdentity none = Read({{"HOME", "/root"}});
  EXPECT_EQ(none.rank, -1);
  EXPECT_EQ(none.world_size, -1);
  EXPECT_TRUE(none.launcher.empty());
  // A value that is not a rank falls through to the next launcher's.
  RankIdentity bad = Read({{"RANK", "x1"}, {"SLURM_PROCID", "4"}, {"WORLD_SIZE", "-2"}});
  EXPECT_EQ(bad.rank, 4);
  EXPECT_EQ(bad.launcher, "slurm");
  EXPECT_EQ(bad.world_size, -1);
}

TEST(RankIdentity, BootIdIsTheFirstLine) {
  testing::TempDir dir;
  const std::string path = dir.File("boot_id");
  testing::WriteStringToFile(path, "0a1b2c3d-aaaa-bbbb-cccc-0123456789ab\n");
  EXPECT_EQ(ReadBootId(path.c_str()), "0a1b2c3d-aaaa-bbbb-cccc-0123456789ab");
  EXPECT_EQ(ReadBootId((path + ".missing").c_str()), "");
  EXPECT_FALSE(ReadBootId().empty());  // this machine's
}

}  // namespace
}  // namespace gpuperf::inject
