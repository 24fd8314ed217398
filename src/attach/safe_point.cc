#include "attach/safe_point.h"

#include <sys/syscall.h>

#include <algorithm>
#include <iterator>
#include <string_view>

namespace gpuperf::attach {
namespace {

constexpr uint64_t kFutexCommandMask = 0x7f;  // without FUTEX_PRIVATE_FLAG, FUTEX_CLOCK_REALTIME
constexpr uint64_t kFutexWait = 0;
constexpr uint64_t kFutexWaitBitset = 9;

bool StartsWith(std::string_view text, std::string_view prefix) {
  return text.substr(0, prefix.size()) == prefix;
}

// Libraries a borrowed thread must not be in: the loader (its lock), CUDA's (their locks:
// the library's loading starts CUPTI's own constructors), gpuperf's.
std::string DangerousLibrary(const std::string& name) {
  if (StartsWith(name, "ld-linux") ||
      (StartsWith(name, "ld-") && name.find(".so") != std::string::npos)) {
    return "the dynamic loader";
  }
  for (std::string_view prefix :
       {"libcuda.so", "libcudart", "libcupti", "libnvidia-", "libgpuperf_inject"}) {
    if (StartsWith(name, prefix)) return name;
  }
  return "";
}

// libc's functions that keep the allocator's, the loader's or thread creation's locks while
// they run (or run other code with them held: dl_iterate_phdr's callback, fork's handlers).
constexpr std::string_view kLockingLibcFunctions[] = {"malloc",
                                                      "free",
                                                      "calloc",
                                                      "realloc",
                                                      "reallocarray",
                                                      "memalign",
                                                      "aligned_alloc",
                                                      "posix_memalign",
                                                      "valloc",
                                                      "pvalloc",
                                                      "malloc_trim",
                                                      "malloc_usable_size",
                                                      "mallinfo",
                                                      "mallinfo2",
                                                      "mallopt",
                                                      "malloc_stats",
                                                      "malloc_info",
                                                      "cfree",
                                                      "__libc_malloc",
                                                      "__libc_free",
                                                      "__libc_calloc",
                                                      "__libc_realloc",
                                                      "__libc_memalign",
                                                      "dlopen",
                                                      "dlmopen",
                                                      "dlclose",
                                                      "dlsym",
                                                      "dlvsym",
                                                      "dladdr",
                                                      "dladdr1",
                                                      "dlinfo",
                                                      "dlerror",
                                                      "dl_iterate_phdr",
                                                      "__libc_dlopen_mode",
                                                      "__libc_dlsym",
                                                      "__libc_dlclose",
                                                      "pthread_create",
                                                      "pthread_exit",
                                                      "fork",
                                                      "vfork",
                                                      "_Fork",
                                                      "__libc_fork",
                                                      "system",
                                                      "posix_spawn",
                                                      "posix_spawnp",
                                                      "exit",
                                                      "_exit",
                                                      "quick_exit",
                                                      "__cxa_finalize",
                                                      "__cxa_thread_atexit_impl",
                                                      "setlocale"};

}  // namespace

std::string UnborrowableSyscall(int64_t nr, const uint64_t (&args)[6],
                                const std::string& fd_target) {
  switch (nr) {
    case SYS_futex: {
      const uint64_t command = args[1] & kFutexCommandMask;
      if (command == kFutexWait || command == kFutexWaitBitset) return "";
      return "a futex operation other than a wait";
    }
#ifdef SYS_futex_waitv
    case SYS_futex_waitv:
#endif
    case SYS_nanosleep:
    case SYS_clock_nanosleep:
    case SYS_poll:
    case SYS_select:
    case SYS_pause:
    case SYS_wait4:
    case SYS_waitid:
      return "";
    case SYS_read:
    case SYS_readv:
      if (StartsWith(fd_target, "pipe:") || fd_target == "anon_inode:[eventfd]" ||
          StartsWith(fd_target, "/dev/pts/") || StartsWith(fd_target, "/dev/tty")) {
        return "";
      }
      return "a read of " + (fd_target.empty() ? std::string("a descriptor") : fd_target);
    case SYS_epoll_wait:
#ifdef SYS_epoll_pwait2
    case SYS_epoll_pwait2:
#endif
    case SYS_epoll_pwait:
    case SYS_rt_sigtimedwait:
    case SYS_semop:
    case SYS_semtimedop:
    case SYS_accept:
    case SYS_accept4:
    case SYS_recvfrom:
    case SYS_recvmsg:
    case SYS_recvmmsg:
    case SYS_connect:
      return "a call that would return EINTR";
    case SYS_ppoll:
    case SYS_pselect6:
    case SYS_rt_sigsuspend:
      return "a call that changes the signal mask while it waits";
    default:
      return "system call " + std::to_string(nr);
  }
}

std::vector<CodeRange> DangerousCode(const std::vector<Mapping>& mappings, const ElfImage* libc,
                                     uint64_t libc_bias) {
  std::vector<CodeRange> ranges;
  for (const Mapping& m : mappings) {
    if (!m.executable || m.path.empty() || m.path[0] != '/') continue;
    const std::string what = DangerousLibrary(BaseName(m.path));
    if (!what.empty()) ranges.push_back({m.start, m.end, what});
  }
  if (libc != nullptr) {
    for (std::string_view name : kLockingLibcFunctions) {
      auto it = libc->dynamic_symbols.find(std::string(name));
      if (it == libc->dynamic_symbols.end() || it->second.size == 0) continue;
      const uint64_t begin = libc_bias + it->second.value;
      ranges.push_back({begin, begin + it->second.size, std::string(name)});
    }
  }
  return ranges;
}

std::string DangerOnStack(std::span<const uint64_t> stack, const std::vector<CodeRange>& ranges) {
  // The ranges do not overlap (whole libraries, and functions of libc, which is not one of
  // them; aliases such as malloc and __libc_malloc are the same range): a word can only lie
  // in the last range that begins below it.
  std::vector<const CodeRange*> sorted;
  for (const CodeRange& range : ranges) sorted.push_back(&range);
  std::sort(sorted.begin(), sorted.end(),
            [](const CodeRange* a, const CodeRange* b) { return a->begin < b->begin; });
  for (uint64_t word : stack) {
    auto after = std::upper_bound(sorted.begin(), sorted.end(), word,
                                  [](uint64_t w, const CodeRange* r) { return w <= r->begin; });
    if (after == sorted.begin()) continue;
    const CodeRange& range = **std::prev(after);
    // A return address points just past a call: into the function, never at its start.
    if (word <= range.end) return range.what;
  }
  return "";
}

}  // namespace gpuperf::attach
