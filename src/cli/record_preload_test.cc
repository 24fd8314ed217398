#include "cli/record_preload.h"

#include <gtest/gtest.h>

namespace gpuperf::cli {
namespace {

const std::string kLib = "/opt/gpuperf/lib/libgpuperf_preload.so";

TEST(RecordPreload, AppendsAfterWhatTheProgramAlreadyPreloads) {
  EXPECT_EQ(PreloadValue(kLib, nullptr, nullptr), kLib);
  EXPECT_EQ(PreloadValue(kLib, "", nullptr), kLib);
  EXPECT_EQ(PreloadValue(kLib, "/usr/lib/libjemalloc.so", nullptr),
            "/usr/lib/libjemalloc.so:" + kLib);
  EXPECT_EQ(PreloadValue(kLib, "liba.so libb.so", "on"), "liba.so libb.so:" + kLib);
}

TEST(RecordPreload, LeavesTheVariableAloneWhenOffMissingUnlistableOrListed) {
  EXPECT_EQ(PreloadValue(kLib, "liba.so", "off"), std::nullopt);
  EXPECT_EQ(PreloadValue(kLib, nullptr, "0"), std::nullopt);
  EXPECT_EQ(PreloadValue("", "liba.so", nullptr), std::nullopt);
  EXPECT_EQ(PreloadValue("/my dir/libgpuperf_preload.so", nullptr, nullptr), std::nullopt);
  EXPECT_EQ(PreloadValue("/a:b/libgpuperf_preload.so", nullptr, nullptr), std::nullopt);
  // A nested record: listed already, in either separator's company.
  EXPECT_EQ(PreloadValue(kLib, kLib.c_str(), nullptr), std::nullopt);
  EXPECT_EQ(PreloadValue(kLib, ("liba.so " + kLib + ":libb.so").c_str(), nullptr), std::nullopt);
  // A path that merely contains ours is another library.
  EXPECT_EQ(PreloadValue(kLib, (kLib + ".old").c_str(), nullptr), kLib + ".old:" + kLib);
}

}  // namespace
}  // namespace gpuperf::cli
