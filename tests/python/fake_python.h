// A synthetic CPython interpreter in plain memory, for testing the frame walker on every
// layout without that interpreter: thread state, frames, code, str and bytes objects are
// laid out by structs transcribed from each version's headers (fake_python.cc), not from
// the walker's offset tables, so a wrong table entry shows up as a wrong walk. 3.13 and
// 3.14 also get a _PyRuntime whose _Py_DebugOffsets are computed from those structs.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "cpython/python_runtime.h"

namespace gpuperf::testing {

using inject::PyLayout;
using inject::PyRuntimeView;

enum class FakeVersion { k310, k311, k312, k313, k314 };
inline constexpr FakeVersion kAllFakeVersions[] = {
    FakeVersion::k310, FakeVersion::k311, FakeVersion::k312, FakeVersion::k313, FakeVersion::k314};
// "py310" ... "py314", for test names.
const char* FakeVersionName(FakeVersion version);

struct FakeCodeSpec {
  std::u32string name = U"f";
  std::u32string qualname = U"f";  // ignored on 3.10, which has no co_qualname
  std::u32string filename = U"file.py";
  int32_t first_line = 1;
  std::vector<uint8_t> line_table;
  uint32_t code_units = 16;
  int32_t first_traceable = 0;  // 3.11+ _co_firsttraceable
  uint32_t code_version = 0;    // 3.12+ co_version
};

class FakePython {
 public:
  explicit FakePython(FakeVersion version);
  ~FakePython();
  FakePython(const FakePython&) = delete;
  FakePython& operator=(const FakePython&) = delete;

  FakeVersion version() const { return version_; }
  uint32_t version_hex() const;  // (major << 24) | (minor << 16)
  // The view the walker uses: the built-in layout (3.10-3.12) or the one read from this
  // fake's debug offsets (3.13+), with this fake's type objects and thread state getter.
  const PyRuntimeView& view() const { return view_; }
  // The fake _PyRuntime (3.13+; null before): its debug offsets can be damaged by tests.
  uint8_t* runtime() { return runtime_.get(); }
  size_t runtime_size() const { return runtime_size_; }

  uint64_t NewString(const std::u32string& text);  // compact, of the narrowest kind
  uint64_t NewBytes(const std::vector<uint8_t>& bytes);
  uint64_t NewCode(const FakeCodeSpec& spec);

  // Pushes a frame running `code` at `instr_offset` (code units; kPyNoInstruction for a
  // frame that has not started) on top of the thread's chain. `entry`: the frame is the
  // first of a native eval call (3.11 is_entry; 3.12+ an entry shim is pushed under it;
  // 3.10 ignores it). Returns the frame's address.
  uint64_t PushFrame(uint64_t code, uint32_t instr_offset, bool entry);
  uint64_t thread_state() const { return thread_state_; }

  // For malformed-memory tests.
  void SetPrevious(uint64_t frame, uint64_t previous);
  void SetFrameCode(uint64_t frame, uint64_t code);
  void SetFrameOwner(uint64_t frame, int8_t owner);  // 3.11+
  void SetStringLength(uint64_t str, uint64_t length);
  void SetStringState(uint64_t str, uint32_t state);
  void SetStringHash(uint64_t str, int64_t hash);  // the cached hash (-1: not computed)
  void SetBytesLength(uint64_t bytes, int64_t length);
  void SetCodeField(uint64_t code, int32_t offset, uint64_t value);
  void SetCodeField32(uint64_t code, int32_t offset, uint32_t value);

 private:
  uint64_t Allocate(size_t bytes);
  uint64_t NewFrame();
  void BuildRuntime();

  FakeVersion version_;
  PyRuntimeView view_;
  std::vector<std::unique_ptr<uint64_t[]>> blocks_;
  std::unique_ptr<uint8_t[]> runtime_;
  size_t runtime_size_ = 0;
  uint64_t thread_state_ = 0;
  uint64_t cframe_ = 0;     // 3.11/3.12
  uint64_t top_frame_ = 0;  // innermost
};

// The thread state getter of fakes: returns what SetFakeThreadState last set.
void SetFakeThreadState(uint64_t tstate);

}  // namespace gpuperf::testing
