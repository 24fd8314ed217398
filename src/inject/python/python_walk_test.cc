#include "inject/python/python_walk.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "cpython/python_lines.h"
#include "inject/python/python_code_table.h"
#include "python/fake_python.h"

namespace gpuperf::inject {
namespace {

using testing::FakeCodeSpec;
using testing::FakePython;
using testing::FakeVersion;

class PythonWalkTest : public ::testing::TestWithParam<FakeVersion> {
 protected:
  PyWalkResult Walk(int max = kMaxPythonFrames) {
    samples_.assign(kMaxPythonFrames + 8, PyFrameSample{});
    return WalkPyFramesOf(fake_.view(), fake_.thread_state(), samples_.data(), max);
  }
  uint64_t Code(const std::u32string& name) {
    FakeCodeSpec spec;
    spec.name = spec.qualname = name;
    return fake_.NewCode(spec);
  }
  bool EveryFrameIsEntry() const { return GetParam() == FakeVersion::k310; }
  // The first n samples as a trace's reader shows them: their code objects interned and
  // copied by a PyCodeTable, incomplete frames left out by the reader's own test (an
  // entry mark of one moves to the frame inside it, as SymbolTable does).
  std::vector<PyFrameSample> Shown(int n) {
    PyCodeTable table;
    PyCodeCache cache{};
    std::vector<uint32_t> ids(size_t(n), 0);
    EXPECT_EQ(table.InternAll(fake_.view(), samples_.data(), n, ids.data(), cache), 0);
    std::vector<PyCodeInfo> codes;
    table.DrainNew(codes);
    std::vector<PyFrameSample> shown;
    for (int i = 0; i < n; ++i) {
      const PyCodeInfo& code = codes.at(ids[i] - 1);
      const PyFrameSample& sample = samples_[i];
      if (PythonFrameIsIncomplete(code.python_version, code.first_traceable, sample.instr_offset,
                                  PyFrameIsGenerator(sample.flags))) {
        if ((sample.flags & kPyFrameEntry) && !shown.empty()) shown.back().flags |= kPyFrameEntry;
        continue;
      }
      shown.push_back(sample);
    }
    return shown;
  }

