#include "unwind/unwinder.h"

#include <dlfcn.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "inject/stack/module_table.h"

namespace gpuperf {
namespace {

// Where each test function's code lies, to check which frames a stack holds.
struct CodeRange {
  uint64_t start, end;
  bool Contains(uint64_t pc) const { return pc >= start && pc < end; }
};

CodeRange RangeOf(void* function) {
  // dladdr gives the symbol start; the symbol sizes are not exposed, so bound the
  // function by a generous window (these functions are tiny).
  return {reinterpret_cast<uint64_t>(function), reinterpret_cast<uint64_t>(function) + 256};
}

#if defined(__clang__)
#define GP_TEST_NOINLINE __attribute__((noinline))
#else
#define GP_TEST_NOINLINE __attribute__((noipa))
#endif

volatile int g_sink = 0;

GP_TEST_NOINLINE int CaptureInner(uint64_t* pcs, int max) {
  int n = CaptureStack(pcs, max);
  g_sink = g_sink + n;  // no tail call
  return n;
}

GP_TEST_NOINLINE int CaptureOuter(uint64_t* pcs, int max) {
  int n = CaptureInner(pcs, max);
  g_sink = g_sink + 1;
  return n;
}

GP_TEST_NOINLINE int Recurse(int levels, uint64_t* pcs, int max) {
  int n;
  if (levels == 0) {
    n = CaptureStack(pcs, max);
    g_sink = g_sink + n;
    return n;
  }
  n = Recurse(levels - 1, pcs, max);
  g_sink = g_sink + 1;
  return n;
}

class UnwinderTest : public ::testing::TestWithParam<UnwinderKind> {
 protected:
  void SetUp() override {
    previous_ = InitUnwinder();
    if (!UseUnwinder(GetParam())) GTEST_SKIP() << "unwinder not available here";
  }
  void TearDown() override { UseUnwinder(previous_); }
  UnwinderKind previous_ = UnwinderKind::kNone;
};

TEST_P(UnwinderTest, FirstFrameIsTheCallerAndTheChainFollows) {
  uint64_t pcs[64];
  int n = CaptureOuter(pcs, 64);
  ASSERT_GE(n, 3);
  EXPECT_TRUE(RangeOf(reinterpret_cast<void*>(&CaptureInner)).Contains(pcs[0]))
      << std::hex << pcs[0];
  EXPECT_TRUE(RangeOf(reinterpret_cast<void*>(&CaptureOuter)).Contains(pcs[1]))
      << std::hex << pcs[1];
  // The stack goes on into gtest and main: deeper than our two frames.
  EXPECT_GT(n, 5);
}

TEST_P(UnwinderTest, DeepStacksAreCutAtMaxDepthAndAreComplete) {
  uint64_t pcs[kMaxStackDepth];
  int full = Recurse(40, pcs, kMaxStackDepth);
  EXPECT_GE(full, 41);
  CodeRange recurse = RangeOf(reinterpret_cast<void*>(&Recurse));
  for (int i = 0; i < 41; ++i) EXPECT_TRUE(recurse.Contains(pcs[i])) << i;
  uint64_t cut[10];
  EXPECT_EQ(Recurse(40, cut, 10), 10);
  EXPECT_EQ(Recurse(40, cut, 0), 0);
}

INSTANTIATE_TEST_SUITE_P(Kinds, UnwinderTest,
                         ::testing::Values(UnwinderKind::kLibunwind, UnwinderKind::kLibgcc,
                                           UnwinderKind::kGlibcBacktrace),
                         [](const auto& info) -> std::string {
                           switch (info.param) {
                             case UnwinderKind::kLibunwind:
                               return "libunwind";
                             case UnwinderKind::kLibgcc:
                               return "libgcc";
                             default:
                               return "glibc_backtrace";
                           }
                         });

TEST(Unwinder, InitPrefersLibunwindWhenInstalled) {
  UnwinderKind kind = InitUnwinder();
  EXPECT_NE(kind, UnwinderKind::kNone);
  void* handle = dlopen("libunwind.so.8", RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD);
  if (handle != nullptr) {
    dlclose(handle);
    // Loaded by us (or already there): InitUnwinder must have been able to use it.
    EXPECT_TRUE(UseUnwinder(UnwinderKind::kLibunwind));
    EXPECT_STREQ(UnwinderName(), "libunwind");
  }
  // libunwind's weak backtrace() must not have replaced glibc's (or a sanitizer's).
  Dl_info info;
  ASSERT_NE(dladdr(dlsym(RTLD_DEFAULT, "backtrace"), &info), 0);
  EXPECT_EQ(std::string(info.dli_fname).find("libunwind"), std::string::npos) << info.dli_fname;
}

int CompareAndCapture(const void* a, const void* b);
uint64_t g_captured[64];
int g_captured_depth = 0;

int CompareAndCapture(const void* a, const void* b) {
  if (g_captured_depth == 0) g_captured_depth = CaptureStack(g_captured, 64);
  return *static_cast<const int*>(a) - *static_cast<const int*>(b);
}

TEST(FrameFilter, DropsLeadingFramesOfSkippedModulesOnly) {
  FrameFilter filter;
  ASSERT_TRUE(filter.AddRange(0x1000, 0x2000));
  ASSERT_TRUE(filter.AddRange(0x5000, 0x6000));
  uint64_t pcs[] = {0x1010, 0x5020, 0x1fff, 0x9000, 0x1010, 0xa000};
  EXPECT_EQ(filter.FirstKept(pcs, 6), 3);
  EXPECT_EQ(filter.Trim(pcs, 6), 3);
  EXPECT_EQ(pcs[0], 0x9000u);
  EXPECT_EQ(pcs[1], 0x1010u);  // a skipped module deeper in the stack stays
  EXPECT_EQ(pcs[2], 0xa000u);
  uint64_t all_skipped[] = {0x1000, 0x5fff};
  EXPECT_EQ(filter.Trim(all_skipped, 2), 0);
  EXPECT_FALSE(filter.AddRange(0x10, 0x10));  // empty range refused
}

TEST(FrameFilter, ConfiguredFromTheModuleTableByBasename) {
  // A real stack through libc: our comparator runs inside qsort. Skipping our own binary
  // must leave the stack starting in libc's qsort.
  int values[] = {3, 1, 2};
  g_captured_depth = 0;
  std::qsort(values, 3, sizeof(int), CompareAndCapture);
  ASSERT_GT(g_captured_depth, 3);

  std::vector<LoadedModule> modules = EnumerateLoadedModules();
  const LoadedModule* self = FindModule(modules, reinterpret_cast<uint64_t>(&CompareAndCapture));
  ASSERT_NE(self, nullptr);
  std::string base = self->path.substr(self->path.rfind('/') + 1);
  FrameFilter filter;
  EXPECT_EQ(filter.Configure(modules, {base}), 1);
  int kept = filter.Trim(g_captured, g_captured_depth);
  ASSERT_GT(kept, 0);
  const LoadedModule* first = FindModule(modules, g_captured[0]);
  ASSERT_NE(first, nullptr);
  // libc's qsort (or a sanitizer runtime's interceptor of it).
  EXPECT_NE(first, self);
  EXPECT_TRUE(first->path.find("libc.so") != std::string::npos ||
              first->path.find("san.so") != std::string::npos)
      << first->path;

  EXPECT_TRUE(FrameFilter::BasenameHasPrefix("/usr/lib/x86_64-linux-gnu/libcuda.so.1",
                                             FrameFilter::DefaultSkipPrefixes()));
  EXPECT_TRUE(FrameFilter::BasenameHasPrefix("/opt/gp/lib/libgpuperf_inject.so",
                                             FrameFilter::DefaultSkipPrefixes()));
  EXPECT_FALSE(FrameFilter::BasenameHasPrefix("/opt/libcuda.so.1/libtorch_cuda.so",
                                              FrameFilter::DefaultSkipPrefixes()));
  EXPECT_FALSE(
      FrameFilter::BasenameHasPrefix("/usr/lib/libcudnn.so.9", FrameFilter::DefaultSkipPrefixes()));
}

}  // namespace
}  // namespace gpuperf
