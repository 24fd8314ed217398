#include "analyze/flame/flamegraph_pc_frames.h"

#include <gtest/gtest.h>

#include <sstream>

#include "export/folded.h"
#include "support/test_trace.h"

namespace gpuperf {
namespace {

// gemm runs 1000 ns under one stack and 3000 ns under another; its 10 samples: 7 on line 5
// (6 long_scoreboard, 1 selected), 3 on line 9. tiny has no samples.
struct Fixture {
  testing::TestTrace t;
  PcProfile profile;
  Fixture() {
    const StackId a = t.Stack(1, {"main", "train"});
    const StackId b = t.Stack(1, {"main", "eval"});
    t.Link(1, 1, 1, a, "cudaLaunchKernel");
    t.Link(1, 1, 2, b, "cudaLaunchKernel");
    t.Link(1, 1, 3, b, "cudaLaunchKernel");
    t.Kernel(1, "_Z4gemmPf", 1, 0, 1000);
    t.Kernel(1, "_Z4gemmPf", 2, 2000, 5000);
    t.Kernel(1, "_Z4tinyv", 3, 6000, 6010);
    PcProfileCollector c;
    c.AddSample("_Z4gemmPf", 1, 0x10, "smsp__pcsamp_warps_issue_stalled_long_scoreboard", 6);
    c.AddSample("_Z4gemmPf", 1, 0x10, "smsp__pcsamp_warps_issue_stalled_selected", 1);
    c.AddSample("_Z4gemmPf", 1, 0x40, "smsp__pcsamp_warps_issue_stalled_barrier", 3);
    c.AddLine("_Z4gemmPf", 1, 0x10, "/src/gemm.cu", 5, "");
    c.AddLine("_Z4gemmPf", 1, 0x40, "/src/gemm.cu", 9, "");
    profile = c.Finish();
  }
  std::string Folded(FlameGraphOptions options) {
    auto graph = BuildFlameGraph(t.trace(), options);
    EXPECT_TRUE(graph.ok());
    EXPECT_EQ(AddPcFrames(*graph, profile, options), 2u);  // gemm's two stacks
    std::ostringstream out;
    EXPECT_TRUE(ExportFolded(*graph, options.weight, out).ok());
    return out.str();
  }
};

TEST(FlamePcFrames, SplitEachKernelStackByLineAndStall) {
  Fixture f;
  EXPECT_EQ(f.Folded({}),
            "main;eval;cudaLaunchKernel;[GPU0] gemm;[line] gemm.cu:5;[stall] long_scoreboard 1800\n"
            "main;eval;cudaLaunchKernel;[GPU0] gemm;[line] gemm.cu:5;[stall] selected 300\n"
            "main;eval;cudaLaunchKernel;[GPU0] gemm;[line] gemm.cu:9;[stall] barrier 900\n"
            "main;eval;cudaLaunchKernel;[GPU0] tiny 10\n"
            "main;train;cudaLaunchKernel;[GPU0] gemm;[line] gemm.cu:5;[stall] long_scoreboard 600\n"
            "main;train;cudaLaunchKernel;[GPU0] gemm;[line] gemm.cu:5;[stall] selected 100\n"
            "main;train;cudaLaunchKernel;[GPU0] gemm;[line] gemm.cu:9;[stall] barrier 300\n");
}

TEST(FlamePcFrames, InvertedGraphsStartAtTheStall) {
  Fixture f;
  FlameGraphOptions options;
  options.inverted = true;
  const std::string folded = f.Folded(options);
  EXPECT_NE(
      folded.find("[stall] barrier;[line] gemm.cu:9;[GPU0] gemm;cudaLaunchKernel;train;main 300\n"),
      std::string::npos)
      << folded;
}

TEST(FlamePcFrames, CountsAreSplitToTheSameTotal) {
  Fixture f;
  FlameGraphOptions options;
  options.weight = FlameWeight::kCount;
  std::istringstream in(f.Folded(options));
  uint64_t gemm = 0;
  for (std::string line; std::getline(in, line);) {
    if (line.find("gemm") != std::string::npos)
      gemm += std::stoull(line.substr(line.rfind(' ') + 1));
  }
  EXPECT_EQ(gemm, 2u);  // two launches, spread over the parts but never lost or added
}

}  // namespace
}  // namespace gpuperf
