#include "cli/other_profilers.h"

#include <gtest/gtest.h>

#include <map>

namespace gpuperf::cli {
namespace {

EnvLookup Env(std::map<std::string, std::string> values) {
  return [values = std::move(values)](const char* name) -> const char* {
    auto it = values.find(name);
    return it == values.end() ? nullptr : it->second.c_str();
  };
}

const std::string kOurs = "/opt/gpuperf/lib/libgpuperf_inject.so";

TEST(OtherProfilers, NoneInAPlainEnvironment) {
  EXPECT_FALSE(FindOtherProfiler({"./app"}, kOurs, Env({})));
  EXPECT_FALSE(FindOtherProfiler({"./app"}, kOurs, Env({{"CUDA_INJECTION64_PATH", kOurs}})));
  // Nested gpuperf: the same library under another directory is still ours.
  EXPECT_FALSE(FindOtherProfiler({"./app"}, kOurs,
                                 Env({{"CUDA_INJECTION64_PATH", "/tmp/x/libgpuperf_inject.so"}})));
}

TEST(OtherProfilers, TheCommandIsAProfiler) {
  auto found =
      FindOtherProfiler({"/usr/local/cuda/bin/ncu", "-c", "3", "/bin/true"}, kOurs, Env({}));
  ASSERT_TRUE(found);
  EXPECT_EQ(found->tool, "Nsight Compute (ncu)");
  // The fix names the program ncu ran, not ncu's option values.
  EXPECT_EQ(StepAsideLine(*found, {"/usr/local/cuda/bin/ncu", "-c", "3", "/bin/true", "--x"}),
            "gpuperf: Nsight Compute (ncu) is profiling this command (the command is ncu); CUDA "
            "takes one injected profiler per process, so gpuperf steps aside and records nothing. "
            "Use one at a time: gpuperf record -- /bin/true --x");
  ASSERT_TRUE(FindOtherProfiler({"nsys", "profile", "python3"}, kOurs, Env({})));
  EXPECT_EQ(FindOtherProfiler({"nsys"}, kOurs, Env({}))->tool, "Nsight Systems (nsys)");
}

TEST(OtherProfilers, InsideAnNsightLauncher) {
  auto found = FindOtherProfiler({"./app"}, kOurs, Env({{"NV_TPS_LAUNCH_TOKEN", "x"}}));
  ASSERT_TRUE(found);
  EXPECT_EQ(found->evidence, "NV_TPS_LAUNCH_TOKEN is set");
  EXPECT_NE(
      StepAsideLine(*found, {"./app", "--steps", "5"}).find("gpuperf record -- ./app --steps 5"),
      std::string::npos);
}

TEST(OtherProfilers, SomeoneElsesInjectionLibrary) {
  auto found = FindOtherProfiler(
      {"./app"}, kOurs,
      Env({{"CUDA_INJECTION64_PATH", "/opt/nvidia/nsight-systems/2025/libToolsInjection64.so"}}));
  ASSERT_TRUE(found);
  EXPECT_EQ(found->tool, "Nsight Systems (nsys)");
  found = FindOtherProfiler({"./app"}, kOurs, Env({{"CUDA_INJECTION64_PATH", "/x/libmine.so"}}));
  ASSERT_TRUE(found);
  EXPECT_EQ(found->tool, "another CUDA tool (/x/libmine.so)");
}

}  // namespace
}  // namespace gpuperf::cli
