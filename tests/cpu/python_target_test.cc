// The CPU profiler's view of a CPython interpreter from outside the process
// (src/ebpf/python_target.h): the thread-list offsets it adds to the injection library's
// layouts, checked against the real 3.11 headers (python_offsets.c, when built), and the
// whole recorder side on a live python3: finding the interpreter, the running thread's
// PyThreadState by its native id, its frame chain, and a code object named as the
// injection library names it.
#include <signal.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>

#include <gtest/gtest.h>

#include "cpython/python_layout.h"
#include "ebpf/python_target.h"

#ifdef GP_HAVE_PY_HEADERS
#include "cpu/python_offsets.h"
#endif

namespace gpuperf::ebpf {
namespace {

TEST(PythonTarget, InterpreterFileNames) {
  uint32_t major = 0, minor = 0;
  EXPECT_TRUE(IsPythonInterpreterFile("/usr/bin/python3.11", &major, &minor));
  EXPECT_EQ(major, 3u);
  EXPECT_EQ(minor, 11u);
  EXPECT_TRUE(
      IsPythonInterpreterFile("/usr/lib/x86_64-linux-gnu/libpython3.12.so.1.0", &major, &minor));
  EXPECT_EQ(minor, 12u);
  EXPECT_TRUE(IsPythonInterpreterFile("python3.13t", &major, &minor));
  EXPECT_FALSE(IsPythonInterpreterFile("/usr/bin/python3", &major, &minor));  // no minor
  EXPECT_FALSE(IsPythonInterpreterFile("/usr/bin/python3.11-config", &major, &minor));
  EXPECT_FALSE(IsPythonInterpreterFile("/usr/bin/python2.7", &major, &minor));
  EXPECT_FALSE(IsPythonInterpreterFile("/opt/pythonista", &major, &minor));
}

TEST(PythonTarget, BuiltinThreadLists) {
  // 3.10's thread states have no native id: they are found by pthread_self() instead.
  const inject::PyThreadList* list310 = inject::BuiltinPyThreadList(3, 10);
  ASSERT_NE(list310, nullptr);
  EXPECT_LT(list310->tstate_native_thread_id, 0);
  EXPECT_GT(list310->tstate_thread_id, 0);
  EXPECT_NE(inject::BuiltinPyThreadList(3, 11), nullptr);
  EXPECT_NE(inject::BuiltinPyThreadList(3, 12), nullptr);
  EXPECT_EQ(inject::BuiltinPyThreadList(3, 13), nullptr);  // from _Py_DebugOffsets
  EXPECT_EQ(inject::BuiltinPyThreadList(3, 9), nullptr);
}

#ifdef GP_HAVE_PY_HEADERS
// Every offset the BPF walk and the code reader use, against offsetof() with the real headers.
TEST(PythonTarget, TablesMatchTheRealHeaders) {
  gp_real_python_offsets real;
  gp_read_real_python_offsets(&real);
  const inject::PyThreadList* threads = inject::BuiltinPyThreadList(3, real.minor);
  const inject::PyLayout* layout = inject::BuiltinPyLayout(3, real.minor);
  ASSERT_NE(threads, nullptr) << "3." << real.minor;
  ASSERT_NE(layout, nullptr);
  EXPECT_EQ(threads->interpreters_head, real.interpreters_head);
  EXPECT_EQ(threads->threads_head, real.threads_head);
  EXPECT_EQ(threads->tstate_next, real.tstate_next);
  EXPECT_EQ(threads->tstate_native_thread_id, real.tstate_native_thread_id);
  EXPECT_EQ(threads->tstate_thread_id, real.tstate_thread_id);
  EXPECT_EQ(layout->tstate_frame, real.tstate_cframe);
  EXPECT_EQ(layout->cframe_current_frame, real.cframe_current_frame);
  EXPECT_EQ(layout->frame_code, real.frame_code);
  EXPECT_EQ(layout->frame_previous, real.frame_previous);
  EXPECT_EQ(layout->frame_instr, real.frame_instr);
  EXPECT_EQ(layout->frame_owner, real.frame_owner);
  EXPECT_EQ(layout->frame_is_entry, real.frame_is_entry);
  EXPECT_EQ(layout->code_first_line, real.code_first_line);
  EXPECT_EQ(layout->code_filename, real.code_filename);
  EXPECT_EQ(layout->code_name, real.code_name);
  EXPECT_EQ(layout->code_qualname, real.code_qualname);
  EXPECT_EQ(layout->code_line_table, real.code_line_table);
  EXPECT_EQ(layout->code_bytecode, real.code_bytecode);
  EXPECT_EQ(layout->code_first_traceable, real.code_first_traceable);
}
#endif

uint64_t ReadWord(uint32_t pid, uint64_t address) {
  uint64_t value = 0;
  iovec local{&value, sizeof(value)};
  iovec remote{reinterpret_cast<void*>(address), sizeof(value)};
  return process_vm_readv(pid, &local, 1, &remote, 1, 0) == sizeof(value) ? value : 0;
}

// A python3 spinning in a function of a known name, killed at the end.
class LivePython : public ::testing::Test {
 protected:
  void SetUp() override {
    const char* program =
        "import sys\n"
        "def gp_spin_here():\n"
        "    sys.stdout.write('ready\\n'); sys.stdout.flush()\n"
        "    while True: pass\n"
        "gp_spin_here()\n";
    int pipe_fds[2];
    ASSERT_EQ(pipe(pipe_fds), 0);
    pid_ = fork();
    ASSERT_GE(pid_, 0);
    if (pid_ == 0) {
      dup2(pipe_fds[1], 1);
      execlp("python3", "python3", "-c", program, static_cast<char*>(nullptr));
      _exit(127);
    }
    close(pipe_fds[1]);
    char line[16] = {};
    ready_ = read(pipe_fds[0], line, sizeof(line) - 1) > 0 && std::string(line) == "ready\n";
    close(pipe_fds[0]);
  }
  void TearDown() override {
    if (pid_ > 0) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
  }
  pid_t pid_ = -1;
  bool ready_ = false;
};

TEST_F(LivePython, FindsTheRunningFunction) {
  if (!ready_) GTEST_SKIP() << "no python3 here";
  std::map<std::string, ElfLayout> cache;
  const PythonTarget target =
      FindPythonTarget(uint32_t(pid_), ReadProcessModules(uint32_t(pid_), cache));
  if (target.state == PythonTargetState::kAbsent) GTEST_SKIP() << "python3 without _PyRuntime";
  ASSERT_EQ(target.state, PythonTargetState::kReady) << target.why;
  const gp_py_target& t = target.bpf;
  // The main thread's state, found as the BPF program finds it: by its native thread id.
  const uint64_t interp = ReadWord(pid_, t.runtime + t.interpreters_head);
  ASSERT_NE(interp, 0u);
  uint64_t tstate = ReadWord(pid_, interp + t.threads_head);
  for (int i = 0; i < 64 && tstate != 0; ++i) {
    if (ReadWord(pid_, tstate + t.tstate_native_thread_id) == uint64_t(pid_)) break;
    tstate = ReadWord(pid_, tstate + t.tstate_next);
  }
  ASSERT_NE(tstate, 0u) << "no thread state with native id " << pid_;
  uint64_t frame = ReadWord(pid_, tstate + t.tstate_frame);
  if (t.cframe_current_frame >= 0) frame = ReadWord(pid_, frame + t.cframe_current_frame);
  ASSERT_NE(frame, 0u);
  // The innermost frame is gp_spin_here's; its caller is <module>.
  const uint64_t code = ReadWord(pid_, frame + t.frame_code) & t.code_pointer_mask;
  PyCodeInfo info;
  ASSERT_TRUE(
      ReadRemoteCode(uint32_t(pid_), target, code, ReadWord(pid_, code + t.code_key), &info));
  EXPECT_EQ(info.name, "gp_spin_here");
  EXPECT_EQ(info.filename, "<string>");
  EXPECT_EQ(info.first_line, 2);
  EXPECT_GT(info.code_units, 0u);
  EXPECT_FALSE(info.line_table.empty());
  // Another key than the sampled one: the address holds another code object by now.
  EXPECT_FALSE(
      ReadRemoteCode(uint32_t(pid_), target, code, ReadWord(pid_, code + t.code_key) ^ 1, &info));
  const uint64_t outer = ReadWord(pid_, frame + t.frame_previous);
  ASSERT_NE(outer, 0u);
  // 3.12+: a shim frame may stand between; skip frames the owner byte marks as shims.
  uint64_t caller = outer;
  if (t.flavor == GP_PY_SHIM_FRAMES) {
    while (caller != 0 && int8_t(ReadWord(pid_, caller + t.frame_owner)) >= int8_t(t.shim_owner)) {
      caller = ReadWord(pid_, caller + t.frame_previous);
    }
  }
  const uint64_t outer_code = ReadWord(pid_, caller + t.frame_code) & t.code_pointer_mask;
  ASSERT_TRUE(ReadRemoteCode(uint32_t(pid_), target, outer_code,
                             ReadWord(pid_, outer_code + t.code_key), &info));
  EXPECT_EQ(info.name, "<module>");
}

TEST_F(LivePython, AnUnknownVersionIsRefusedWithAReason) {
  if (!ready_) GTEST_SKIP() << "no python3 here";
  setenv("GPUPERF_CPU_PYTHON_VERSION", "3.99", 1);
  std::map<std::string, ElfLayout> cache;
  const PythonTarget target =
      FindPythonTarget(uint32_t(pid_), ReadProcessModules(uint32_t(pid_), cache));
  unsetenv("GPUPERF_CPU_PYTHON_VERSION");
  if (target.state == PythonTargetState::kAbsent) GTEST_SKIP() << "python3 without _PyRuntime";
  EXPECT_EQ(target.state, PythonTargetState::kRefused);
  EXPECT_NE(target.why.find("CPython 3.99"), std::string::npos) << target.why;
}

}  // namespace
}  // namespace gpuperf::ebpf
