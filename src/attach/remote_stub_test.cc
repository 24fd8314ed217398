#include "attach/remote_stub.h"

#include <gtest/gtest.h>
#include <sys/syscall.h>

#include <cstring>

namespace gpuperf::attach {
namespace {

#if defined(__x86_64__)

user_regs_struct InSyscall(int64_t nr, int64_t result) {
  user_regs_struct regs{};
  regs.orig_rax = static_cast<uint64_t>(nr);
  regs.rax = static_cast<uint64_t>(result);
  regs.rip = 0x401002;  // just past the syscall instruction
  return regs;
}

TEST(RemoteStubTest, AStoppedWaitRestartsAsTheKernelWouldHaveRestartedIt) {
  // -ERESTARTSYS (a futex wait): the call again, from its syscall instruction.
  user_regs_struct next = ContinuationOf(InSyscall(SYS_futex, -512));
  EXPECT_EQ(next.rip, 0x401000u);
  EXPECT_EQ(next.rax, static_cast<uint64_t>(SYS_futex));
  EXPECT_EQ(static_cast<int64_t>(next.orig_rax), -1);
  // -ERESTART_RESTARTBLOCK (a relative sleep): restart_syscall, which keeps the time left.
  next = ContinuationOf(InSyscall(SYS_clock_nanosleep, -516));
  EXPECT_EQ(next.rip, 0x401000u);
  EXPECT_EQ(next.rax, 219u);
  // A call that returned (or returns EINTR) goes on from where it is.
  next = ContinuationOf(InSyscall(SYS_epoll_wait, -4));
  EXPECT_EQ(next.rip, 0x401002u);
  EXPECT_EQ(static_cast<int64_t>(next.rax), -4);
  // Stopped outside a system call: exactly as it was.
  user_regs_struct running{};
  running.orig_rax = static_cast<uint64_t>(-1);
  running.rip = 0x402000;
  running.rax = 7;
  next = ContinuationOf(running);
  EXPECT_EQ(next.rip, 0x402000u);
  EXPECT_EQ(next.rax, 7u);
}

TEST(RemoteStubTest, TheStubCarriesItsStringsAndTheRegistersToGoBackTo) {
  StubInputs in;
  in.dlopen = 0x1111;
  in.dlsym = 0x2222;
  in.library = "/opt/gpuperf/libgpuperf_inject.so";
  in.entry = "gpuperf_attach_start";
  in.settings = "GPUPERF_ATTACH_PROTOCOL=1\n";
  in.xsave_bytes = 2696;
  in.resume.rip = 0x7f0000401000;
  in.resume.rsp = 0x7ffd00001000;
  in.signal_mask = 0x10002;
  Result<Stub> stub = BuildStub(in);
  ASSERT_TRUE(stub.ok()) << stub.status().message();
  const std::string bytes(stub->bytes.begin(), stub->bytes.end());
  for (const std::string& text : {in.library, in.entry, in.settings}) {
    EXPECT_NE(bytes.find(text + '\0'), std::string::npos) << text;
  }
  EXPECT_EQ(stub->entry_offset, 0u);
  EXPECT_GT(stub->marker_offset, 0u);
  EXPECT_LT(stub->marker_offset, bytes.find(in.library));
  // The marker follows the getpid syscall instruction.
  ASSERT_GE(stub->marker_offset, 2u);
  EXPECT_EQ(stub->bytes[stub->marker_offset - 2], 0x0f);
  EXPECT_EQ(stub->bytes[stub->marker_offset - 1], 0x05);
  for (uint64_t word :
       {in.dlopen, in.dlsym, uint64_t{in.resume.rip}, uint64_t{in.resume.rsp}, in.signal_mask}) {
    EXPECT_NE(bytes.find(std::string(reinterpret_cast<const char*>(&word), 8)), std::string::npos);
  }
  in.xsave_bytes = 0;  // no XSAVE: the thread's vector registers could not be kept
  EXPECT_FALSE(BuildStub(in).ok());
}

#endif

}  // namespace
}  // namespace gpuperf::attach
