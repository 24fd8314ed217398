#include "inject/rank_identity.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace gpuperf::inject {
namespace {

// One field's variables, in order of precedence, each with the launcher it names.
struct Source {
  const char* variable;
  const char* launcher;
};

// The first variable that holds a non-negative integer; `launcher` names where it came from.
int32_t First(const std::function<const char*(const char*)>& getenv,
              std::initializer_list<Source> sources, const char** launcher = nullptr) {
  for (const Source& source : sources) {
    const char* text = getenv(source.variable);
    if (text == nullptr || *text == '\0') continue;
    char* end = nullptr;
    const long value = std::strtol(text, &end, 10);
    if (*end != '\0' || value < 0 || value > INT32_MAX) continue;
    if (launcher != nullptr) *launcher = source.launcher;
    return static_cast<int32_t>(value);
  }
  return -1;
}

std::string FirstText(const std::function<const char*(const char*)>& getenv,
                      std::initializer_list<const char*> variables) {
  for (const char* variable : variables) {
    const char* text = getenv(variable);
    if (text != nullptr && *text != '\0') return text;
  }
  return {};
}

}  // namespace

RankIdentity ReadRankIdentity(const std::function<const char*(const char*)>& getenv) {
  RankIdentity id;
  const char* launcher = nullptr;
  id.rank = First(getenv,
                  {{"RANK", "env"},
                   {"OMPI_COMM_WORLD_RANK", "openmpi"},
                   {"PMI_RANK", "pmi"},
                   {"PMIX_RANK", "pmi"},
                   {"SLURM_PROCID", "slurm"}},
                  &launcher);
  if (launcher != nullptr) id.launcher = launcher;
  const bool torchrun = getenv("TORCHELASTIC_RUN_ID") != nullptr;
  if (id.launcher == "env" && torchrun) id.launcher = "torchrun";
  id.local_rank = First(getenv, {{"LOCAL_RANK", ""},
                                 {"OMPI_COMM_WORLD_LOCAL_RANK", ""},
                                 {"MPI_LOCALRANKID", ""},
                                 {"SLURM_LOCALID", ""}});
  id.world_size = First(
      getenv,
      {{"WORLD_SIZE", ""}, {"OMPI_COMM_WORLD_SIZE", ""}, {"PMI_SIZE", ""}, {"SLURM_NTASKS", ""}});
  id.local_world_size = First(getenv, {{"LOCAL_WORLD_SIZE", ""},
                                       {"OMPI_COMM_WORLD_LOCAL_SIZE", ""},
                                       {"MPI_LOCALNRANKS", ""},
                                       {"SLURM_NTASKS_PER_NODE", ""}});
  id.node_rank = First(getenv, {{"GROUP_RANK", ""},
                                {"NODE_RANK", ""},
                                {"OMPI_COMM_WORLD_NODE_RANK", ""},
                                {"SLURM_NODEID", ""}});
  id.job_id = FirstText(
      getenv, {"TORCHELASTIC_RUN_ID", "SLURM_JOB_ID", "PMIX_NAMESPACE", "OMPI_MCA_orte_ess_jobid"});
  id.master = FirstText(getenv, {"MASTER_ADDR"});
  if (const std::string port = FirstText(getenv, {"MASTER_PORT"});
      !id.master.empty() && !port.empty()) {
    id.master += ":" + port;
  }
  id.visible_devices = FirstText(getenv, {"CUDA_VISIBLE_DEVICES"});
  return id;
}

std::string ReadBootId(const char* path) {
  FILE* file = std::fopen(path, "re");
  if (file == nullptr) return {};
  char line[128] = {};
  const bool ok = std::fgets(line, sizeof(line), file) != nullptr;
  std::fclose(file);
  if (!ok) return {};
  line[std::strcspn(line, "\r\n")] = '\0';
  return line;
}

}  // namespace gpuperf::inject
