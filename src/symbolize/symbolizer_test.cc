#include "symbolize/symbolizer.h"

#include <dlfcn.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "analyze/symbols/symbol_table.h"
#include "base/demangle.h"
#include "gpuperf/python_frame_word.h"
#include "gpuperf/trace.h"
#include "gpuperf/trace_writer.h"
#include "inject/stack/module_table.h"
#include "support/temp_dir.h"
#include "unwind/unwinder.h"

// A known call chain: Outer (a real function) -> Middle (always inlined into Outer) ->
// Leaf (a real function) -> CaptureStack. Each call records its own source line on the
// same line, for the symbolizer's answer to be checked against.
#if defined(__clang__)
#define GP_TEST_NOINLINE __attribute__((noinline))
#else
#define GP_TEST_NOINLINE __attribute__((noipa))
#endif

namespace gpuperf {
namespace {

volatile int g_sink = 0;
uint32_t g_leaf_capture_line = 0, g_middle_call_line = 0, g_outer_call_line = 0;

GP_TEST_NOINLINE int Leaf(uint64_t* pcs, int max) {
  int n = (g_leaf_capture_line = __LINE__, CaptureStack(pcs, max));
  g_sink = g_sink + n;  // no tail call
  return n;
}

__attribute__((always_inline)) inline int Middle(uint64_t* pcs, int max) {
  int n = (g_middle_call_line = __LINE__, Leaf(pcs, max));
  g_sink = g_sink + 1;
  return n;
}

GP_TEST_NOINLINE int Outer(uint64_t* pcs, int max) {
  g_sink = g_sink + 2;
  int n = (g_outer_call_line = __LINE__, Middle(pcs, max));
  g_sink = g_sink + 3;
  return n;
}

uint32_t Pid() {
  return static_cast<uint32_t>(getpid());
}

// Writes a trace of this process with the given stacks and this process's module table;
// `build_id_override` replaces every recorded build-id (to fake a rebuilt binary), and
// `path_override` maps a module path to another file.
void WriteTrace(const std::string& file, const std::vector<std::vector<uint64_t>>& stacks,
                const std::string& build_id_override = "",
                const std::pair<std::string, std::string>& path_override = {}) {
  auto writer = TraceWriter::Create(file);
  ASSERT_TRUE(writer.ok()) << writer.status().message();
  std::vector<LoadedModule> modules = EnumerateLoadedModules();
  for (LoadedModule& m : modules) {
    if (!build_id_override.empty()) m.build_id = build_id_override;
    if (!path_override.first.empty() && m.path == path_override.first)
      m.path = path_override.second;
  }
  TraceWriter& w = **writer;
  for (const ModuleRecord& r :
       ToModuleRecords(modules, Pid(), [&](std::string_view s) { return w.InternString(s); })) {
    w.Add(r);
  }
  StackId id = 1;
  for (const auto& pcs : stacks) w.AddStack(StackRecord{Pid(), id++, pcs});
  ASSERT_TRUE(w.Close().ok());
}

std::vector<uint64_t> CaptureKnownChain() {
  uint64_t pcs[64];
  int n = Outer(pcs, 64);
  return std::vector<uint64_t>(pcs, pcs + n);
}

// A resolved frame that owns its text (the SymbolTable's views die with the table).
struct OwnedFrame {
  std::string function, short_name, file, module;
  uint32_t line = 0;
  bool inlined = false;
};

// Loads a symbolized trace and resolves its first stack the way the analysis does,
// outermost frame first.
std::vector<OwnedFrame> ResolveStack(const std::string& file, size_t id) {
  std::vector<OwnedFrame> out;
  auto trace = LoadTrace(file);
  EXPECT_TRUE(trace.ok()) << trace.status().message();
  if (!trace.ok() || trace->stacks.size() <= id) return out;
  SymbolTable table(trace->strings);
  for (const ModuleRecord& m : trace->modules) table.AddModule(m);
  for (const SymbolRecord& s : trace->symbols) table.AddSymbol(s);
  std::vector<Frame> frames;
  table.ResolveStack(trace->stacks[id], frames);
  for (const Frame& f : frames) {
    out.push_back({std::string(f.function), ShortName(f.function), std::string(f.file),
                   std::string(f.module), f.line, f.inlined});
  }
  return out;
}

std::vector<OwnedFrame> ResolveFirstStack(const std::string& file) {
  return ResolveStack(file, 1);
}

bool EndsWith(std::string_view text, std::string_view suffix) {
  return text.ends_with(suffix);
}

TEST(Symbolizer, ResolvesAKnownCallChainWithInlinedFrame) {
  testing::TempDir dir;
  std::string file = dir.File("chain.gpt");
  WriteTrace(file, {CaptureKnownChain()});

  SymbolizeSummary summary;
  Status status = SymbolizeTraceFile(file, {}, &summary);
  ASSERT_TRUE(status.ok()) << status.message();
  EXPECT_EQ(summary.modules_build_id_mismatch, 0u);
  EXPECT_GT(summary.with_source, 3u);
  EXPECT_EQ(summary.symbols_written, summary.pcs);
  EXPECT_EQ(summary.outside_modules, 0u);

  std::vector<OwnedFrame> frames = ResolveFirstStack(file);
  ASSERT_GE(frames.size(), 6u);
  // Outermost first: ... TestBody, CaptureKnownChain, Outer, Middle (inlined), Leaf.
  size_t n = frames.size();
  EXPECT_EQ(frames[n - 1].short_name, "gpuperf::(anonymous namespace)::Leaf");
  EXPECT_EQ(frames[n - 2].short_name, "gpuperf::(anonymous namespace)::Middle");
  EXPECT_EQ(frames[n - 3].short_name, "gpuperf::(anonymous namespace)::Outer");
  EXPECT_EQ(frames[n - 4].short_name, "gpuperf::(anonymous namespace)::CaptureKnownChain");
  EXPECT_EQ(frames[n - 5].short_name,
            "gpuperf::(anonymous namespace)::"
            "Symbolizer_ResolvesAKnownCallChainWithInlinedFrame_Test::TestBody");
  // The outlined functions carry their signature (from the linkage name).
  EXPECT_EQ(frames[n - 1].function, "gpuperf::(anonymous namespace)::Leaf(unsigned long*, int)");
  const OwnedFrame& leaf = frames[n - 1];
  const OwnedFrame& middle = frames[n - 2];
  const OwnedFrame& outer = frames[n - 3];
  EXPECT_FALSE(leaf.inlined);
  EXPECT_TRUE(middle.inlined);
  EXPECT_FALSE(outer.inlined);
  for (const OwnedFrame* f : {&leaf, &middle, &outer}) {
    EXPECT_TRUE(EndsWith(f->file, "src/symbolize/symbolizer_test.cc")) << f->file;
    EXPECT_NE(f->module.find("gpuperf_tests"), std::string::npos) << f->module;
  }
  EXPECT_EQ(leaf.line, g_leaf_capture_line);
  EXPECT_EQ(middle.line, g_middle_call_line);
  EXPECT_EQ(outer.line, g_outer_call_line);
  // Deeper, the stack leaves the test binary: libc's start code calls main.
  bool through_libc = false;
  for (const OwnedFrame& f : frames) through_libc |= f.module.find("libc.so") != std::string::npos;
  EXPECT_TRUE(through_libc);
}

// Python frames in a stack are code ids, not addresses: nothing is looked up for them and
// no SymbolRecord names them; the native PCs around them are symbolized as usual.
TEST(Symbolizer, LeavesPythonFrameWordsAlone) {
  testing::TempDir dir;
  std::string file = dir.File("python.gpt");
  std::vector<uint64_t> native = CaptureKnownChain();
  std::vector<uint64_t> mixed = native;
  mixed.push_back(MakePythonFrameWord(1, 12, false));
  mixed.push_back(MakePythonFrameWord(2, 0, true));
  WriteTrace(file, {mixed});
  SymbolizeSummary summary;
  ASSERT_TRUE(SymbolizeTraceFile(file, {}, &summary).ok());
  EXPECT_EQ(summary.pcs, native.size());
  EXPECT_EQ(summary.outside_modules, 0u);
  auto trace = LoadTrace(file);
  ASSERT_TRUE(trace.ok());
  EXPECT_EQ(trace->symbols.size(), native.size());
  for (const SymbolRecord& symbol : trace->symbols) EXPECT_FALSE(IsPythonFrameWord(symbol.pc));
}

TEST(Symbolizer, IsIdempotentAndSkipsSymbolizedPcs) {
  testing::TempDir dir;
  std::string file = dir.File("again.gpt");
  WriteTrace(file, {CaptureKnownChain()});
  SymbolizeSummary first, second;
  ASSERT_TRUE(SymbolizeTraceFile(file, {}, &first).ok());
  auto size_after_first = std::filesystem::file_size(file);
  ASSERT_TRUE(SymbolizeTraceFile(file, {}, &second).ok());
  EXPECT_EQ(second.pcs, first.pcs);
  EXPECT_EQ(second.already_symbolized, first.with_source + first.function_only);
  EXPECT_EQ(second.symbols_written, 0u);
  EXPECT_EQ(std::filesystem::file_size(file), size_after_first);
}

TEST(Symbolizer, BuildIdMismatchIsReportedAndGivesModuleOffsets) {
  testing::TempDir dir;
  std::string file = dir.File("rebuilt.gpt");
  std::vector<uint64_t> pcs = CaptureKnownChain();
  WriteTrace(file, {pcs}, "00112233445566778899aabbccddeeff00112233");
  SymbolizeSummary summary;
  ASSERT_TRUE(SymbolizeTraceFile(file, {}, &summary).ok());
  EXPECT_EQ(summary.modules_build_id_mismatch, summary.modules_used);
  EXPECT_EQ(summary.with_source + summary.function_only, 0u);
  ASSERT_FALSE(summary.warnings.empty());
  EXPECT_NE(summary.warnings[0].find("build-id"), std::string::npos) << summary.warnings[0];
  EXPECT_NE(summary.ToString().find("build-id mismatch"), std::string::npos);

  std::vector<OwnedFrame> frames = ResolveFirstStack(file);
  ASSERT_EQ(frames.size(), pcs.size());
  // The innermost PC is in this test binary: "gpuperf_tests+0x<offset>".
  std::vector<LoadedModule> modules = EnumerateLoadedModules();
  const LoadedModule* self = FindModule(modules, pcs[0]);
  ASSERT_NE(self, nullptr);
  char expected[256];
  std::snprintf(expected, sizeof(expected), "%s+0x%" PRIx64,
                self->path.substr(self->path.rfind('/') + 1).c_str(), pcs[0] - self->load_bias);
  EXPECT_EQ(frames.back().function, std::string(expected));
}

TEST(Symbolizer, ModuleWithoutDebugInfoGivesSymbolTableNames) {
  std::vector<LoadedModule> modules = EnumerateLoadedModules();
  std::vector<uint64_t> pcs = CaptureKnownChain();
  const LoadedModule* self = FindModule(modules, pcs[0]);
  ASSERT_NE(self, nullptr);
  testing::TempDir dir;
  std::string stripped = dir.File("stripped_copy");
  std::string command = "objcopy --strip-debug '" + self->path + "' '" + stripped + "' 2>/dev/null";
  if (std::system(command.c_str()) != 0) GTEST_SKIP() << "objcopy not available";

  std::string file = dir.File("nodebug.gpt");
  WriteTrace(file, {pcs}, "", {self->path, stripped});
  SymbolizeSummary summary;
  ASSERT_TRUE(SymbolizeTraceFile(file, {}, &summary).ok());
  EXPECT_EQ(summary.modules_build_id_mismatch, 0u);  // strip keeps the build-id
  EXPECT_GE(summary.function_only, 3u);

  std::vector<OwnedFrame> frames = ResolveFirstStack(file);
  size_t n = frames.size();
  ASSERT_GE(n, 3u);
  // No inline frames and no lines without DWARF: Leaf, then Outer (Middle is gone).
  EXPECT_EQ(frames[n - 1].short_name, "gpuperf::(anonymous namespace)::Leaf");
  EXPECT_EQ(frames[n - 2].short_name, "gpuperf::(anonymous namespace)::Outer");
  EXPECT_TRUE(frames[n - 1].file.empty());
  EXPECT_EQ(frames[n - 1].line, 0u);
}

// A system library without debug info: a PC inside malloc and one inside qsort, taken in
// this process, get their names from the ELF symbol table (.dynsym only, for a stripped
// libc), not "libc.so.6+0x..". The trace points at a copy of libc without its build-id
// note and debuglink, so that installed separate debug info (libc6-dbg) cannot answer.
TEST(Symbolizer, SystemLibraryWithoutDebugInfoGivesDynamicSymbolNames) {
  std::vector<uint64_t> pcs;
  for (const char* name : {"malloc", "qsort"}) {
    void* address = dlsym(RTLD_DEFAULT, name);
    ASSERT_NE(address, nullptr) << name;
    pcs.push_back(reinterpret_cast<uint64_t>(address) + 4);  // inside even an 8-byte stub
  }
  std::vector<LoadedModule> modules = EnumerateLoadedModules();
  const LoadedModule* libc = FindModule(modules, pcs[0]);
  ASSERT_NE(libc, nullptr);
  ASSERT_EQ(FindModule(modules, pcs[1]), libc);
  ASSERT_NE(libc->path.find("libc"), std::string::npos) << libc->path;

  testing::TempDir dir;
  std::string copy = dir.File("libc_without_debug_info.so");
  std::string command =
      "objcopy --remove-section=.note.gnu.build-id --remove-section=.gnu_debuglink"
      " --strip-debug '" +
      libc->path + "' '" + copy + "' 2>/dev/null";
  if (std::system(command.c_str()) != 0) GTEST_SKIP() << "objcopy not available";
  std::string file = dir.File("libc.gpt");
  WriteTrace(file, {{pcs[0]}, {pcs[1]}}, "", {libc->path, copy});
  SymbolizeOptions options;
  options.verify_build_id = false;  // the copy has no build-id
  SymbolizeSummary summary;
  ASSERT_TRUE(SymbolizeTraceFile(file, options, &summary).ok());
  EXPECT_EQ(summary.unresolved, 0u) << summary.ToString();
  EXPECT_EQ(summary.function_only, 2u) << summary.ToString();

  std::vector<std::string> names;
  for (size_t id : {1, 2}) {
    std::vector<OwnedFrame> frames = ResolveStack(file, id);
    ASSERT_EQ(frames.size(), 1u);
    EXPECT_TRUE(frames[0].file.empty());
    names.push_back(frames[0].short_name);
  }
  EXPECT_EQ(names, (std::vector<std::string>{"malloc", "qsort"}));
}

// With libc's separate debug info installed (libc6-dbg), a PC inside qsort reads "qsort"
// with a source file, not glibc's internal alias "__GI_qsort" (DWARF's linkage name).
TEST(Symbolizer, CFunctionsKeepTheirSourceNameOverAnAsmAlias) {
  void* address = dlsym(RTLD_DEFAULT, "qsort");
  ASSERT_NE(address, nullptr);
  uint64_t pc = reinterpret_cast<uint64_t>(address) + 4;
  testing::TempDir dir;
  std::string file = dir.File("libc_dbg.gpt");
  WriteTrace(file, {{pc}});
  SymbolizeSummary summary;
  ASSERT_TRUE(SymbolizeTraceFile(file, {}, &summary).ok());
  if (summary.with_source == 0) GTEST_SKIP() << "no debug info for libc: " << summary.ToString();
  std::vector<OwnedFrame> frames = ResolveFirstStack(file);
  ASSERT_FALSE(frames.empty());
  EXPECT_EQ(frames.back().short_name, "qsort");
  EXPECT_FALSE(frames.back().file.empty());
}

// llvm-symbolizer as an independent oracle: the function names (inline chain innermost
// first) of each address, all in one run.
std::vector<std::vector<std::string>> LlvmSymbolizerNames(const std::string& object,
                                                          const std::vector<uint64_t>& addresses) {
  std::string command = "llvm-symbolizer --obj='" + object + "' --functions=linkage";
  for (uint64_t address : addresses) {
    char hex[32];
    std::snprintf(hex, sizeof(hex), " 0x%" PRIx64, address);
    command += hex;
  }
  std::vector<std::vector<std::string>> result(1);
  FILE* pipe = popen((command + " 2>/dev/null").c_str(), "r");
  if (pipe == nullptr) return {};
  char line[4096];
  bool function_line = true;  // each address: pairs of "function" and "file:line:col" lines
  while (std::fgets(line, sizeof(line), pipe) != nullptr) {
    std::string text(line);
    while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.pop_back();
    if (text.empty()) {  // a blank line ends one address
      result.emplace_back();
      function_line = true;
      continue;
    }
    if (function_line) result.back().push_back(ShortName(Demangle(text)));
    function_line = !function_line;
  }
  pclose(pipe);
  while (!result.empty() && result.back().empty()) result.pop_back();
  return result;
}

// Our names may be more qualified than llvm-symbolizer's: it gives an inlined function
// without a linkage name its bare name, we add its namespaces.
bool SameFunction(const std::string& ours, const std::string& oracle) {
  return ours == oracle || ours.ends_with("::" + oracle);
}

TEST(Symbolizer, AgreesWithLlvmSymbolizerOnFunctionNamesAndInlines) {
  if (std::system("llvm-symbolizer --version >/dev/null 2>&1") != 0) {
    GTEST_SKIP() << "llvm-symbolizer not installed";
  }
  testing::TempDir dir;
  std::string file = dir.File("oracle.gpt");
  std::vector<uint64_t> pcs = CaptureKnownChain();
  WriteTrace(file, {pcs});
  ASSERT_TRUE(SymbolizeTraceFile(file, {}, nullptr).ok());
  auto loaded = LoadTrace(file);
  ASSERT_TRUE(loaded.ok());
  std::vector<LoadedModule> modules = EnumerateLoadedModules();
  const LoadedModule* self = FindModule(modules, pcs[0]);
  ASSERT_NE(self, nullptr);
  std::vector<const SymbolRecord*> ours;
  std::vector<uint64_t> addresses;
  for (const SymbolRecord& symbol : loaded->symbols) {
    if (FindModule(modules, symbol.pc) != self) continue;
    ours.push_back(&symbol);
    addresses.push_back(symbol.pc - self->load_bias - 1);  // return addresses
  }
  ASSERT_GE(ours.size(), 5u);
  std::vector<std::vector<std::string>> oracle = LlvmSymbolizerNames(self->path, addresses);
  ASSERT_EQ(oracle.size(), ours.size());
  for (size_t i = 0; i < ours.size(); ++i) {
    const auto& frames = ours[i]->frames;
    ASSERT_EQ(frames.size(), oracle[i].size()) << std::hex << ours[i]->pc;
    for (size_t f = 0; f < frames.size(); ++f) {
      std::string name = ShortName(loaded->str(frames[f].function));
      EXPECT_TRUE(SameFunction(name, oracle[i][f])) << name << " vs " << oracle[i][f];
    }
  }
}

TEST(Symbolizer, DirectoryOfTracesAndBadInput) {
  testing::TempDir dir;
  std::vector<uint64_t> pcs = CaptureKnownChain();
  WriteTrace(dir.File("a.1.gpt"), {pcs});
  WriteTrace(dir.File("a.2.gpt"), {pcs});
  testing::WriteStringToFile(dir.File("notes.txt"), "not a trace");
  SymbolizeSummary summary;
  ASSERT_TRUE(SymbolizeTraceFile(dir.path().string(), {}, &summary).ok());
  EXPECT_EQ(summary.files, 2u);
  EXPECT_EQ(summary.symbols_written, 2 * pcs.size());

  std::string junk = dir.File("junk.gpt");
  testing::WriteStringToFile(junk, "definitely not a gpuperf trace");
  Status status = SymbolizeTraceFile(junk, {}, nullptr);
  EXPECT_FALSE(status.ok());
  EXPECT_EQ(status.code(), StatusCode::kNotATrace) << status.message();
  EXPECT_FALSE(SymbolizeTraceFile(dir.File("missing.gpt"), {}, nullptr).ok());
  testing::TempDir empty;
  EXPECT_EQ(SymbolizeTraceFile(empty.path().string(), {}, nullptr).code(), StatusCode::kNotFound);
}

TEST(Symbolizer, PcsOutsideEveryModuleAreCountedNotInvented) {
  testing::TempDir dir;
  std::string file = dir.File("outside.gpt");
  WriteTrace(file, {{0x10, 0x20}});
  SymbolizeSummary summary;
  ASSERT_TRUE(SymbolizeTraceFile(file, {}, &summary).ok());
  EXPECT_EQ(summary.outside_modules, 2u);
  EXPECT_EQ(summary.symbols_written, 0u);
}

// The CLI on a real trace: `gpuperf symbolize` then `gpuperf dump` shows the names.
std::string RunCommand(const std::string& command, int* exit_code) {
  std::string output;
  FILE* pipe = popen((command + " 2>&1").c_str(), "r");
  if (pipe == nullptr) return output;
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof(buf), pipe)) > 0) output.append(buf, n);
  int status = pclose(pipe);
  *exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return output;
}

