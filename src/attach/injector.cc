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
#include <map>
#include <optional>
#include <thread>
#include <vector>

#include "attach/attach_steps.h"
#include "attach/remote_stub.h"
#include "attach/safe_point.h"
#include "attach/thread_frames.h"
#include "gpuperf/attach_protocol.h"

namespace gpuperf::attach {

#if defined(__x86_64__)

namespace {

// What the stub and the calls it makes may use below the thread's stack pointer: the
// extended state area, dlopen (a few KiB), the library's constructors and the entry point.
constexpr uint64_t kStackRoom = 256 * 1024;
constexpr uint64_t kMaxStackScan = 16ull << 20;
constexpr int kMarkerSyscall = SYS_getpid;
// How long only threads waiting in a system call are looked for, before one running in user
// space may be stopped where it is (FindThread).
constexpr auto kRunningThreadsAfter = std::chrono::seconds(1);
constexpr auto kPollGap = std::chrono::milliseconds(10);
// A running thread is held this long at a time (CatchRunning) before the /proc scan looks
// for a waiting thread again, with this gap between two looks at it.
constexpr auto kHoldRunning = std::chrono::milliseconds(500);
constexpr auto kLookGap = std::chrono::microseconds(50);

Status Exited(pid_t pid) {
  return Error(StatusCode::kNotFound,
               "process " + std::to_string(pid) + " exited during the attach");
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
    if (fd_ < 0) {
      const int error = errno;
      if (error == ESRCH || error == ENOENT || !ProcessRunning(pid)) return Exited(pid);
      return Error(StatusCode::kInternal, "cannot open the memory of process " +
                                              std::to_string(pid) + ": " + std::strerror(error));
    }
    if (flock(fd_, LOCK_EX | LOCK_NB) != 0) {
      return Error(StatusCode::kInternal,
                   "another gpuperf attach is loading its library into process " +
                       std::to_string(pid) + " right now");
    }
    return Status::Ok();
  }

