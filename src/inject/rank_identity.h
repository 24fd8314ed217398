// Who this process is in a distributed job, read once at start from what its launcher
// put in the environment: torchrun (RANK, LOCAL_RANK, WORLD_SIZE, LOCAL_WORLD_SIZE,
// GROUP_RANK, MASTER_ADDR/PORT, TORCHELASTIC_RUN_ID), Open MPI (OMPI_COMM_WORLD_*), MPICH
// and other PMI launchers (PMI_RANK, PMI_SIZE, MPI_LOCALRANKID, MPI_LOCALNRANKS) and Slurm
// (SLURM_PROCID, SLURM_NTASKS, SLURM_LOCALID, SLURM_NODEID, SLURM_JOB_ID). The framework's
// own variables win: under `srun torchrun`, RANK is the rank PyTorch uses.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

namespace gpuperf::inject {

struct RankIdentity {
  int32_t rank = -1;  // -1: not set by any launcher
  int32_t local_rank = -1;
  int32_t world_size = -1;
  int32_t local_world_size = -1;
  int32_t node_rank = -1;
  std::string launcher;  // "torchrun", "openmpi", "pmi", "slurm", "env" (RANK alone)
  std::string job_id;
  std::string master;  // MASTER_ADDR[:MASTER_PORT]
  std::string visible_devices;
  std::string boot_id;
};

// `getenv` looks a variable up (nullptr: unset); tests pass their own.
RankIdentity ReadRankIdentity(const std::function<const char*(const char*)>& getenv);

// The kernel's boot id (one CLOCK_MONOTONIC per boot): the first line of `path`, or empty.
std::string ReadBootId(const char* path = "/proc/sys/kernel/random/boot_id");

}  // namespace gpuperf::inject