  FakePython fake_{GetParam()};
  std::vector<PyFrameSample> samples_;
};

TEST_P(PythonWalkTest, ReadsCodeOffsetAndEntryOfEveryFrameInnermostFirst) {
  uint64_t a = Code(U"a"), b = Code(U"b"), c = Code(U"c"), d = Code(U"d");
  fake_.PushFrame(a, 3, /*entry=*/true);
  fake_.PushFrame(b, 5, false);
  fake_.PushFrame(c, 7, true);
  fake_.PushFrame(d, 0, false);
  PyWalkResult result = Walk();
  ASSERT_EQ(result.frames, 4);
  EXPECT_FALSE(result.truncated);
  EXPECT_FALSE(result.broken);
  EXPECT_EQ(result.skipped, 0u);
  uint64_t codes[] = {d, c, b, a};
  uint32_t offsets[] = {0, 7, 5, 3};
  bool entries[] = {false, true, false, true};
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(samples_[i].code, codes[i]) << i;
    EXPECT_EQ(samples_[i].instr_offset, offsets[i]) << i;
    bool entry = (samples_[i].flags & kPyFrameEntry) != 0;
    EXPECT_EQ(entry, EveryFrameIsEntry() || entries[i]) << i;
  }
}

// The fakes' layouts walk with compiled-in offsets (3.13 and 3.14: those their debug
// offsets give equal the built-in ones), any other with offsets read at run time: both give
// the same walk.
TEST_P(PythonWalkTest, CompiledAndRunTimeOffsetsWalkAlike) {
  static const uint8_t kBuiltinIds[] = {10, 11, 12, 13, 14};
  EXPECT_EQ(fake_.view().layout.builtin_id, kBuiltinIds[int(GetParam())]);
  for (int i = 0; i < 9; ++i) fake_.PushFrame(Code(U"f"), uint32_t(i), i % 3 == 0);
  PyWalkResult compiled = Walk();
  std::vector<PyFrameSample> first = samples_;
  PyRuntimeView run_time = fake_.view();
  run_time.layout.builtin_id = 0;
  PyWalkResult dynamic = WalkPyFramesOf(run_time, fake_.thread_state(), samples_.data(), 128);
  ASSERT_EQ(compiled.frames, 9);
  ASSERT_EQ(dynamic.frames, 9);
  for (int i = 0; i < 9; ++i) {
    EXPECT_EQ(samples_[i].code, first[i].code);
    EXPECT_EQ(samples_[i].instr_offset, first[i].instr_offset);
    EXPECT_EQ(samples_[i].flags, first[i].flags);
  }
}

// Frames that have not started are recorded with kPyNoInstruction (3.11+: an instruction
// pointer one unit before the bytecode, read as -1) and, from 3.11 on, left out by the
// reader as CPython's _PyFrame_IsIncomplete leaves them out.
TEST_P(PythonWalkTest, FramesThatHaveNotStartedAreLeftOutFrom311) {
  fake_.PushFrame(Code(U"outer"), 4, true);
  fake_.PushFrame(Code(U"inner"), kPyNoInstruction, false);
  ASSERT_EQ(Walk().frames, 2);
  EXPECT_EQ(samples_[0].instr_offset, kPyNoInstruction);
  EXPECT_EQ(samples_[1].instr_offset, 4u);
  std::vector<PyFrameSample> shown = Shown(2);
  if (GetParam() == FakeVersion::k310) {
    ASSERT_EQ(shown.size(), 2u) << "3.10 shows frames that have not started";
  } else {
    ASSERT_EQ(shown.size(), 1u) << "CPython's _PyFrame_IsIncomplete";
    EXPECT_EQ(shown[0].instr_offset, 4u);
    EXPECT_TRUE(shown[0].flags & kPyFrameEntry);
  }
}

// 3.13's _Py_InitCleanup: a code object whose frames never reach _co_firsttraceable. The
// walk records them with their raw offsets and owners; the code table copies the code's
// first traceable unit once; the reader leaves them out, moving an entry mark inwards.
TEST_P(PythonWalkTest, TrampolinesBeforeTheirFirstTraceableUnitAreLeftOut) {
  if (GetParam() == FakeVersion::k310) GTEST_SKIP() << "3.10 has no _co_firsttraceable";
  FakeCodeSpec trampoline;
  trampoline.first_traceable = 4;
  uint64_t code = fake_.NewCode(trampoline);
  fake_.PushFrame(Code(U"caller"), 9, true);
  fake_.PushFrame(code, 0, /*entry=*/true);  // 3.12+: a shim under it
  uint64_t generator = fake_.PushFrame(code, 1, false);
  fake_.SetFrameOwner(generator, 1);  // a generator's frame is never incomplete
  fake_.PushFrame(Code(U"__init__"), 5, false);
  ASSERT_EQ(Walk().frames, 4) << "the walk keeps every frame";
  EXPECT_EQ(samples_[2].code, code);
  EXPECT_EQ(samples_[2].instr_offset, 0u);
  EXPECT_TRUE(samples_[2].flags & kPyFrameEntry);
  EXPECT_TRUE(PyFrameIsGenerator(samples_[1].flags));
  EXPECT_FALSE(PyFrameIsGenerator(samples_[2].flags));
  std::vector<PyFrameSample> shown = Shown(4);
  ASSERT_EQ(shown.size(), 3u);
  EXPECT_EQ(shown[0].instr_offset, 5u);
  EXPECT_EQ(shown[1].instr_offset, 1u);
  EXPECT_EQ(shown[2].instr_offset, 9u);
  // The trampoline's entry mark moved to the frame above it.
  EXPECT_TRUE(shown[1].flags & kPyFrameEntry);
  EXPECT_TRUE(shown[2].flags & kPyFrameEntry);
  EXPECT_FALSE(shown[0].flags & kPyFrameEntry);
}

TEST_P(PythonWalkTest, NoThreadStateOrNoFramesGivesNothing) {
  EXPECT_EQ(Walk().frames, 0) << "a thread state without frames";
  PyFrameSample sample;
  EXPECT_EQ(WalkPyFramesOf(fake_.view(), 0, &sample, 1).frames, 0);
  fake_.PushFrame(Code(U"f"), 0, true);
  EXPECT_EQ(WalkPyFramesOf(fake_.view(), fake_.thread_state(), &sample, 0).frames, 0);
}

TEST_P(PythonWalkTest, DeepStacksAreCutAtMaxAndAtTheFrameLimit) {
  uint64_t code = Code(U"recurse");
  for (int i = 0; i < 200; ++i) fake_.PushFrame(code, uint32_t(i), i % 7 == 0);
  PyWalkResult result = Walk(10);
  EXPECT_EQ(result.frames, 10);
  EXPECT_TRUE(result.truncated);
  EXPECT_EQ(samples_[0].instr_offset, 199u);
  result = Walk(1000);  // capped
  EXPECT_EQ(result.frames, kMaxPythonFrames);
  EXPECT_TRUE(result.truncated);
  EXPECT_EQ(samples_[kMaxPythonFrames - 1].instr_offset, uint32_t(200 - kMaxPythonFrames));
}

TEST_P(PythonWalkTest, CyclesEndAtTheBound) {
  uint64_t code = Code(U"loop");
  uint64_t bottom = fake_.PushFrame(code, 1, false);
  fake_.PushFrame(code, 2, false);
  uint64_t top = fake_.PushFrame(code, 3, false);
  fake_.SetPrevious(bottom, top);
  PyWalkResult result = Walk();
  EXPECT_TRUE(result.truncated);
  EXPECT_LE(result.frames, kMaxPythonFrames);
  fake_.SetPrevious(top, top);  // a frame that is its own caller
  result = Walk();
  EXPECT_TRUE(result.truncated);
  EXPECT_LE(result.frames, kMaxPythonFrames);
}

TEST_P(PythonWalkTest, FramesWithoutACodeObjectAreSkippedAndCounted) {
  uint64_t good = Code(U"good");
  fake_.PushFrame(good, 1, true);
  uint64_t null_code = fake_.PushFrame(good, 2, false);
  uint64_t not_code = fake_.PushFrame(good, 3, false);
  uint64_t misaligned = fake_.PushFrame(good, 4, false);
  fake_.PushFrame(good, 5, false);
  fake_.SetFrameCode(null_code, 0);
  fake_.SetFrameCode(not_code, fake_.NewString(U"a str, not code"));
  fake_.SetFrameCode(misaligned, good + 12);  // on 3.14 the tag mask leaves good + 8
  PyWalkResult result = Walk();
  EXPECT_EQ(result.skipped, 3u);
  ASSERT_EQ(result.frames, 2);
  EXPECT_EQ(samples_[0].instr_offset, 5u);
  EXPECT_EQ(samples_[1].instr_offset, 1u);
}

TEST_P(PythonWalkTest, MisalignedFramePointerEndsTheWalk) {
  uint64_t code = Code(U"f");
  fake_.PushFrame(code, 1, true);
  uint64_t middle = fake_.PushFrame(code, 2, false);
  fake_.PushFrame(code, 3, false);
  fake_.SetPrevious(middle, 0x1003);
  PyWalkResult result = Walk();
  EXPECT_TRUE(result.broken);
  ASSERT_EQ(result.frames, 2);
  EXPECT_EQ(samples_[1].instr_offset, 2u);
}

INSTANTIATE_TEST_SUITE_P(AllLayouts, PythonWalkTest, ::testing::ValuesIn(testing::kAllFakeVersions),
                         [](const auto& info) { return testing::FakeVersionName(info.param); });

}  // namespace
}  // namespace gpuperf::inject