TEST(SymbolizeCommand, SymbolizesATraceAndDumpShowsTheNames) {
  const char* env = std::getenv("GPUPERF_BIN");
  std::string bin = env != nullptr ? env : std::string(GPUPERF_BINARY_DIR) + "/gpuperf";
  if (!std::filesystem::exists(bin)) GTEST_SKIP() << "gpuperf binary not built";
  testing::TempDir dir;
  std::string file = dir.File("cli.gpt");
  WriteTrace(file, {CaptureKnownChain()});
  int code = -1;
  std::string out = RunCommand(bin + " symbolize " + file, &code);
  EXPECT_EQ(code, 0) << out;
  EXPECT_NE(out.find("with source lines"), std::string::npos) << out;
  out = RunCommand(bin + " symbolize " + file, &code);
  EXPECT_EQ(code, 0) << out;
  EXPECT_NE(out.find("already symbolized"), std::string::npos) << out;
  std::string dump = RunCommand(bin + " dump " + file, &code);
  EXPECT_NE(dump.find("(anonymous namespace)::Middle\"@\""), std::string::npos);
  EXPECT_NE(dump.find("symbolizer_test.cc\":"), std::string::npos);

  out = RunCommand(bin + " symbolize " + dir.File("missing.gpt"), &code);
  EXPECT_EQ(code, 3) << out;
}

}  // namespace
}  // namespace gpuperf
