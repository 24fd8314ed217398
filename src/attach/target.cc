#include "attach/target.h"

#include <dirent.h>
#include <elf.h>
#include <fcntl.h>
#include <pwd.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <optional>

namespace gpuperf::attach {
namespace {

constexpr uint64_t kCapSysPtrace = uint64_t{1} << 19;
constexpr uint32_t kRtldNow = 2;
constexpr uint32_t kRtldDlopen = 0x80000000;  // __RTLD_DLOPEN: what dlopen passes on

#if defined(__x86_64__)
constexpr uint16_t kOurMachine = EM_X86_64;
#elif defined(__aarch64__)
constexpr uint16_t kOurMachine = EM_AARCH64;
#else
constexpr uint16_t kOurMachine = EM_NONE;
#endif

std::string LinkTarget(const std::string& path) {
  char target[256];
  const ssize_t n = readlink(path.c_str(), target, sizeof(target));
  return n > 0 ? std::string(target, static_cast<size_t>(n)) : std::string();
}

std::string UserName(uid_t uid) {
  const passwd* entry = getpwuid(uid);
  return entry != nullptr ? std::string(entry->pw_name) : "uid " + std::to_string(uid);
}

std::string MachineName(uint16_t machine, bool wide) {
  switch (machine) {
    case EM_X86_64:
      return wide ? "an x86-64 program" : "an x32 program";
    case EM_386:
      return "a 32-bit x86 program";
    case EM_AARCH64:
      return "an aarch64 program";
    case EM_ARM:
      return "a 32-bit arm program";
    default:
      return "a program for ELF machine " + std::to_string(machine);
  }
}

Status Refuse(pid_t pid, const std::string& why) {
  return Error(StatusCode::kInternal,
               "cannot attach to process " + std::to_string(pid) + ": " + why);
}

// Why we may not trace `pid` although its owner is ours: Yama, a container, or the process.
std::string PtraceDenial(const TaskStatus& target, const TaskStatus& self) {
  const bool root = geteuid() == 0;
  const bool cap = (self.effective_caps & kCapSysPtrace) != 0;
  const int scope = YamaPtraceScope();
  if (root && !cap) {
    return "this container (or process) lacks CAP_SYS_PTRACE; run it with --cap-add=SYS_PTRACE "
           "(docker) or an equivalent securityContext capability";
  }
  if (scope == 3) {
    return "kernel.yama.ptrace_scope is 3: no process may be traced on this host until it "
           "reboots with a lower setting";
  }
  if (scope == 2 && !cap) {
    return "kernel.yama.ptrace_scope is 2: only root (CAP_SYS_PTRACE) may trace; run gpuperf "
           "attach as root";
  }
  if (scope == 1 && !cap) {
    return "kernel.yama.ptrace_scope is 1: a process may trace only its own children; run "
           "gpuperf attach as root, or `sudo sysctl kernel.yama.ptrace_scope=0`, or give gpuperf "
           "the capability: sudo setcap cap_sys_ptrace+ep $(command -v gpuperf)";
  }
  (void)target;
  return "the process may not be traced (it made itself non-dumpable, or changed its user)";
}

// A library defining `name` among the target's mappings: the entry's address.
struct Found {
  ElfImage image;
  uint64_t bias = 0;
};

std::optional<Found> LoadLibrary(pid_t pid, const std::vector<Mapping>& mappings,
                                 bool (*matches)(const std::string& name)) {
  std::vector<Mapping> same;
  std::string path;
  for (const Mapping& m : mappings) {
    if (m.path.empty() || m.path[0] != '/' || !matches(BaseName(m.path))) continue;
    if (path.empty()) path = m.path;
    if (m.path == path) same.push_back(m);
  }
  if (path.empty()) return std::nullopt;
  Result<ElfImage> image = ReadElfImage(TargetFile(pid, path));
  if (!image.ok()) return std::nullopt;
  std::optional<uint64_t> bias = LoadBias(*image, same);
  if (!bias) return std::nullopt;
  Found found;
  found.image = std::move(image).value();
  found.bias = *bias;
  return found;
}

bool IsLibc(const std::string& name) {
  return name.rfind("libc.so", 0) == 0 ||
         (name.rfind("libc-", 0) == 0 && name.find(".so") != std::string::npos);
}
bool IsLibdl(const std::string& name) {
  return name.rfind("libdl.so", 0) == 0 || name.rfind("libdl-", 0) == 0;
}

uint64_t Symbol(const Found& found, const char* name) {
  auto it = found.image.dynamic_symbols.find(name);
  return it == found.image.dynamic_symbols.end() ? 0 : found.bias + it->second.value;
}

// dlopen in libc (glibc 2.34 and later), else libdl's, else glibc's private
// __libc_dlopen_mode (older glibc without libdl loaded).
std::optional<DlopenEntry> FindDlopen(pid_t pid, const std::vector<Mapping>& mappings,
                                      const std::optional<Found>& libc) {
  if (libc && Symbol(*libc, "dlopen") != 0 && Symbol(*libc, "dlsym") != 0) {
    return DlopenEntry{Symbol(*libc, "dlopen"), Symbol(*libc, "dlsym"), Symbol(*libc, "dlerror"),
                       kRtldNow, "libc"};
  }
  if (std::optional<Found> libdl = LoadLibrary(pid, mappings, IsLibdl)) {
    if (Symbol(*libdl, "dlopen") != 0 && Symbol(*libdl, "dlsym") != 0) {
      return DlopenEntry{Symbol(*libdl, "dlopen"), Symbol(*libdl, "dlsym"),
                         Symbol(*libdl, "dlerror"), kRtldNow, "libdl"};
    }
  }
  if (libc && Symbol(*libc, "__libc_dlopen_mode") != 0 && Symbol(*libc, "__libc_dlsym") != 0) {
    return DlopenEntry{Symbol(*libc, "__libc_dlopen_mode"), Symbol(*libc, "__libc_dlsym"), 0,
                       kRtldNow | kRtldDlopen, "libc (private)"};
  }
  return std::nullopt;
}

}  // namespace

std::string ForeignProgram(uint16_t machine, bool wide) {
  if (machine == kOurMachine && wide && kOurMachine != EM_NONE) return "";
  const std::string ours = MachineName(kOurMachine, true);  // "an x86-64 program"
  return MachineName(machine, wide) + ": gpuperf attach works with " +
         ours.substr(ours.find(' ') + 1) + "s";
}

std::string TargetFile(pid_t pid, const std::string& path) {
  return "/proc/" + std::to_string(pid) + "/root" + path;
}

Result<Target> InspectTarget(pid_t pid) {
  Target target;
  target.pid = pid;
  if (pid <= 0)
    return Error(StatusCode::kNotFound, "no process " + std::to_string(pid) + " is running");
  GP_ASSIGN_OR_RETURN(target.status, ReadTaskStatus(pid));
  target.name = target.status.name;
  if (pid == getpid()) return Refuse(pid, "it is this gpuperf");
  if (target.status.state == 'Z' || target.status.state == 'X') {
    return Refuse(pid, "it has exited (" + target.name + " is a zombie)");
  }
  const uid_t self = getuid();
  const uid_t* uids = target.status.uid;
  if (uids[0] != self || uids[1] != self || uids[2] != self) {
    const uid_t owner = uids[0] != self ? uids[0] : (uids[1] != self ? uids[1] : uids[2]);
    // Root too attaches only to its own processes: the window writes its trace as the
    // process's user, into a directory gpuperf made as its own.
    return Refuse(
        pid, target.name + " belongs to " + UserName(owner) + ": run gpuperf attach as " +
                 UserName(owner) +
                 (geteuid() == 0 ? " (as root, gpuperf attaches to root's processes only)" : ""));
  }
  // Opening its memory asks the kernel what ptrace would (Yama included), touching nothing.
  const int mem = open(("/proc/" + std::to_string(pid) + "/mem").c_str(), O_RDONLY | O_CLOEXEC);
  if (mem < 0) {
    if (errno == ENOENT || errno == ESRCH) {
      return Error(StatusCode::kNotFound, "no process " + std::to_string(pid) + " is running");
    }
    Result<TaskStatus> me = ReadTaskStatus(getpid());
    return Refuse(pid, PtraceDenial(target.status, me.ok() ? *me : TaskStatus{}));
  }
  close(mem);
  // The library and the trace directory are paths the process opens: in its own files.
  const std::string ours = LinkTarget("/proc/self/ns/mnt");
  const std::string theirs = LinkTarget("/proc/" + std::to_string(pid) + "/ns/mnt");
  if (!ours.empty() && !theirs.empty() && ours != theirs) {
    return Refuse(pid, target.name +
                           " runs in another mount namespace (a container): run gpuperf "
                           "attach inside it, where the process's files are");
  }
  for (pid_t tid : ListThreads(pid)) {
    Result<TaskStatus> thread = ReadTaskStatus(pid, tid);
    if (!thread.ok() || thread->tracer == 0) continue;
    Result<TaskStatus> tracer = ReadTaskStatus(thread->tracer);
    return Refuse(pid, "it is being traced by process " + std::to_string(thread->tracer) + " (" +
                           (tracer.ok() ? tracer->name : std::string("?")) +
                           "): a debugger, strace or another gpuperf attach; detach that first");
  }
  bool wide = false;
  const std::optional<uint16_t> exe_machine =
      ElfMachine("/proc/" + std::to_string(pid) + "/exe", &wide);
  if (exe_machine) {
    const std::string foreign = ForeignProgram(*exe_machine, wide);
    if (!foreign.empty()) return Refuse(pid, target.name + " is " + foreign);
  }
  GP_ASSIGN_OR_RETURN(target.mappings, ReadMappings(pid));
  const std::optional<std::string> injected = EnvironmentValue(pid, "CUDA_INJECTION64_PATH");
  if (injected && !injected->empty()) {
    if (BaseName(*injected).rfind("libgpuperf_inject", 0) == 0 ||
        EnvironmentValue(pid, "GPUPERF_OUTPUT_DIR")) {
      const std::optional<std::string> dir = EnvironmentValue(pid, "GPUPERF_OUTPUT_DIR");
      return Refuse(pid, target.name + " is already recorded by gpuperf record" +
                             (dir ? " (into " + *dir + ")" : std::string()) +
                             ": its trace has it all; with record --flight, `gpuperf dump-now " +
                             std::to_string(pid) + "` writes its last window now");
    }
    return Refuse(pid, "another CUDA tool is injected in " + target.name +
                           " (CUDA_INJECTION64_PATH=" + *injected +
                           "): one profiler at a time, end that one first");
  }
  bool libcuda = false;
  for (const Mapping& m : target.mappings) {
    const std::string name = BaseName(m.path);
    if (name.rfind("libcuda.so", 0) == 0) libcuda = true;
    if (name.rfind("libgpuperf_inject", 0) == 0 && m.path[0] == '/') target.loaded_library = m.path;
    if (name.rfind("libToolsInjection", 0) == 0) {
      return Refuse(pid, "Nsight Systems is injected in " + target.name + " (" + name +
                             "): one profiler at a time, end that one first");
    }
  }
  if (!libcuda) {
    return Refuse(pid, target.name +
                           " has not loaded libcuda (it has not started CUDA): there is "
                           "nothing to record yet");
  }
  std::optional<Found> libc = LoadLibrary(pid, target.mappings, IsLibc);
  std::optional<DlopenEntry> dlopen = FindDlopen(pid, target.mappings, libc);
  if (!dlopen) {
    return Refuse(pid,
                  "no dlopen is reachable in " + target.name +
                      " (a static program, or no glibc): gpuperf cannot load its library there");
  }
  target.dlopen = *dlopen;
  if (libc) {
    target.libc = std::move(libc->image);
    target.libc_bias = libc->bias;
    target.has_libc = true;
  }
  return target;
}

std::vector<pid_t> CudaProcessesOf(uid_t uid, pid_t except) {
  std::vector<pid_t> found;
  DIR* proc = opendir("/proc");
  if (proc == nullptr) return found;
  while (const dirent* entry = readdir(proc)) {
    const long pid = std::strtol(entry->d_name, nullptr, 10);
    if (pid <= 0 || pid == except) continue;
    Result<TaskStatus> status = ReadTaskStatus(static_cast<pid_t>(pid));
    if (!status.ok() || status->uid[0] != uid || status->state == 'Z') continue;
    Result<std::vector<Mapping>> mappings = ReadMappings(static_cast<pid_t>(pid));
    if (!mappings.ok()) continue;
    for (const Mapping& m : *mappings) {
      if (BaseName(m.path).rfind("libcuda.so", 0) == 0) {
        found.push_back(static_cast<pid_t>(pid));
        break;
      }
    }
  }
  closedir(proc);
  std::sort(found.begin(), found.end());
  return found;
}

}  // namespace gpuperf::attach