 private:
  int fd_ = -1;
};

// Whether a ptrace request on a thread gpuperf holds stopped failed with `error` because the
// thread was killed meanwhile: nothing else resumes a thread held so (ESRCH), or the whole
// process is gone.
bool ThreadKilled(int error, pid_t pid) {
  return error == ESRCH || !ProcessRunning(pid);
}

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

// The system call arguments of a thread stopped in one.
void SyscallArgs(const user_regs_struct& regs, uint64_t (&args)[6]) {
  args[0] = regs.rdi;
  args[1] = regs.rsi;
  args[2] = regs.rdx;
  args[3] = regs.r10;
  args[4] = regs.r8;
  args[5] = regs.r9;
}

// Why the stack of the stopped thread `tid` with `regs` rules it out (empty: it does not):
// too little room below it, or its pc or a caller in code that may hold a lock the library's
// loading needs. The callers are unwound (thread_frames.h); above where an unwind stopped
// short, every word that points into such code counts as a caller.
std::string JudgeStack(const Target& target, pid_t tid, const user_regs_struct& regs,
                       const std::vector<CodeRange>& danger, FrameWalker& walker) {
  const Mapping* stack = MappingAt(target.mappings, regs.rsp);
  if (stack == nullptr) return "no stack mapping";
  // A thread's own stack mapping must leave room below; the main thread's [stack] grows.
  if (stack->path != "[stack]" && regs.rsp - stack->start < kStackRoom + kStubStackGap) {
    return "too little stack";
  }
  // The pc alone rules most stops inside such code out, without unwinding.
  const uint64_t pc[1] = {regs.rip + 1};
  if (std::string inside = DangerOnStack(pc, danger); !inside.empty()) return "inside " + inside;
  const ThreadFrames frames = walker.Walk(tid, regs);
  std::vector<uint64_t> words = frames.pcs;
  if (frames.pcs.empty()) words.push_back(regs.rip + 1);  // as a return address would point
  const uint64_t from =
      frames.complete ? stack->end : std::max<uint64_t>(frames.stopped_sp, regs.rsp);
  if (from < stack->end) {
    const uint64_t scan = std::min<uint64_t>(stack->end - from, kMaxStackScan) & ~uint64_t{7};
    const size_t known = words.size();
    words.resize(known + scan / 8);
    if (!ReadProcessMemory(target.pid, from, words.data() + known, scan)) return "unreadable stack";
  }
  const std::string inside = DangerOnStack(words, danger);
  return inside.empty() ? "" : "inside " + inside;
}

// The two ways a thread is borrowed.
enum class BorrowMode {
  kWaiting,  // /proc showed it waiting in a system call that restarts: `seen`
  kRunning,  // /proc showed it running in user space; it is stopped where it is
};

// Why the stopped thread with `regs` may not be used (empty: it may).
std::string JudgeStopped(const Target& target, pid_t tid, BorrowMode mode, const SyscallState& seen,
                         const user_regs_struct& regs, const std::vector<CodeRange>& danger,
                         FrameWalker& walker) {
  const bool in_syscall = static_cast<int64_t>(regs.orig_rax) >= 0;
  if (mode == BorrowMode::kWaiting) {
    if (!in_syscall || static_cast<int64_t>(regs.orig_rax) != seen.nr || regs.rsp != seen.sp ||
        regs.rip != seen.pc) {
      return "moved";
    }
  } else if (in_syscall) {
    // It entered a system call between the look and the stop: usable only where the stop
    // left that call to restart.
    if (ContinuationOf(regs).rip == regs.rip) return "stopped a system call that does not restart";
    uint64_t args[6];
    SyscallArgs(regs, args);
    const bool reads = regs.orig_rax == SYS_read || regs.orig_rax == SYS_readv;
    const std::string reason =
        UnborrowableSyscall(static_cast<int64_t>(regs.orig_rax), args,
                            reads ? DescriptorTarget(target.pid, args[0]) : "");
    if (!reason.empty()) return "waiting in " + reason;
  }
  return JudgeStack(target, tid, regs, danger, walker);
}

struct Borrowed {
  pid_t tid = 0;
  user_regs_struct regs{};
  uint64_t signal_mask = 0;
  std::string how;  // InjectOutcome::how
  std::chrono::steady_clock::time_point stopped;
};

// Seizes and stops thread `tid` if it is still where /proc showed it; nothing otherwise (the
// thread released as it was, `why` saying why).
std::optional<Borrowed> Borrow(const Target& target, pid_t tid, BorrowMode mode,
                               const SyscallState& seen, const std::vector<CodeRange>& danger,
                               FrameWalker& walker, std::string* why, Status* fatal) {
  if (ptrace(PTRACE_SEIZE, tid, nullptr, reinterpret_cast<void*>(PTRACE_O_TRACESYSGOOD)) != 0) {
    if (errno == EPERM) {
      *fatal =
          Error(StatusCode::kInternal, "cannot attach to process " + std::to_string(target.pid) +
                                           ": the kernel refused to trace its thread " +
                                           std::to_string(tid) + " (" + std::strerror(errno) + ")");
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
  thread.stopped = std::chrono::steady_clock::now();
  if (ptrace(PTRACE_GETREGS, tid, nullptr, &thread.regs) != 0 ||
      ptrace(PTRACE_GETSIGMASK, tid, reinterpret_cast<void*>(sizeof(uint64_t)),
             &thread.signal_mask) != 0) {
    Release(tid);
    *why = "unreadable registers";
    return std::nullopt;
  }
  *why = JudgeStopped(target, tid, mode, seen, thread.regs, danger, walker);
  if (!why->empty()) {
    Release(tid);
    return std::nullopt;
  }
  const int64_t nr = static_cast<int64_t>(thread.regs.orig_rax);
  thread.how = nr >= 0 ? "waiting in system call " + std::to_string(nr)
                       : std::string("running, stopped where it was");
  ReachStep(AttachStep::kStopped);
  return thread;
}

// Why thread `tid` may not be stopped where it runs (empty: it may): it must be running in
// user space, as /proc shows it.
std::string JudgeRunning(pid_t pid, pid_t tid) {
  Result<TaskStatus> status = ReadTaskStatus(pid, tid);
  if (!status.ok()) return "gone";
  if (status->state != 'R') return "not running";
  std::optional<SyscallState> now = ReadSyscallState(pid, tid);
  if (!now || !now->running) return "not running";
  return "";
}

// A thread running in user space, looked at again and again (stopped, judged, let go if it is
// not at a safe point) until one look finds it at a safe point, or `until` passes. A program
// whose only busy thread spends almost all its time inside CUDA (a loop of launches and
// synchronizations: it leaves libcuda for a few microseconds a step) is caught outside it
// within a few thousand looks; one look per scan of /proc, as before, could miss it for
// seconds. Each look is let go from its stop: a thread left seized while it runs could not be
// detached again without another stop.
std::optional<Borrowed> CatchRunning(const Target& target, pid_t tid,
                                     const std::vector<CodeRange>& danger, FrameWalker& walker,
                                     std::chrono::steady_clock::time_point until, std::string* why,
                                     Status* fatal) {
  uint64_t looks = 0;
  std::string last;
  for (;;) {
    // Only a thread running in user space is stopped: one that went to wait meanwhile is the
    // /proc scan's to judge (a stop there could make its call return EINTR).
    const std::string running = JudgeRunning(target.pid, tid);
    if (!running.empty() || std::chrono::steady_clock::now() >= until) {
      *why = looks == 0 ? (running.empty() ? "running" : running)
                        : "running, " + std::to_string(looks) + " looks, the last " + last;
      return std::nullopt;
    }
    std::optional<Borrowed> thread =
        Borrow(target, tid, BorrowMode::kRunning, SyscallState{}, danger, walker, &last, fatal);
    if (thread || !fatal->ok()) return thread;
    ++looks;
    if (last == "gone" || last == "taking a signal" || last == "stopped by a signal") {
      *why = last;
      return std::nullopt;
    }
    std::this_thread::sleep_for(kLookGap);
  }
}

// A thread that may be borrowed, waiting up to `timeout_ms` for one. Threads waiting in a
// system call that restarts come first: stopping them changes nothing the program can see.
// After kRunningThreadsAfter with none, a thread running in user space may be stopped too
// (a program whose threads all compute, or wait inside CUDA): each is held and looked at
// until it is at a safe point (CatchRunning). The reasons the others were passed over make
// the error.
Result<Borrowed> FindThread(const Target& target, uint64_t timeout_ms) {
  const std::vector<CodeRange> danger =
      DangerousCode(target.mappings, target.has_libc ? &target.libc : nullptr, target.libc_bias);
  FrameWalker walker(target.pid);
  const auto start = std::chrono::steady_clock::now();
  const auto deadline = start + std::chrono::milliseconds(timeout_ms);
  std::vector<std::string> reasons;
  std::map<pid_t, std::string> running_reasons;
  for (;;) {
    reasons.clear();
    const std::vector<pid_t> threads = ListThreads(target.pid);
    for (pid_t tid : threads) {
      SyscallState seen;
      std::string why = JudgeFromOutside(target.pid, tid, &seen);
      if (why.empty()) {
        Status fatal;
        std::optional<Borrowed> thread =
            Borrow(target, tid, BorrowMode::kWaiting, seen, danger, walker, &why, &fatal);
        if (!fatal.ok()) return fatal;
        if (thread) return *thread;
      }
      auto it = running_reasons.find(tid);
      reasons.push_back(std::to_string(tid) + " " +
                        (why == "not waiting" && it != running_reasons.end() ? it->second : why));
    }
    if (std::chrono::steady_clock::now() - start >= kRunningThreadsAfter) {
      for (pid_t tid : threads) {
        if (!JudgeRunning(target.pid, tid).empty()) continue;
        const auto until = std::min(deadline, std::chrono::steady_clock::now() + kHoldRunning);
        std::string why;
        Status fatal;
        std::optional<Borrowed> thread =
            CatchRunning(target, tid, danger, walker, until, &why, &fatal);
        if (!fatal.ok()) return fatal;
        if (thread) return *thread;
        running_reasons[tid] = why;
      }
    }
    if (!ProcessRunning(target.pid)) return Exited(target.pid);
    if (std::chrono::steady_clock::now() >= deadline) break;
    std::this_thread::sleep_for(kPollGap);
  }
  std::string list;
  for (size_t i = 0; i < reasons.size() && i < 6; ++i) list += (i ? "; " : "") + reasons[i];
  if (reasons.size() > 6) list += "; ...";
  return Error(StatusCode::kInternal,
               "no thread of process " + std::to_string(target.pid) + " reached a safe point in " +
                   std::to_string(timeout_ms / 1000) +
                   " s (each was inside the loader, the allocator or CUDA, or waiting where a "
                   "stop would show: " +
                   list + "); try again");
}

std::string ReadText(pid_t pid, uint64_t address) {
  std::string text;
  char chunk[64];
  while (address != 0 && text.size() < 1024 &&
         ReadProcessMemory(pid, address, chunk, sizeof(chunk))) {
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
  call.rsp = (thread.regs.rsp - kStubStackGap) & ~uint64_t{15};
  call.orig_rax = static_cast<uint64_t>(-1);  // no restart for the kernel to make
  if (ptrace(PTRACE_SETREGS, tid, nullptr, &call) != 0) {
    const int error = errno;
    Release(tid);
    return ThreadKilled(error, target.pid)
               ? Exited(target.pid)
               : Error(StatusCode::kInternal,
                       std::string("cannot set the thread's registers: ") + std::strerror(error));
  }
  ReachStep(AttachStep::kRedirected);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  int deliver = 0;
  bool resumed = false, in_call = false;
  for (;;) {
    if (ptrace(PTRACE_SYSCALL, tid, nullptr,
               reinterpret_cast<void*>(static_cast<intptr_t>(deliver))) != 0) {
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
    if (now.rip == place + stub.marker_offset &&
        static_cast<int64_t>(now.orig_rax) == kMarkerSyscall) {
      ReachStep(AttachStep::kMarker);
      InjectOutcome outcome;
      outcome.thread = tid;
      outcome.how = thread.how;
      outcome.start_result = static_cast<int>(static_cast<int64_t>(now.rsi));
      if (now.rdi == 0) {
        outcome.start_result = kNoLibrary;
        outcome.load_error = ReadText(target.pid, now.rdx);
      }
      Release(tid);
      outcome.stopped_us =
          static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::microseconds>(
                                    std::chrono::steady_clock::now() - thread.stopped)
                                    .count());
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
    if (!ProcessRunning(target.pid)) return Exited(target.pid);
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
  if (!stub.ok()) {
    Release(thread.tid);
    return stub.status();
  }
  if (!Poke(thread.tid, *place, stub->bytes)) {
    const int error = errno;
    Release(thread.tid);
    if (ThreadKilled(error, target.pid)) return Exited(target.pid);
    return Error(StatusCode::kInternal, "cannot write into process " + std::to_string(target.pid) +
                                            ": " + std::strerror(error));
  }
  ReachStep(AttachStep::kWritten);
  return RunStub(target, thread, *place, *stub, options.call_timeout_ms);
}

#else  // The stub, the registers and the system call numbers here are x86-64's.

Result<InjectOutcome> LoadAndStart(const Target&, const InjectOptions&) {
  return Error(StatusCode::kInvalidArgument, kOnlyOnX86_64);
}

#endif

}  // namespace gpuperf::attach
