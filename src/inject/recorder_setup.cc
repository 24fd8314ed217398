#include "inject/recorder_setup.h"

#include <sys/stat.h>
#include <unistd.h>

#include <climits>
#include <cstdlib>
#include <fstream>
#include <iterator>

#include "inject/rank_identity.h"
#include "inject/stack/stack_capture.h"
#include "inject/torch/autograd_link.h"

namespace gpuperf::inject {
namespace {

std::string ReadCommandLine() {
  std::ifstream in("/proc/self/cmdline", std::ios::binary);
  std::string raw((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  while (!raw.empty() && raw.back() == '\0') raw.pop_back();
  for (char& c : raw) {
    if (c == '\0') c = ' ';
  }
  return raw;
}

std::string ExecutableName() {
  char path[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", path, sizeof(path) - 1);
  if (n <= 0) return "process";
  std::string full(path, n);
  size_t slash = full.rfind('/');
  return slash == std::string::npos ? full : full.substr(slash + 1);
}

void MakeDirectories(const std::string& dir) {
  std::string partial;
  for (size_t i = 0; i <= dir.size(); ++i) {
    if (i == dir.size() || dir[i] == '/') {
      if (!partial.empty()) mkdir(partial.c_str(), 0755);
    }
    if (i < dir.size()) partial += dir[i];
  }
}

}  // namespace

ProcessRecord DescribeProcess(Recorder& r, std::string* command) {
  ProcessRecord process;
  process.pid = r.pid;
  process.parent_pid = static_cast<uint32_t>(getppid());
  const std::string line = ReadCommandLine();
  process.command = r.names.Intern(line);
  char host[256] = {};
  gethostname(host, sizeof(host) - 1);
  process.hostname = r.names.Intern(host);
  process.gpuperf_version = r.names.Intern(GPUPERF_VERSION);
  process.start_ns = r.start_ns;
  if (command != nullptr) *command = line;
  return process;
}

// A program that execs itself keeps its pid, so the new image must not truncate the old
// image's trace; an attach window must not replace an earlier window's.
std::string NewTracePath(const std::string& dir, uint32_t pid) {
  MakeDirectories(dir);
  const std::string base = dir + "/" + ExecutableName() + "." + std::to_string(pid);
  std::string path = base + ".gpt";
  for (int n = 2; access(path.c_str(), F_OK) == 0 && n < 100; ++n) {
    path = base + "-" + std::to_string(n) + ".gpt";
  }
  return path;
}

std::unique_ptr<RecordBatch> RankBatch(Recorder& r) {
  const RankIdentity id = ReadRankIdentity([](const char* name) { return std::getenv(name); });
  RankRecord rank;
  rank.pid = r.pid;
  rank.rank = id.rank;
  rank.local_rank = id.local_rank;
  rank.world_size = id.world_size;
  rank.local_world_size = id.local_world_size;
  rank.node_rank = id.node_rank;
  rank.launcher = r.names.Intern(id.launcher);
  rank.job_id = r.names.Intern(id.job_id);
  rank.master = r.names.Intern(id.master);
  rank.boot_id = r.names.Intern(ReadBootId());
  rank.visible_devices = r.names.Intern(id.visible_devices);
  auto batch = std::make_unique<RecordBatch>();
  batch->ranks.push_back(rank);
  return batch;
}

void InitStacksFor(const Config& config) {
  if (!config.stacks) return;
  StackCaptureOptions stacks;
  stacks.max_depth = config.max_stack_depth;
  stacks.unwind = config.unwind;
  stacks.verify = config.unwind_verify;
  stacks.python = config.python_stacks;
  stacks.cut_at_python = config.cut_native_at_python;
  stacks.memo = config.stack_memo;
  InitStackCapture(stacks);
  if (config.python_stacks) ProbeAutogradLink();
}

}  // namespace gpuperf::inject
