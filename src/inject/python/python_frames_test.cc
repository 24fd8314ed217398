#include "inject/python/python_frames.h"

#include <gtest/gtest.h>

#include <cstring>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "python/fake_python.h"

namespace gpuperf::inject {
namespace {

using testing::FakeCodeSpec;
using testing::FakePython;
using testing::FakeVersion;

// The symbols a process would export, served to the probe instead of dlsym.
std::map<std::string, void*> g_symbols;
void* LookUp(const char* name) {
  auto it = g_symbols.find(name);
  return it == g_symbols.end() ? nullptr : it->second;
}

unsigned long g_py_version = 0;
const char* g_version_string = "";
const char* GetVersionString() {
  return g_version_string;
}

std::vector<std::string> g_notices;
void Notice(const char* line) {
  g_notices.emplace_back(line);
}

// Exports as the fake interpreter's process would: Py_Version from 3.11 on,
// Py_GetVersion() only on 3.10, _PyRuntime from 3.13 on.
void Export(FakePython& fake, unsigned long version_hex) {
  g_symbols.clear();
  g_symbols["PyGILState_GetThisThreadState"] = reinterpret_cast<void*>(fake.view().thread_state);
  g_symbols["PyCode_Type"] = reinterpret_cast<void*>(fake.view().code_type);
  g_symbols["PyUnicode_Type"] = reinterpret_cast<void*>(fake.view().unicode_type);
  g_symbols["PyBytes_Type"] = reinterpret_cast<void*>(fake.view().bytes_type);
  if (fake.version() == FakeVersion::k310) {
    g_version_string = "3.10.13 (main, Jan  1 2024, 00:00:00) [GCC 12.2.0]";
    g_symbols["Py_GetVersion"] = reinterpret_cast<void*>(GetVersionString);
  } else {
    g_py_version = version_hex;
    g_symbols["Py_Version"] = &g_py_version;
  }
  if (fake.runtime() != nullptr) g_symbols["_PyRuntime"] = fake.runtime();
}

PythonProbe Probe(uint32_t* version, const char** why) {
  PyRuntimeView view;
  return ProbePythonRuntime(LookUp, &view, version, why);
}

class PythonProbeTest : public ::testing::TestWithParam<FakeVersion> {
 protected:
  FakePython fake_{GetParam()};
};

TEST_P(PythonProbeTest, FindsTheInterpreterAndItsLayout) {
  Export(fake_, fake_.version_hex() | 0x02f0);  // x.y.2 final
  uint32_t version = 0;
  const char* why = "";
  PyRuntimeView view;
  ASSERT_EQ(ProbePythonRuntime(LookUp, &view, &version, &why), PythonProbe::kReady) << why;
  EXPECT_EQ(version, fake_.version_hex());
  const PyLayout& want = fake_.view().layout;
  EXPECT_EQ(view.layout.version, want.version);
  EXPECT_EQ(view.layout.flavor, want.flavor);
  EXPECT_EQ(view.layout.tstate_frame, want.tstate_frame);
  EXPECT_EQ(view.layout.frame_code, want.frame_code);
  EXPECT_EQ(view.layout.code_bytecode, want.code_bytecode);
  EXPECT_EQ(view.code_type, fake_.view().code_type);
}

TEST_P(PythonProbeTest, RefusesDebugBuildsPreReleasesAndMissingTypes) {
  uint32_t version = 0;
  const char* why = "";
  Export(fake_, fake_.version_hex() | 0xf0);
  g_symbols["_Py_NegativeRefcount"] = &g_symbols;
  EXPECT_EQ(Probe(&version, &why), PythonProbe::kRefused);
  EXPECT_NE(std::string(why).find("debug"), std::string::npos) << why;

  Export(fake_, fake_.version_hex() | 0xb1);  // beta 1
  g_version_string = "3.10.0b1 (main)";
  EXPECT_EQ(Probe(&version, &why), PythonProbe::kRefused);
  EXPECT_NE(std::string(why).find("pre-release"), std::string::npos) << why;

  Export(fake_, fake_.version_hex() | 0xf0);
  g_symbols.erase("PyCode_Type");
  EXPECT_EQ(Probe(&version, &why), PythonProbe::kRefused);
  EXPECT_NE(std::string(why).find("PyCode_Type"), std::string::npos) << why;
}

INSTANTIATE_TEST_SUITE_P(AllLayouts, PythonProbeTest,
                         ::testing::ValuesIn(testing::kAllFakeVersions),
                         [](const auto& info) { return testing::FakeVersionName(info.param); });

TEST(PythonProbe, NoInterpreterIsAbsentNotRefused) {
  g_symbols.clear();
  uint32_t version = 0;
  const char* why = "";
  EXPECT_EQ(Probe(&version, &why), PythonProbe::kAbsent);
}

TEST(PythonProbe, RefusesVersionsWithoutALayout) {
  FakePython fake(FakeVersion::k311);
  uint32_t version = 0;
  const char* why = "";
  for (unsigned long hex : {0x030900f0ul, 0x030f00f0ul, 0x040000f0ul}) {
    Export(fake, hex);
    EXPECT_EQ(Probe(&version, &why), PythonProbe::kRefused) << std::hex << hex;
    EXPECT_EQ(version, hex & 0xffff0000u);
  }
}

TEST(PythonProbe, RefusesDebugOffsetsThatDoNotCheckOut) {
  for (FakeVersion v : {FakeVersion::k313, FakeVersion::k314}) {
    FakePython fake(v);
    PyLayout layout;
    const char* why = "";
    uint32_t major = 3, minor = (fake.version_hex() >> 16) & 0xff;
    std::vector<uint8_t> good(fake.runtime(), fake.runtime() + fake.runtime_size());
    ASSERT_TRUE(PyLayoutFromDebugOffsets(good.data(), major, minor, &layout, &why)) << why;

    std::vector<uint8_t> bad = good;
    bad[0] = 'y';  // cookie
    EXPECT_FALSE(PyLayoutFromDebugOffsets(bad.data(), major, minor, &layout, &why));
    EXPECT_NE(std::string(why).find("cookie"), std::string::npos) << why;
    EXPECT_FALSE(PyLayoutFromDebugOffsets(good.data(), major, minor + 1, &layout, &why));
    bad = good;
    bad[16] = 1;  // free_threaded
    EXPECT_FALSE(PyLayoutFromDebugOffsets(bad.data(), major, minor, &layout, &why));
    EXPECT_NE(std::string(why).find("free-threaded"), std::string::npos) << why;
    // thread_state.current_frame far outside the thread state.
    size_t thread_state = 8 * (3 + 3 + (v == FakeVersion::k313 ? 13 : 16));
    uint64_t far = 1u << 20;
    bad = good;
    std::memcpy(&bad[thread_state + 8 * 4], &far, 8);
    EXPECT_FALSE(PyLayoutFromDebugOffsets(bad.data(), major, minor, &layout, &why));
    EXPECT_NE(std::string(why).find("outside"), std::string::npos) << why;
  }
}

// The process-wide API, end to end on a fake 3.11: one notice for a refusal, then
// counted walks; once ready, walk + intern + drain.
TEST(PythonFrames, RefusalIsOneNoticeThenACounter) {
  FakePython fake(FakeVersion::k311);
  Export(fake, 0x030b02f0);
  g_symbols["_Py_ForgetReference"] = &g_symbols;
  g_notices.clear();
  EXPECT_EQ(InitPythonFramesForTesting(LookUp, Notice), PythonFramesState::kRefused);
  EXPECT_EQ(InitPythonFrames(Notice), PythonFramesState::kRefused) << "a refusal is final";
  ASSERT_EQ(g_notices.size(), 1u);
  EXPECT_NE(g_notices[0].find("CPython 3.11"), std::string::npos) << g_notices[0];
  uint64_t before = GetPythonFramesCounters().refused;
  PyFrameSample samples[4];
  EXPECT_EQ(WalkPythonFrames(samples, 4), 0);
  EXPECT_EQ(GetPythonFramesCounters().refused, before + 1);
}

TEST(PythonFrames, WalksInternsAndDrainsTheCallingThread) {
  FakePython fake(FakeVersion::k311);
  Export(fake, 0x030b02f0);
  ASSERT_EQ(InitPythonFramesForTesting(LookUp, Notice), PythonFramesState::kReady);
  EXPECT_EQ(PythonFramesVersion(), 0x030b0000u);
  FakeCodeSpec spec;
  spec.qualname = U"main";
  uint64_t main_code = fake.NewCode(spec);
  spec.qualname = U"Model.forward";
  spec.first_line = 40;
  spec.line_table = {0xE8, 0x04};
  uint64_t forward = fake.NewCode(spec);
  fake.PushFrame(main_code, 2, true);
  fake.PushFrame(forward, 0, false);

  PyFrameSample samples[8];
  uint64_t no_tstate = GetPythonFramesCounters().no_thread_state;
  std::thread([&] { EXPECT_EQ(WalkPythonFrames(samples, 8), 0); }).join();
  EXPECT_EQ(GetPythonFramesCounters().no_thread_state, no_tstate + 1);

  testing::SetFakeThreadState(fake.thread_state());
  ASSERT_EQ(WalkPythonFrames(samples, 8), 2);
  uint32_t ids[2] = {};
  EXPECT_EQ(InternPythonFrames(samples, 2, ids), 0);
  testing::SetFakeThreadState(0);
  std::vector<PyCodeInfo> codes;
  DrainNewPythonCodes(codes);
  ASSERT_GE(codes.size(), 2u);
  const PyCodeInfo& inner = codes[ids[0] - codes[0].id];
  EXPECT_EQ(inner.name, "Model.forward");
  EXPECT_EQ(ResolvePythonLine(inner, samples[0].instr_offset), 42);
  EXPECT_EQ(codes[ids[1] - codes[0].id].name, "main");
  EXPECT_TRUE(samples[1].flags & kPyFrameEntry);
}

}  // namespace
}  // namespace gpuperf::inject
