#include "attach/remote_stub.h"

#include <cstddef>
#include <cstring>

#if defined(__x86_64__)
#include <cpuid.h>
#endif

namespace gpuperf::attach {

#if defined(__x86_64__)

// The stub's code, then its data (StubData below mirrors it), then its strings. Assembled
// into gpuperf's read-only data and copied into the target, never run in gpuperf itself.
//
// Its first instructions copy the data and strings onto the thread's stack; everything after
// reads only that copy (through rbx). A later attach may write its own stub into the same
// padding while this one still runs (gpuperf killed mid-attach, then started again): the code
// bytes are the same, and the data it would change is no longer read.
//
// It ends without a scratch register: the thread's rip and flags go just below the stack it
// returns to (past its red zone), every register is loaded, then popfq and `ret $256` set
// rip and rsp at once.
#define GP_STUB_OFF(name) "(gp_attach_stub_" #name " - gp_attach_stub_data)(%rbx)"
asm(R"(
  .pushsection .rodata.gp_attach_stub, "a"
  .balign 16
gp_attach_stub_begin:
  lea gp_attach_stub_data(%rip), %rsi
  mov (%rsi), %rcx
  sub %rcx, %rsp
  and $-64, %rsp
  mov %rsp, %rbx
  mov %rsp, %rdi
  cld
  rep movsb
  # Every signal waits while the thread is borrowed (rt_sigprocmask(SIG_SETMASK, all, 0, 8)).
  mov $14, %eax
  mov $2, %edi
  lea )" GP_STUB_OFF(all_signals) R"(, %rsi
  xor %edx, %edx
  mov $8, %r10d
  syscall
  # The extended state, below the copy: 64-aligned, its header zeroed (xrstor refuses a
  # standard-form area with anything in XCOMP_BV).
  sub )" GP_STUB_OFF(xsave_size) R"(, %rsp
  and $-64, %rsp
  xor %eax, %eax
  mov %rax, 512(%rsp)
  mov %rax, 520(%rsp)
  mov %rax, 528(%rsp)
  mov %rax, 536(%rsp)
  mov %rax, 544(%rsp)
  mov %rax, 552(%rsp)
  mov %rax, 560(%rsp)
  mov %rax, 568(%rsp)
  mov $-1, %eax
  mov $-1, %edx
  xsave64 (%rsp)
  mov %rsp, %r12
  # handle = dlopen(library, mode)
  lea )" GP_STUB_OFF(strings) R"(, %rdi
  add )" GP_STUB_OFF(library_at) R"(, %rdi
  mov )" GP_STUB_OFF(dlopen_mode) R"(, %esi
  call *)" GP_STUB_OFF(dlopen) R"(
  mov %rax, %r13
  mov $-1, %r14
  xor %r15d, %r15d
  test %rax, %rax
  jz 2f
  # start = dlsym(handle, entry); result = start(settings)
  mov %rax, %rdi
  lea )" GP_STUB_OFF(strings) R"(, %rsi
  add )" GP_STUB_OFF(entry_at) R"(, %rsi
  call *)" GP_STUB_OFF(dlsym) R"(
  mov $-2, %r14
  test %rax, %rax
  jz 3f
  lea )" GP_STUB_OFF(strings) R"(, %rdi
  add )" GP_STUB_OFF(settings_at) R"(, %rdi
  call *%rax
  movslq %eax, %r14
  jmp 3f
2:
  mov )" GP_STUB_OFF(dlerror) R"(, %rax
  test %rax, %rax
  jz 3f
  call *%rax
  mov %rax, %r15
3:
  # The marker: getpid() with the results in rdi (handle), rsi (start's answer; -1: no
  # library, -2: no entry point) and rdx (dlerror's text).
  mov %r13, %rdi
  mov %r14, %rsi
  mov %r15, %rdx
  mov $39, %eax
  syscall
gp_attach_stub_marker:
  mov $-1, %eax
  mov $-1, %edx
  xrstor64 (%r12)
  mov $14, %eax
  mov $2, %edi
  lea )" GP_STUB_OFF(saved_mask) R"(, %rsi
  xor %edx, %edx
  mov $8, %r10d
  syscall
  # rip at rsp-264 and the flags under it: `ret $256` then leaves rsp where it was.
  mov )" GP_STUB_OFF(rsp) R"(, %rax
  sub $264, %rax
  mov )" GP_STUB_OFF(rip) R"(, %rcx
  mov %rcx, (%rax)
  mov )" GP_STUB_OFF(rflags) R"(, %rcx
  mov %rcx, -8(%rax)
  lea -8(%rax), %rsp
  mov )" GP_STUB_OFF(rax) R"(, %rax
  mov )" GP_STUB_OFF(rcx) R"(, %rcx
  mov )" GP_STUB_OFF(rdx) R"(, %rdx
  mov )" GP_STUB_OFF(rsi) R"(, %rsi
  mov )" GP_STUB_OFF(rdi) R"(, %rdi
  mov )" GP_STUB_OFF(rbp) R"(, %rbp
  mov )" GP_STUB_OFF(r8) R"(, %r8
  mov )" GP_STUB_OFF(r9) R"(, %r9
  mov )" GP_STUB_OFF(r10) R"(, %r10
  mov )" GP_STUB_OFF(r11) R"(, %r11
  mov )" GP_STUB_OFF(r12) R"(, %r12
  mov )" GP_STUB_OFF(r13) R"(, %r13
  mov )" GP_STUB_OFF(r14) R"(, %r14
  mov )" GP_STUB_OFF(r15) R"(, %r15
  mov )" GP_STUB_OFF(rbx) R"(, %rbx
  popfq
  ret $256
  .balign 8
gp_attach_stub_data:
gp_attach_stub_copy_bytes: .quad 0
gp_attach_stub_all_signals: .quad 0
gp_attach_stub_saved_mask: .quad 0
gp_attach_stub_xsave_size: .quad 0
gp_attach_stub_dlopen: .quad 0
gp_attach_stub_dlsym: .quad 0
gp_attach_stub_dlerror: .quad 0
gp_attach_stub_dlopen_mode: .quad 0
gp_attach_stub_library_at: .quad 0
gp_attach_stub_entry_at: .quad 0
gp_attach_stub_settings_at: .quad 0
gp_attach_stub_rflags: .quad 0
gp_attach_stub_rax: .quad 0
gp_attach_stub_rbx: .quad 0
gp_attach_stub_rcx: .quad 0
gp_attach_stub_rdx: .quad 0
gp_attach_stub_rsi: .quad 0
gp_attach_stub_rdi: .quad 0
gp_attach_stub_rbp: .quad 0
gp_attach_stub_r8: .quad 0
gp_attach_stub_r9: .quad 0
gp_attach_stub_r10: .quad 0
gp_attach_stub_r11: .quad 0
gp_attach_stub_r12: .quad 0
gp_attach_stub_r13: .quad 0
gp_attach_stub_r14: .quad 0
gp_attach_stub_r15: .quad 0
gp_attach_stub_rsp: .quad 0
gp_attach_stub_rip: .quad 0
gp_attach_stub_strings:
  .popsection
)");
#undef GP_STUB_OFF

extern "C" const uint8_t gp_attach_stub_begin[];
extern "C" const uint8_t gp_attach_stub_marker[];
extern "C" const uint8_t gp_attach_stub_data[];
extern "C" const uint8_t gp_attach_stub_rip[];
extern "C" const uint8_t gp_attach_stub_strings[];

namespace {

// The stub's data, as the assembly above lays it out.
struct StubData {
  uint64_t copy_bytes;  // the data and the strings: what the stub copies onto the stack
  uint64_t all_signals;
  uint64_t saved_mask;
  uint64_t xsave_size;
  uint64_t dlopen;
  uint64_t dlsym;
  uint64_t dlerror;
  uint64_t dlopen_mode;
  uint64_t library_at;  // offsets into the strings after the data
  uint64_t entry_at;
  uint64_t settings_at;
  uint64_t rflags;
  uint64_t rax, rbx, rcx, rdx, rsi, rdi, rbp, r8, r9, r10, r11, r12, r13, r14, r15;
  uint64_t rsp;
  uint64_t rip;
};

// The kernel's restart codes (include/linux/errno.h; never seen by programs).
constexpr int64_t kErestartSys = 512;
constexpr int64_t kErestartNoIntr = 513;
constexpr int64_t kErestartNoHand = 514;
constexpr int64_t kErestartRestartBlock = 516;
constexpr uint64_t kRestartSyscallNr = 219;  // __NR_restart_syscall
constexpr uint64_t kSyscallInsnBytes = 2;    // 0f 05

}  // namespace

user_regs_struct ContinuationOf(const user_regs_struct& regs) {
  user_regs_struct next = regs;
  if (static_cast<int64_t>(regs.orig_rax) >= 0) {
    const int64_t error = -static_cast<int64_t>(regs.rax);
    if (error == kErestartSys || error == kErestartNoIntr || error == kErestartNoHand) {
      next.rax = regs.orig_rax;
      next.rip -= kSyscallInsnBytes;
    } else if (error == kErestartRestartBlock) {
      next.rax = kRestartSyscallNr;
      next.rip -= kSyscallInsnBytes;
    }
  }
  next.orig_rax = static_cast<uint64_t>(-1);
  return next;
}

uint64_t XsaveAreaBytes() {
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  if (!__get_cpuid(1, &eax, &ebx, &ecx, &edx)) return 0;
  const bool osxsave = (ecx & (1u << 27)) != 0;  // the kernel turned XSAVE on
  if (!osxsave || __get_cpuid_max(0, nullptr) < 0xd) return 0;
  __cpuid_count(0xd, 0, eax, ebx, ecx, edx);
  return ebx;
}

Result<Stub> BuildStub(const StubInputs& in) {
  if (in.xsave_bytes < 576) {
    return Error(StatusCode::kInternal, "this CPU offers no XSAVE to keep the thread's state");
  }
  if (static_cast<size_t>(gp_attach_stub_rip - gp_attach_stub_data) != offsetof(StubData, rip) ||
      static_cast<size_t>(gp_attach_stub_strings - gp_attach_stub_data) != sizeof(StubData)) {
    return Error(StatusCode::kInternal, "the attach stub's data layout does not match");
  }
  StubData data{};
  data.all_signals = ~uint64_t{0};
  data.saved_mask = in.signal_mask;
  data.xsave_size = in.xsave_bytes;
  data.dlopen = in.dlopen;
  data.dlsym = in.dlsym;
  data.dlerror = in.dlerror;
  data.dlopen_mode = in.dlopen_mode;
  std::string strings;
  auto add = [&strings](const std::string& text) {
    const uint64_t at = strings.size();
    strings += text;
    strings += '\0';
    return at;
  };
  data.library_at = add(in.library);
  data.entry_at = add(in.entry);
  data.settings_at = add(in.settings);
  data.copy_bytes = sizeof(StubData) + strings.size();
  const user_regs_struct& r = in.resume;
  data.rflags = r.eflags;
  data.rax = r.rax;
  data.rbx = r.rbx;
  data.rcx = r.rcx;
  data.rdx = r.rdx;
  data.rsi = r.rsi;
  data.rdi = r.rdi;
  data.rbp = r.rbp;
  data.r8 = r.r8;
  data.r9 = r.r9;
  data.r10 = r.r10;
  data.r11 = r.r11;
  data.r12 = r.r12;
  data.r13 = r.r13;
  data.r14 = r.r14;
  data.r15 = r.r15;
  data.rsp = r.rsp;
  data.rip = r.rip;
  Stub stub;
  stub.bytes.assign(gp_attach_stub_begin, gp_attach_stub_data);
  const auto* raw = reinterpret_cast<const uint8_t*>(&data);
  stub.bytes.insert(stub.bytes.end(), raw, raw + sizeof(data));
  stub.bytes.insert(stub.bytes.end(), strings.begin(), strings.end());
  stub.entry_offset = 0;
  stub.marker_offset = static_cast<uint64_t>(gp_attach_stub_marker - gp_attach_stub_begin);
  return stub;
}

#else  // not x86-64

user_regs_struct ContinuationOf(const user_regs_struct& regs) {
  return regs;
}

uint64_t XsaveAreaBytes() {
  return 0;
}

Result<Stub> BuildStub(const StubInputs&) {
  return Error(StatusCode::kInternal, "gpuperf attach works on x86-64 only");
}

#endif

}  // namespace gpuperf::attach
