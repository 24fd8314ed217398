#include "attach/injector.h"

#include <elf.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <optional>
#include <thread>
#include <vector>

#include "attach/attach_steps.h"
#include "attach/remote_stub.h"
#include "attach/safe_point.h"
#include "gpuperf/attach_protocol.h"

namespace gpuperf::attach {
namespace {

constexpr uint64_t kRedZone = 128;
// What the stub and the calls it makes may use below the thread's stack pointer: the
// extended state area, dlopen (a few KiB), the library's constructors and the entry point.
constexpr uint64_t kStackRoom = 256 * 1024;
constexpr uint64_t kMaxStackScan = 16ull << 20;
constexpr int kMarkerSyscall = SYS_getpid;

Status Exited(pid_t pid) {
  return Error(StatusCode::kNotFound,
               "process " + std::to_string(pid) + " exited during the attach");
}

bool ProcessAlive(pid_t pid) {
  return kill(pid, 0) == 0 || errno != ESRCH;
}

// The attach lock: no two gpuperf attach write into one process at once (they would share
// the padding the stub goes into). Held as long as the descriptor is open.
class AttachLock {
 public:
  ~AttachLock() {
    if (fd_ >= 0) close(fd_);
  }
  Status Take(pid_t pid) {
    fd_ = open(("/proc/" + std::to_string(pid) + "/mem").c_str(), O_RDONLY | O_CLOEXEC);
    if (fd_ < 0) return ProcessAlive(pid) ? Error(StatusCode::kInternal, std::strerror(errno)) : Exited(pid);
    if (flock(fd_, LOCK_EX | LOCK_NB) != 0) {
      return Error(StatusCode::kInternal, "another gpuperf attach is loading its library into process " +
                                              std::to_string(pid) + " right now");
    }
    return Status::Ok();
  }

