#include "inject/cupti/cubin_saver.h"

#include <cupti_pcsampling.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <string>
#include <unordered_set>

#include "base/file_size_limit.h"
#include "inject/cupti/cupti_call.h"
#include "inject/recorder.h"
#include "inject/stats.h"

namespace gpuperf::inject {
namespace {

Recorder* g_recorder = nullptr;
std::mutex g_mutex;
std::unordered_set<uint64_t> g_seen;  // CRCs of this process's modules
uint64_t g_saved_bytes = 0;
std::vector<CubinRecord> g_new;

bool WriteWhole(int fd, const char* data, size_t size) {
  while (size > 0) {
    const ssize_t n = ::write(fd, data, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    data += n;
    size -= static_cast<size_t>(n);
  }
  return true;
}

// Writes the cubin unless a file of that name exists (another process of the run saved the
// same module). Written under a temporary name first: a file by the final name is whole.
bool SaveFile(const std::string& dir, const std::string& name, const char* data, size_t size) {
  const std::string path = dir + "/" + name;
  if (::access(path.c_str(), F_OK) == 0) return true;
  const std::string temporary = path + ".tmp." + std::to_string(::getpid());
  const int fd = ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return false;
  FileSizeSignalGuard no_signal;  // a module load on the program's thread: EFBIG, not SIGXFSZ
  const bool written = WriteWhole(fd, data, size);
  ::close(fd);
  if (!written || ::rename(temporary.c_str(), path.c_str()) != 0) {
    ::unlink(temporary.c_str());
    return false;
  }
  return true;
}

}  // namespace

void StartSavingCubins(Recorder& recorder) {
  g_recorder = &recorder;
  ::mkdir((recorder.config.output_dir + "/cubins").c_str(), 0755);
}

void SaveCubin(const CUpti_ModuleResourceData* module) {
  if (g_recorder == nullptr || module == nullptr || module->pCubin == nullptr ||
      module->cubinSize == 0) {
    return;
  }
  CUpti_GetCubinCrcParams crc{};
  crc.size = CUpti_GetCubinCrcParamsSize;
  crc.cubinSize = module->cubinSize;
  crc.cubin = module->pCubin;
  if (GP_CUPTI_CALL(cuptiGetCubinCrc(&crc)) != CUPTI_SUCCESS) return;
  std::lock_guard<std::mutex> lock(g_mutex);
  if (!g_seen.insert(crc.cubinCrc).second) return;
  if (g_saved_bytes + module->cubinSize > g_recorder->config.cubin_cap_bytes) {
    CountStat(StatId::cubins_not_saved);
    LogOnce("PC sampling: cubins past %" PRIu64 " MiB are not saved (GPUPERF_CUBIN_CAP_MB)",
            g_recorder->config.cubin_cap_bytes >> 20);
    return;
  }
  char name[40];
  std::snprintf(name, sizeof(name), "%016" PRIx64 ".cubin", crc.cubinCrc);
  const uint64_t begin = MonotonicNs();
  const bool saved =
      SaveFile(g_recorder->config.output_dir + "/cubins", name, module->pCubin, module->cubinSize);
  CountStat(StatId::profiler_ns, MonotonicNs() - begin);
  if (!saved) {
    CountStat(StatId::cubins_not_saved);
    LogOnce("PC sampling: cannot save cubins in %s/cubins: %s",
            g_recorder->config.output_dir.c_str(), std::strerror(errno));
    return;
  }
  g_saved_bytes += module->cubinSize;
  CountStat(StatId::cubins_saved);
  g_new.push_back(CubinRecord{g_recorder->pid, crc.cubinCrc, module->cubinSize,
                              g_recorder->names.Intern(std::string("cubins/") + name)});
}

void TakeSavedCubins(std::vector<CubinRecord>& out) {
  std::lock_guard<std::mutex> lock(g_mutex);
  out.insert(out.end(), g_new.begin(), g_new.end());
  g_new.clear();
}

}  // namespace gpuperf::inject
