// The part of stack_capture_python_tests that lives in libgpuperf_inject_capture_test.so,
// beside the capture code: the stats table (injection.cc defines it in the real library)
// and the synthetic interpreter, so the walker's state exists once, in the library. The
// walker and the fake have hidden symbols; the test reaches them through these functions.
#include <map>
#include <memory>
#include <string>

#include "inject/python/python_frames.h"
#include "inject/stack/stack_capture.h"
#include "inject/stats.h"
#include "python/fake_python.h"

namespace gpuperf::inject {

std::atomic<uint64_t> g_stats[kStatSlots];

namespace {

std::map<std::string, void*> g_symbols;
void* LookUp(const char* name) {
  auto it = g_symbols.find(name);
  return it == g_symbols.end() ? nullptr : it->second;
}
unsigned long g_py_version = 0x030c04f0;  // 3.12.4 final

}  // namespace

// Stack capture with frame pointers and Python frames, and a CPython 3.12 whose thread
// runs main (code unit 3, the entry frame) -> Model.forward (code unit 7). Returns the
// thread state, or 0 when the walker refused the fake.
__attribute__((visibility("default"))) uint64_t SetUpCaptureWithFakePython() {
  static auto* fake = new testing::FakePython(testing::FakeVersion::k312);
  g_symbols["PyGILState_GetThisThreadState"] = reinterpret_cast<void*>(fake->view().thread_state);
  g_symbols["PyCode_Type"] = reinterpret_cast<void*>(fake->view().code_type);
  g_symbols["PyUnicode_Type"] = reinterpret_cast<void*>(fake->view().unicode_type);
  g_symbols["PyBytes_Type"] = reinterpret_cast<void*>(fake->view().bytes_type);
  g_symbols["Py_Version"] = &g_py_version;
  InitStackCapture(64, /*frame_pointers=*/true, /*python=*/true);
  if (InitPythonFramesForTesting(LookUp, nullptr) != PythonFramesState::kReady) return 0;
  testing::FakeCodeSpec spec;
  spec.qualname = U"main";
  const uint64_t main_code = fake->NewCode(spec);
  spec.qualname = U"Model.forward";
  const uint64_t forward = fake->NewCode(spec);
  fake->PushFrame(main_code, 3, /*entry=*/true);
  fake->PushFrame(forward, 7, /*entry=*/false);
  return fake->thread_state();
}

// What the fake's PyGILState_GetThisThreadState returns from now on (0: no thread state).
__attribute__((visibility("default"))) void SetFakeThreadStateForTest(uint64_t tstate) {
  testing::SetFakeThreadState(tstate);
}

}  // namespace gpuperf::inject
