// The code gpuperf attach runs on a borrowed thread of the target (docs/attach.md): it loads
// the injection library, starts the attach window, then puts the thread back exactly as it
// found it, by itself. gpuperf only points the thread at it and watches: once the thread
// runs the stub, nothing depends on gpuperf any more, so gpuperf may die at any moment
// without hurting the target.
//
// What the stub does, in order: copies its data onto the thread's stack, so that nothing later
// reads the stub's bytes (another attach may write there); blocks every signal (none is lost:
// they wait); saves the FPU/SSE/AVX state (xsave) below its copy; calls dlopen(library), then
// dlsym(handle, "gpuperf_attach_start") and that function with the settings (or dlerror()
// when dlopen failed); makes one getpid system call with the results in rdi, rsi and rdx
// (the "marker", where gpuperf reads them); restores the extended state, the signal mask, the
// flags and every general register, and jumps back to where the thread was (to its system
// call instruction, when the kernel would have restarted one).
#pragma once

#include <sys/user.h>

#include <cstdint>
#include <string>
#include <vector>

#include "gpuperf/status.h"

namespace gpuperf::attach {

// Where the stub's stack begins, below the thread's stack pointer: past the thread's red zone
// (128 bytes) and the two words the stub's last instructions leave under 256 bytes of room.
inline constexpr uint64_t kStubStackGap = 512;

struct StubInputs {
  uint64_t dlopen = 0;  // in the target
  uint64_t dlsym = 0;
  uint64_t dlerror = 0;      // 0: none (the error text is then unknown)
  uint32_t dlopen_mode = 0;  // RTLD_NOW, or RTLD_NOW with the private flag of __libc_dlopen_mode
  std::string library;       // the path dlopen gets
  std::string entry;         // the function dlsym looks up
  std::string settings;      // its argument
  uint64_t xsave_bytes = 0;  // the size of the extended state area (CPUID leaf 0xD)
  // Where the thread goes back to: its registers with the kernel's restart already applied
  // (ContinuationOf), and its signal mask.
  user_regs_struct resume{};
  uint64_t signal_mask = 0;
};

struct Stub {
  std::vector<uint8_t> bytes;  // to write at its address in the target
  uint64_t entry_offset = 0;   // where the thread starts (offset in `bytes`)
  uint64_t marker_offset = 0;  // the rip of the marker's syscall-entry stop
};

// The stub for `inputs`, to be placed anywhere (it addresses itself relative to rip).
Result<Stub> BuildStub(const StubInputs& inputs);

// The registers a thread stopped in `regs` resumes with when nothing is delivered to it: a
// system call the stop interrupted with -ERESTART* is set up to run again, as the kernel
// does (rip back over the syscall instruction, rax the call again, or restart_syscall for a
// sleep that keeps its remaining time). orig_rax becomes -1: nothing left for the kernel.
user_regs_struct ContinuationOf(const user_regs_struct& regs);

// The size of the XSAVE area this machine's enabled features need (CPUID 0xD, EBX), or 0
// when the CPU or kernel offers no XSAVE.
uint64_t XsaveAreaBytes();

}  // namespace gpuperf::attach
