// Golden-file comparison with a bless switch: GPUPERF_BLESS=1 rewrites the golden
// file from the actual output instead of comparing. A mismatch writes the actual output
// next to the build (path in the failure message) so it can be diffed.
#pragma once

#include <string>

namespace gpuperf::testing {

// `golden` is relative to tests/golden/. Returns "" on match, else a failure message.
std::string CompareWithGolden(const std::string& actual, const std::string& golden);

#define EXPECT_MATCHES_GOLDEN(actual, golden)                                          \
  do {                                                                                 \
    std::string gp_golden_msg = ::gpuperf::testing::CompareWithGolden(actual, golden); \
    EXPECT_TRUE(gp_golden_msg.empty()) << gp_golden_msg;                               \
  } while (0)

// Absolute path of a file under the source tree (e.g. "tests/data/x.gpt").
std::string SourcePath(const std::string& relative);

}  // namespace gpuperf::testing
