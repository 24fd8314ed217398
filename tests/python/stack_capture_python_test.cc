// The launch-stack path (src/inject/stack/stack_capture.cc) with Python frames, on a
// synthetic interpreter (fake_python.h): native PCs first, then the Python frames as tagged
// words with their code ids and entry flags; the frame-pointer stack that libunwind
// confirmed keeps its Python frames, and a thread without Python gets the native stack.
// Compiled with frame pointers, and captured on a thread of our own (whose start, in libc,
// is allowed to lack them), so the frame-pointer path is the one taken; the capture code
// is in libgpuperf_inject_capture_test.so, whose frames are trimmed as the injection
// library's are (stack_capture_python_support.cc).
#include <gtest/gtest.h>
#include <pthread.h>

#include <map>
#include <string>
#include <vector>

#include "gpuperf/python_frame_word.h"
#include "inject/modules.h"
#include "inject/stack/stack_capture.h"
#include "inject/stats.h"

namespace gpuperf::inject {

uint64_t SetUpCaptureWithFakePython();
void SetFakeThreadStateForTest(uint64_t tstate);

namespace {

struct Captured {
  uint64_t tstate = 0;
  StackId python_first = 0, python_again = 0, native_only = 0;
};

__attribute__((noinline)) StackId CaptureWith(uint64_t tstate) {
  SetFakeThreadStateForTest(tstate);  // per thread, like the real one
  StackId id = CaptureLaunchStack();
  asm volatile("" ::: "memory");  // no tail call
  return id;
}

// Three captures from one call site: two with the thread's Python frames (the first checks
// the frame-pointer stack with libunwind, the second uses the verdict), one without them.
void* ThreadMain(void* arg) {
  auto* captured = static_cast<Captured*>(arg);
  const uint64_t tstates[3] = {captured->tstate, captured->tstate, 0};
  StackId ids[3] = {};
  volatile int count = 3;  // one loop, one call site
  for (int i = 0; i < count; ++i) ids[i] = CaptureWith(tstates[i]);
  captured->python_first = ids[0];
  captured->python_again = ids[1];
  captured->native_only = ids[2];
  return nullptr;
}

TEST(StackCaptureWithPython, NativeFramesThenTaggedPythonFrames) {
  Captured captured;
  captured.tstate = SetUpCaptureWithFakePython();
  ASSERT_NE(captured.tstate, 0u);
  pthread_t thread;
  ASSERT_EQ(pthread_create(&thread, nullptr, ThreadMain, &captured), 0);
  pthread_join(thread, nullptr);

  // One frame-pointer stack (one call site), confirmed once, used twice.
  EXPECT_EQ(GetStat(StatId::fp_stacks_verified), 1u) << "the frame-pointer path was not taken";
  ASSERT_NE(captured.python_first, 0u);
  EXPECT_EQ(captured.python_again, captured.python_first);
  ASSERT_NE(captured.native_only, 0u);
  EXPECT_NE(captured.native_only, captured.python_first);

  std::vector<StackRecord> stacks;
  DrainNewStacks(stacks, 1);
  std::map<StackId, const StackRecord*> by_id;
  for (const StackRecord& stack : stacks) by_id[stack.id] = &stack;
  ASSERT_TRUE(by_id.count(captured.python_first) && by_id.count(captured.native_only));
  const StackRecord& python = *by_id[captured.python_first];
  const StackRecord& native = *by_id[captured.native_only];
  // The native part is the native stack (the same call site, thread start included).
  ASSERT_EQ(python.pcs.size(), native.pcs.size() + 2);
  for (size_t i = 0; i < native.pcs.size(); ++i) {
    EXPECT_EQ(python.pcs[i], native.pcs[i]) << i;
    EXPECT_FALSE(IsPythonFrameWord(native.pcs[i]));
  }
  const uint64_t inner = python.pcs[native.pcs.size()];
  const uint64_t outer = python.pcs[native.pcs.size() + 1];
  ASSERT_TRUE(IsPythonFrameWord(inner) && IsPythonFrameWord(outer));
  EXPECT_EQ(PythonFrameInstruction(inner), 7u);
  EXPECT_FALSE(PythonFrameIsEntry(inner));
  EXPECT_EQ(PythonFrameInstruction(outer), 3u);
  EXPECT_TRUE(PythonFrameIsEntry(outer));

  NameTable names;
  std::vector<PythonCodeRecord> codes;
  DrainNewPythonCodeRecords(codes, 1, names);
  std::vector<std::pair<StringId, std::string>> strings;
  names.DrainNew(strings);
  std::map<StringId, std::string> text(strings.begin(), strings.end());
  std::map<uint32_t, std::string> name_of_code;
  for (const PythonCodeRecord& code : codes) name_of_code[code.code_id] = text[code.name];
  EXPECT_EQ(codes.size(), 2u);
  EXPECT_EQ(name_of_code[PythonFrameCodeId(inner)], "Model.forward");
  EXPECT_EQ(name_of_code[PythonFrameCodeId(outer)], "main");

  UpdatePythonStats();
  EXPECT_EQ(GetStat(StatId::python_codes), 2u);
  EXPECT_EQ(GetStat(StatId::python_no_thread_state), 1u);
}

// A stack's Python frames lie in no module, and must not make the writer re-read the
// module list at every new stack; a native PC outside every module still does.
TEST(StackCaptureWithPython, PythonFramesNeedNoModuleRefresh) {
  ModuleTracker modules;
  NameTable names;
  std::vector<ModuleRecord> records;
  modules.Refresh(1, names, records);
  ASSERT_FALSE(records.empty());
  const uint64_t native_pc = records[0].start;
  std::vector<StackRecord> stacks = {
      {1, 1, {native_pc, MakePythonFrameWord(1, 0, false), MakePythonFrameWord(2, 4, true)}}};
  EXPECT_FALSE(modules.NeedsRefresh(stacks));
  stacks[0].pcs.insert(stacks[0].pcs.begin(), 8);  // an address no module has
  EXPECT_TRUE(modules.NeedsRefresh(stacks));
}

}  // namespace
}  // namespace gpuperf::inject