 private:
  int fd_ = -1;
};

// One stop of a traced thread, as waitpid reported it.
struct Stop {
  enum Kind { kGone, kInterrupt, kGroupStop, kSignal, kSyscall, kOther } kind = kOther;
  int signal = 0;
};

Stop WaitStop(pid_t tid) {
  int status = 0;
  pid_t got;
  do {
    got = waitpid(tid, &status, __WALL);
  } while (got < 0 && errno == EINTR);
  if (got < 0 || WIFEXITED(status) || WIFSIGNALED(status)) return {Stop::kGone, 0};
  if (!WIFSTOPPED(status)) return {Stop::kOther, 0};
  const int signal = WSTOPSIG(status);
  const int event = status >> 16;
  if (signal == (SIGTRAP | 0x80)) return {Stop::kSyscall, 0};
  if (event == PTRACE_EVENT_STOP) {
    return signal == SIGTRAP ? Stop{Stop::kInterrupt, 0} : Stop{Stop::kGroupStop, signal};
  }
  if (event == 0) return {Stop::kSignal, signal};
  return {Stop::kOther, 0};
}

// Lets a stopped thread go, handing it `signal` (one it was about to take) if any.
void Release(pid_t tid, int signal = 0) {
  ptrace(PTRACE_DETACH, tid, nullptr, reinterpret_cast<void*>(static_cast<intptr_t>(signal)));
}

// Writes `bytes` at `address` through ptrace (which may write read-only code pages, as a
// debugger's breakpoints do; the page becomes the process's own copy).
bool Poke(pid_t tid, uint64_t address, const std::vector<uint8_t>& bytes) {
  for (size_t at = 0; at < bytes.size(); at += 8) {
    uint64_t word = 0;
    const size_t n = std::min<size_t>(8, bytes.size() - at);
    if (n < 8) {
      errno = 0;
      const long old = ptrace(PTRACE_PEEKDATA, tid, reinterpret_cast<void*>(address + at), nullptr);
      if (errno != 0) return false;
      word = static_cast<uint64_t>(old);
    }
    std::memcpy(&word, bytes.data() + at, n);
    if (ptrace(PTRACE_POKEDATA, tid, reinterpret_cast<void*>(address + at),
               reinterpret_cast<void*>(word)) != 0) {
      return false;
    }
  }
  return true;
}

// Where the stub goes: unused padding at the end of an executable mapping of a library (or
// the program), big enough for it. The largest, so later attaches find room too.
std::optional<uint64_t> StubPlace(const Target& target, size_t bytes) {
  uint64_t best = 0, best_room = 0;
  for (const Mapping& m : target.mappings) {
    if (!m.executable || !m.is_private || m.path.empty() || m.path[0] != '/') continue;
    Result<ElfImage> image = ReadElfImage(TargetFile(target.pid, m.path), /*symbols=*/false);
    if (!image.ok()) continue;
    std::vector<Mapping> same;
    for (const Mapping& other : target.mappings) {
      if (other.path == m.path) same.push_back(other);
    }
    const std::optional<uint64_t> bias = LoadBias(*image, same);
    if (!bias) continue;
    const Padding padding = ExecutablePadding(*image, *bias, m);
    if (padding.end - padding.begin > best_room) {
      best_room = padding.end - padding.begin;
      best = padding.begin;
    }
  }
  if (best_room < bytes) return std::nullopt;
  return best;
}

// Why thread `tid` may not lend itself now (empty: it may), from what /proc shows.
std::string JudgeFromOutside(pid_t pid, pid_t tid, SyscallState* state) {
  Result<TaskStatus> status = ReadTaskStatus(pid, tid);
  if (!status.ok()) return "gone";
  if (status->state != 'S') return "not waiting";
  std::optional<SyscallState> now = ReadSyscallState(pid, tid);
  if (!now || now->running) return "running";
  if (!now->in_syscall) return "not in a system call";
  const bool reads = now->nr == SYS_read || now->nr == SYS_readv;
  const std::string reason =
      UnborrowableSyscall(now->nr, now->args, reads ? DescriptorTarget(pid, now->args[0]) : "");
  if (!reason.empty()) return "waiting in " + reason;
  *state = *now;
  return "";
}

// Why the stopped thread with `regs` may not be used (empty: it may).
std::string JudgeStopped(const Target& target, const SyscallState& seen,
                         const user_regs_struct& regs, const std::vector<CodeRange>& danger) {
  if (static_cast<int64_t>(regs.orig_rax) != seen.nr || regs.rsp != seen.sp || regs.rip != seen.pc) {
    return "moved";
  }
  const Mapping* stack = MappingAt(target.mappings, regs.rsp);
  if (stack == nullptr) return "no stack mapping";
  // A thread's own stack mapping must leave room below; the main thread's [stack] grows.
  if (stack->path != "[stack]" && regs.rsp - stack->start < kStackRoom + kRedZone) {
    return "too little stack";
  }
  const uint64_t scan = std::min<uint64_t>(stack->end - regs.rsp, kMaxStackScan) & ~uint64_t{7};
  std::vector<uint64_t> words(scan / 8);
  if (!ReadProcessMemory(target.pid, regs.rsp, words.data(), scan)) return "unreadable stack";
  const std::string inside = DangerOnStack(words, danger);
  return inside.empty() ? "" : "inside " + inside;
}

struct Borrowed {
  pid_t tid = 0;
  user_regs_struct regs{};
  uint64_t signal_mask = 0;
};

// Seizes and stops thread `tid` if it is still where /proc showed it; nothing otherwise (the
// thread released as it was, `why` saying why).
std::optional<Borrowed> Borrow(const Target& target, pid_t tid, const SyscallState& seen,
                               const std::vector<CodeRange>& danger, std::string* why,
                               Status* fatal) {
  if (ptrace(PTRACE_SEIZE, tid, nullptr, reinterpret_cast<void*>(PTRACE_O_TRACESYSGOOD)) != 0) {
    if (errno == EPERM) {
      *fatal = Error(StatusCode::kInternal, "the kernel refused to trace thread " +
                                                std::to_string(tid) + ": " + std::strerror(errno));
    }
    *why = "gone";
    return std::nullopt;
  }
  ReachStep(AttachStep::kSeized);
  if (ptrace(PTRACE_INTERRUPT, tid, nullptr, nullptr) != 0) {
    *why = "gone";
    return std::nullopt;
  }
  const Stop stop = WaitStop(tid);
  if (stop.kind == Stop::kGone) {
    *why = "gone";
    return std::nullopt;
  }
  if (stop.kind != Stop::kInterrupt) {
    // It was about to take a signal, or the process stops for job control: it goes on with
    // that, untouched.
    Release(tid, stop.kind == Stop::kSignal ? stop.signal : 0);
    *why = stop.kind == Stop::kGroupStop ? "stopped by a signal" : "taking a signal";
    return std::nullopt;
  }
  Borrowed thread;
  thread.tid = tid;
  if (ptrace(PTRACE_GETREGS, tid, nullptr, &thread.regs) != 0 ||
      ptrace(PTRACE_GETSIGMASK, tid, reinterpret_cast<void*>(sizeof(uint64_t)), &thread.signal_mask) != 0) {
    Release(tid);
    *why = "unreadable registers";
    return std::nullopt;
  }
  *why = JudgeStopped(target, seen, thread.regs, danger);
  if (!why->empty()) {
    Release(tid);
    return std::nullopt;
  }
  ReachStep(AttachStep::kStopped);
  return thread;
}

// A thread that may be borrowed, waiting up to `timeout_ms` for one. The reasons the others
// were passed over make the error.
Result<Borrowed> FindThread(const Target& target, uint64_t timeout_ms) {
  const std::vector<CodeRange> danger =
      DangerousCode(target.mappings, target.has_libc ? &target.libc : nullptr, target.libc_bias);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  std::vector<std::string> reasons;
  for (;;) {
    reasons.clear();
    for (pid_t tid : ListThreads(target.pid)) {
      SyscallState seen;
      std::string why = JudgeFromOutside(target.pid, tid, &seen);
      if (why.empty()) {
        Status fatal;
        std::optional<Borrowed> thread = Borrow(target, tid, seen, danger, &why, &fatal);
        if (!fatal.ok()) return fatal;
        if (thread) return *thread;
      }
      reasons.push_back(std::to_string(tid) + " " + why);
    }
    if (!ProcessAlive(target.pid)) return Exited(target.pid);
    if (std::chrono::steady_clock::now() >= deadline) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  std::string list;
  for (size_t i = 0; i < reasons.size() && i < 6; ++i) list += (i ? "; " : "") + reasons[i];
  if (reasons.size() > 6) list += "; ...";
  return Error(StatusCode::kInternal,
               "no thread of process " + std::to_string(target.pid) + " reached a safe point in " +
                   std::to_string(timeout_ms / 1000) + " s (each was running, or inside the loader, "
                   "the allocator or CUDA: " + list + "); try again");
}

std::string ReadText(pid_t pid, uint64_t address) {
  std::string text;
  char chunk[64];
  while (address != 0 && text.size() < 1024 && ReadProcessMemory(pid, address, chunk, sizeof(chunk))) {
    const void* end = std::memchr(chunk, '\0', sizeof(chunk));
    text.append(chunk, end ? static_cast<const char*>(end) - chunk : sizeof(chunk));
    if (end != nullptr) break;
    address += sizeof(chunk);
  }
  return text;
}

// Runs the stub on the borrowed thread up to its marker and reads the results there. The
// thread is let go in every case: after the marker, or when it fails (then the stub finishes
// by itself, or the process is gone).
Result<InjectOutcome> RunStub(const Target& target, Borrowed& thread, uint64_t place,
                              const Stub& stub, uint64_t timeout_ms) {
  const pid_t tid = thread.tid;
  user_regs_struct call = thread.regs;
  call.rip = place + stub.entry_offset;
  call.rsp = (thread.regs.rsp - kRedZone - 64) & ~uint64_t{15};
  call.orig_rax = static_cast<uint64_t>(-1);  // no restart for the kernel to make
  if (ptrace(PTRACE_SETREGS, tid, nullptr, &call) != 0) {
    Release(tid);
    return ProcessAlive(target.pid) ? Error(StatusCode::kInternal, "cannot set the thread's registers")
                                    : Exited(target.pid);
  }
  ReachStep(AttachStep::kRedirected);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  int deliver = 0;
  bool resumed = false, in_call = false;
  for (;;) {
    if (ptrace(PTRACE_SYSCALL, tid, nullptr, reinterpret_cast<void*>(static_cast<intptr_t>(deliver))) != 0) {
      return Exited(target.pid);
    }
    if (!resumed) {
      resumed = true;
      ReachStep(AttachStep::kResumed);
    }
    deliver = 0;
    const Stop stop = WaitStop(tid);
    if (stop.kind == Stop::kGone) return Exited(target.pid);
    if (stop.kind == Stop::kSignal) {
      deliver = stop.signal;  // only a fault can come: every other signal is blocked here
      continue;
    }
    if (stop.kind == Stop::kGroupStop) {
      // The process was stopped (SIGSTOP): it stays so until continued.
      ptrace(PTRACE_LISTEN, tid, nullptr, nullptr);
      const Stop next = WaitStop(tid);
      if (next.kind == Stop::kGone) return Exited(target.pid);
      continue;
    }
    if (stop.kind != Stop::kSyscall) continue;
    user_regs_struct now;
    if (ptrace(PTRACE_GETREGS, tid, nullptr, &now) != 0) return Exited(target.pid);
    if (now.rip == place + stub.marker_offset && static_cast<int64_t>(now.orig_rax) == kMarkerSyscall) {
      ReachStep(AttachStep::kMarker);
      InjectOutcome outcome;
      outcome.thread = tid;
      outcome.start_result = static_cast<int>(static_cast<int64_t>(now.rsi));
      if (now.rdi == 0) {
        outcome.start_result = kNoLibrary;
        outcome.load_error = ReadText(target.pid, now.rdx);
      }
      Release(tid);
      ReachStep(AttachStep::kReleased);
      return outcome;
    }
    if (!in_call) {
      in_call = true;
      ReachStep(AttachStep::kInCall);
    }
    if (std::chrono::steady_clock::now() >= deadline) {
      // Whatever keeps it, the stub still puts the thread back once the call returns.
      Release(tid);
      return Error(StatusCode::kInternal, "loading the library in process " +
                                              std::to_string(target.pid) + " took over " +
                                              std::to_string(timeout_ms / 1000) + " s");
    }
  }
}

}  // namespace

Result<InjectOutcome> LoadAndStart(const Target& target, const InjectOptions& options) {
  SetStepTarget(target.pid);
  ReachStep(AttachStep::kChecked);
  StubInputs inputs;
  inputs.dlopen = target.dlopen.dlopen;
  inputs.dlsym = target.dlopen.dlsym;
  inputs.dlerror = target.dlopen.dlerror;
  inputs.dlopen_mode = target.dlopen.mode;
  inputs.library = options.library;
  inputs.entry = kAttachEntryPoint;
  inputs.settings = options.settings;
  inputs.xsave_bytes = XsaveAreaBytes();
  // Its size does not depend on the registers: where it can go is known before any thread
  // is stopped.
  GP_ASSIGN_OR_RETURN(Stub sized, BuildStub(inputs));
  const std::optional<uint64_t> place = StubPlace(target, sized.bytes.size());
  if (!place) {
    return Error(StatusCode::kInternal, "no library of process " + std::to_string(target.pid) +
                                            " has " + std::to_string(sized.bytes.size()) +
                                            " unused bytes of code for gpuperf's loader");
  }
  AttachLock lock;
  GP_RETURN_IF_ERROR(lock.Take(target.pid));
  ReachStep(AttachStep::kLocked);
  GP_ASSIGN_OR_RETURN(Borrowed thread, FindThread(target, options.safe_point_timeout_ms));
  inputs.resume = ContinuationOf(thread.regs);
  inputs.signal_mask = thread.signal_mask;
  Result<Stub> stub = BuildStub(inputs);
  if (!stub.ok() || !Poke(thread.tid, *place, stub->bytes)) {
    Release(thread.tid);
    if (!ProcessAlive(target.pid)) return Exited(target.pid);
    return stub.ok() ? Error(StatusCode::kInternal, "cannot write into process " +
                                                        std::to_string(target.pid) + ": " +
                                                        std::strerror(errno))
                     : stub.status();
  }
  ReachStep(AttachStep::kWritten);
  return RunStub(target, thread, *place, *stub, options.call_timeout_ms);
}

}  // namespace gpuperf::attach
