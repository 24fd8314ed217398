#include "analyze/symbols/python_stacks.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "cpython/python_lines.h"
#include "gpuperf/python_frame_word.h"

namespace gpuperf {
namespace {

// A synthetic native stack: one PC per entry, innermost first, each "function@module"
// (a PC with an inlined call is "outer|inner@module").
struct NativeStack {
  std::vector<std::vector<Frame>> pcs;
  std::vector<std::string> text;  // owns what the frames view

  explicit NativeStack(const std::vector<std::string>& entries) : text(entries) {
    for (const std::string& entry : text) {
      const std::string_view view(entry);
      const size_t at = view.find('@');
      const std::string_view module = view.substr(at + 1);
      std::vector<Frame> frames;
      std::string_view functions = view.substr(0, at);
      for (size_t bar; (bar = functions.find('|')) != std::string_view::npos;) {
        frames.push_back({functions.substr(0, bar), {}, 0, module, false});
        functions.remove_prefix(bar + 1);
      }
      frames.push_back({functions, {}, 0, module, frames.size() > 0});
      pcs.push_back(std::move(frames));
    }
  }
  std::vector<std::span<const Frame>> spans() const {
    return std::vector<std::span<const Frame>>(pcs.begin(), pcs.end());
  }
};

// Python frames innermost first; a trailing '!' marks an entry frame.
std::vector<PythonStackFrame> Python(const std::vector<std::string_view>& names) {
  std::vector<PythonStackFrame> out;
  for (std::string_view name : names) {
    PythonStackFrame frame;
    frame.entry = name.ends_with('!');
    if (frame.entry) name.remove_suffix(1);
    frame.frame.function = name;
    frame.frame.file = "/src/model.py";
    frame.frame.kind = FrameKind::kPython;
    out.push_back(frame);
  }
  return out;
}

// The merged stack, outermost first, as "name" (Python frames "py:name").
std::vector<std::string> Merge(const NativeStack& native,
                               const std::vector<PythonStackFrame>& python, bool internals) {
  std::vector<Frame> frames;
  const auto spans = native.spans();
  MergePythonFrames(spans, python, internals, frames);
  std::vector<std::string> out;
  for (const Frame& f : frames) {
    out.push_back((f.kind == FrameKind::kPython ? "py:" : "") + std::string(f.function));
  }
  return out;
}

using Names = std::vector<std::string>;

// A C extension called from Python calls back into Python (a second eval frame): each eval
// frame takes the Python frames up to its entry frame.
const NativeStack kTwoEvalFrames(
    {"ext_launch@ext.so", "cfunction_call@libpython3.11.so.1.0",
     "_PyEval_EvalFrameDefault@libpython3.11.so.1.0", "PyObject_Call@libpython3.11.so.1.0",
     "callback_trampoline@ext.so", "_PyEval_EvalFrameDefault@libpython3.11.so.1.0",
     "PyEval_EvalCode@libpython3.11.so.1.0", "main@python3.11", "__libc_start_main@libc.so.6"});
const auto kTwoEntries = Python({"leaf_fn", "callback!", "Model.forward", "main", "<module>!"});

TEST(PythonStacks, EachEvalFrameRunsThePythonFramesUpToItsEntryFrame) {
  EXPECT_EQ(Merge(kTwoEvalFrames, kTwoEntries, false),
            (Names{"__libc_start_main", "py:<module>", "py:main", "py:Model.forward",
                   "callback_trampoline", "py:callback", "py:leaf_fn", "ext_launch"}));
}

TEST(PythonStacks, InternalsKeepTheInterpreterFramesAroundThePythonFrames) {
  EXPECT_EQ(Merge(kTwoEvalFrames, kTwoEntries, true),
            (Names{"__libc_start_main", "main", "PyEval_EvalCode", "_PyEval_EvalFrameDefault",
                   "py:<module>", "py:main", "py:Model.forward", "callback_trampoline",
                   "PyObject_Call", "_PyEval_EvalFrameDefault", "py:callback", "py:leaf_fn",
                   "cfunction_call", "ext_launch"}));
}

TEST(PythonStacks, ThreePointTenEveryFrameIsAnEntry) {
  // 3.10: one native eval call per Python frame; _PyEval_EvalFrame (inlined into
  // _PyEval_Vector) is not an eval frame of its own. The call machinery inlined into the
  // eval loop at its call site (call_function) belongs inside the Python frame that called.
  NativeStack native({"ext_launch@ext.so",
                      "_PyEval_EvalFrameDefault|call_function@libpython3.10.so",
                      "_PyEval_Vector|_PyEval_EvalFrame@libpython3.10.so",
                      "_PyEval_EvalFrameDefault|call_function@libpython3.10.so",
                      "_PyEval_Vector|_PyEval_EvalFrame@libpython3.10.so",
                      "_PyEval_EvalFrameDefault@libpython3.10.so", "Py_RunMain@libpython3.10.so"});
  const auto python = Python({"helper!", "forward!", "main!"});
  EXPECT_EQ(Merge(native, python, false),
            (Names{"py:main", "py:forward", "py:helper", "ext_launch"}));
  EXPECT_EQ(Merge(native, python, true),
            (Names{"Py_RunMain", "_PyEval_EvalFrameDefault", "py:main", "_PyEval_Vector",
                   "_PyEval_EvalFrame", "_PyEval_EvalFrameDefault", "py:forward", "call_function",
                   "_PyEval_Vector", "_PyEval_EvalFrame", "_PyEval_EvalFrameDefault", "py:helper",
                   "call_function", "ext_launch"}));
}

TEST(PythonStacks, FramesLeftOverGoOutermost) {
  // The native stack was cut at its depth limit below the first eval frame.
  NativeStack native({"ext_launch@ext.so", "_PyEval_EvalFrameDefault@libpython3.12.so"});
  EXPECT_EQ(Merge(native, Python({"a", "b!", "c", "d!"}), false),
            (Names{"py:d", "py:c", "py:b", "py:a", "ext_launch"}));
}

TEST(PythonStacks, WithoutEvalNamesPythonFramesGoWhereTheInterpreterBegins) {
  // An interpreter without symbols: its frames are module+offset only.
  NativeStack native({"ext_launch@ext.so", "python3.11+0x1234@python3.11",
                      "python3.11+0x5678@python3.11", "__libc_start_main@libc.so.6"});
  const auto python = Python({"helper", "Model.forward", "main", "<module>!"});
  EXPECT_EQ(Merge(native, python, false), (Names{"__libc_start_main", "py:<module>", "py:main",
                                                 "py:Model.forward", "py:helper", "ext_launch"}));
  EXPECT_EQ(Merge(native, python, true),
            (Names{"__libc_start_main", "python3.11+0x5678", "python3.11+0x1234", "py:<module>",
                   "py:main", "py:Model.forward", "py:helper", "ext_launch"}));
}

TEST(PythonStacks, WithoutAnyInterpreterFramePythonFramesGoOutermost) {
  NativeStack native({"ext_launch@ext.so", "0x7f00@"});
  EXPECT_EQ(Merge(native, Python({"helper", "main!"}), false),
            (Names{"py:main", "py:helper", "0x7f00", "ext_launch"}));
}

TEST(PythonStacks, WhatCountsAsInterpreter) {
  EXPECT_TRUE(IsEvalLoopFunction("_PyEval_EvalFrameDefault"));
  EXPECT_FALSE(IsEvalLoopFunction("_PyEval_Vector"));
  EXPECT_FALSE(IsEvalLoopFunction("PyEval_EvalCode"));
  EXPECT_FALSE(IsEvalLoopFunction("_PyEval_EvalFrame"));
  EXPECT_FALSE(IsEvalLoopFunction("PyEval_EvalFrame"));
  for (std::string_view module : {"libpython3.11.so.1.0", "/usr/lib/libpython3.12.so", "python3",
                                  "python3.11", "/usr/bin/python3.13t", "python"}) {
    EXPECT_TRUE(IsInterpreterModule(module)) << module;
  }
  for (std::string_view module : {"libtorch_python.so", "python-config", "pythonista",
                                  "_C.cpython-311-x86_64-linux-gnu.so", "libc.so.6", ""}) {
    EXPECT_FALSE(IsInterpreterModule(module)) << module;
  }
  EXPECT_TRUE(IsAutogradThreadName("pt_autograd_0"));
  EXPECT_FALSE(IsAutogradThreadName("python3"));
}

// --- through SymbolTable: the one function that turns a recorded stack into frames ---

class SymbolTableWithPython : public ::testing::Test {
 protected:
  static constexpr uint32_t kPid = 42;
  StringId Id(const std::string& text) {
    strings_.push_back(text);
    return static_cast<StringId>(strings_.size() - 1);
  }
  void Symbol(SymbolTable& table, uint64_t pc, const std::string& function,
              const std::string& module) {
    table.AddSymbol(SymbolRecord{kPid, pc, {{Id(function), 0, 0, Id(module), pc & 0xfff}}});
  }
  void SetUp() override { strings_.assign(1, ""); }
  std::vector<Frame> Resolve(SymbolTable& table, const std::vector<uint64_t>& pcs,
                             uint32_t tid = 0) {
    std::vector<Frame> frames;
    table.ResolveStack(StackRecord{kPid, 1, pcs}, frames, tid);
    return frames;
  }
  std::vector<std::string> strings_;
};

TEST_F(SymbolTableWithPython, NamesFilesAndLinesFromTheCopiedCodeObjects) {
  strings_.reserve(64);  // the table keeps views into it
  SymbolTable table(strings_);
  Symbol(table, 0x1000, "ext_launch", "/x/ext.so");
  Symbol(table, 0x2000, "_PyEval_EvalFrameDefault", "/usr/lib/libpython3.10.so.1.0");
  Symbol(table, 0x3000, "Py_RunMain", "/usr/lib/libpython3.10.so.1.0");
  // 3.10 line tables: (bytes covered, line delta) pairs; 2 bytes per code unit.
  PythonCodeRecord forward{kPid,
                           1,
                           Id("Model.forward"),
                           Id("/src/model.py"),
                           20,
                           0x030a0000,
                           1,
                           4,
                           std::string("\x04\x01\x04\x02", 4)};
  PythonCodeRecord main{kPid,       2, Id("main"), Id("/src/train.py"),       5,
                        0x030a0000, 1, 2,          std::string("\x04\x03", 2)};
  table.AddAll({}, {}, std::vector<PythonCodeRecord>{forward, main},
               std::vector<ThreadRecord>{{kPid, 7, Id("pt_autograd_0")}, {kPid, 8, Id("main")}});
  const std::vector<uint64_t> pcs = {0x1000, 0x2000, 0x3000, MakePythonFrameWord(1, 3, true),
                                     MakePythonFrameWord(2, 0, false)};
  std::vector<Frame> frames = Resolve(table, pcs);
  ASSERT_EQ(frames.size(), 3u);
  EXPECT_EQ(frames[0].function, "main");
  EXPECT_EQ(frames[0].kind, FrameKind::kPython);
  EXPECT_EQ(frames[0].file, "/src/train.py");
  EXPECT_EQ(frames[0].line, 8u);
  EXPECT_EQ(frames[1].function, "Model.forward");
  EXPECT_EQ(frames[1].file, "/src/model.py");
  EXPECT_EQ(frames[1].line, 23u);  // unit 3: past the first 4 bytes, +1 then +2
  EXPECT_EQ(frames[2].function, "ext_launch");
  EXPECT_EQ(frames[2].kind, FrameKind::kNative);

  // An autograd thread's stack gets its root label; another thread's does not.
  frames = Resolve(table, {0x1000}, 7);
  ASSERT_EQ(frames.size(), 2u);
  EXPECT_EQ(frames[0].function, kAutogradBackwardLabel);
  EXPECT_EQ(frames[0].kind, FrameKind::kLabel);
  EXPECT_EQ(Resolve(table, {0x1000}, 8).size(), 1u);

  // A code id the trace does not define still takes its place.
  frames = Resolve(table, {0x1000, 0x2000, MakePythonFrameWord(9, 0, true)});
  ASSERT_EQ(frames.size(), 2u);
  EXPECT_EQ(frames[0].function, "[unknown Python code]");
}

TEST_F(SymbolTableWithPython, StacksWithoutPythonFramesKeepTheInterpreterFrames) {
  strings_.reserve(64);
  SymbolTable table(strings_);
  Symbol(table, 0x1000, "ext_launch", "/x/ext.so");
  Symbol(table, 0x2000, "_PyEval_EvalFrameDefault", "/usr/lib/libpython3.11.so.1.0");
  std::vector<Frame> frames = Resolve(table, {0x1000, 0x2000});
  ASSERT_EQ(frames.size(), 2u);
  EXPECT_EQ(frames[0].function, "_PyEval_EvalFrameDefault");
  EXPECT_EQ(frames[1].function, "ext_launch");
}

// 3.11+ incomplete frames (PythonFrameIsIncomplete) are in the recorded stack and left
// out here: CPython's tracebacks do not show them either.
TEST_F(SymbolTableWithPython, IncompleteFramesAreLeftOutWhenRead) {
  strings_.reserve(64);
  SymbolTable table(strings_);
  Symbol(table, 0x1000, "ext_launch", "/x/ext.so");
  Symbol(table, 0x2000, "_PyEval_EvalFrameDefault", "/usr/lib/libpython3.12.so.1.0");
  Symbol(table, 0x3000, "_PyEval_EvalFrameDefault", "/usr/lib/libpython3.12.so.1.0");
  auto code = [&](uint32_t id, const char* name, uint32_t version, uint32_t first_traceable) {
    PythonCodeRecord record{kPid, id, Id(name), Id("/src/a.py"), 10, version, 0, 20, ""};
    record.first_traceable = first_traceable;
    table.AddPythonCode(record);
  };
  code(1, "inner", 0x030c0000, 2);
  code(2, "trampoline", 0x030c0000, 4);
  code(3, "gen", 0x030c0000, 4);
  code(4, "main", 0x030c0000, 2);
  code(5, "old", 0x030c0000, 0);  // a record from before first_traceable was kept
  code(6, "py310", 0x030a0000, 0);
  const uint64_t not_started = 0xffffffffu;
  std::vector<Frame> frames =
      Resolve(table, {0x1000, 0x2000, 0x3000, MakePythonFrameWord(1, 5, false),
                      MakePythonFrameWord(2, 3, true),             // before unit 4: left out
                      MakePythonFrameWord(3, 1, false, true),      // a generator's: shown
                      MakePythonFrameWord(1, not_started, false),  // not started: left out
                      MakePythonFrameWord(4, 2, true)});
  std::vector<std::string_view> names;
  for (const Frame& frame : frames) names.push_back(frame.function);
  // (The trampoline's entry mark moved to `inner`, the frame inside it.)
  EXPECT_EQ(names, (std::vector<std::string_view>{"main", "gen", "inner", "ext_launch"}));

  // Old records: first_traceable 0, so only a negative offset could drop a frame; 3.10
  // frames that have not started are shown (at their first line).
  frames = Resolve(table, {0x1000, 0x2000, MakePythonFrameWord(5, 0, false),
                           MakePythonFrameWord(6, not_started, true)});
  ASSERT_EQ(frames.size(), 3u);
  EXPECT_EQ(frames[0].function, "py310");
  EXPECT_EQ(frames[0].line, 10u);
  EXPECT_EQ(frames[1].function, "old");

  // A stack whose Python frames are all incomplete reads as one without Python frames.
  frames = Resolve(table, {0x1000, 0x2000, MakePythonFrameWord(2, 0, true)});
  ASSERT_EQ(frames.size(), 2u);
  EXPECT_EQ(frames[0].function, "_PyEval_EvalFrameDefault");
  EXPECT_EQ(frames[1].function, "ext_launch");
}

TEST(PythonLines, IncompleteIsBeforeTheFirstTraceableUnitFrom311) {
  EXPECT_TRUE(PythonFrameIsIncomplete(0x030b0000, 3, 2, false));
  EXPECT_FALSE(PythonFrameIsIncomplete(0x030b0000, 3, 3, false));
  EXPECT_FALSE(PythonFrameIsIncomplete(0x030b0000, 3, 2, true)) << "a generator's frame";
  EXPECT_TRUE(PythonFrameIsIncomplete(0x030e0000, 0, 0xffffffffu, true)) << "before the bytecode";
  EXPECT_TRUE(PythonFrameIsIncomplete(0x030d0000, 0, 0xfffffffeu, false));
  EXPECT_FALSE(PythonFrameIsIncomplete(0x030a0000, 3, 0xffffffffu, false)) << "3.10";
}

TEST_F(SymbolTableWithPython, InternalsOptionKeepsTheEvalFrame) {
  strings_.reserve(64);
  SymbolTable table(strings_, StackDisplayOptions{.python_internals = true});
  Symbol(table, 0x1000, "ext_launch", "/x/ext.so");
  Symbol(table, 0x2000, "_PyEval_EvalFrameDefault", "/usr/lib/libpython3.11.so.1.0");
  table.AddPythonCode({kPid, 1, Id("helper"), Id("/src/a.py"), 3, 0x030b0000, 0, 0, ""});
  std::vector<Frame> frames = Resolve(table, {0x1000, 0x2000, MakePythonFrameWord(1, 0, true)});
  ASSERT_EQ(frames.size(), 3u);
  EXPECT_EQ(frames[0].function, "_PyEval_EvalFrameDefault");
  EXPECT_EQ(frames[1].function, "helper");
  EXPECT_EQ(frames[1].line, 0u);  // no line table: unknown
  EXPECT_EQ(frames[2].function, "ext_launch");
}

}  // namespace
}  // namespace gpuperf
