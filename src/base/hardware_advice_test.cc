#include "base/hardware_advice.h"

#include <gtest/gtest.h>

namespace gpuperf {
namespace {

TEST(HardwareAdvice, EveryFailureIsOneLineWithItsFix) {
  const std::string privileges = HardwareFailureLine("hardware metrics", "device 0", 35,
                                                     "CUPTI_ERROR_INSUFFICIENT_PRIVILEGES");
  EXPECT_EQ(privileges.find('\n'), std::string::npos);
  EXPECT_NE(privileges.find("hardware metrics unavailable on device 0"), std::string::npos);
  EXPECT_NE(privileges.find("NVreg_RestrictProfilingToAdminUsers=0"), std::string::npos);
  EXPECT_NE(privileges.find("(CUPTI_ERROR_INSUFFICIENT_PRIVILEGES)"), std::string::npos);
  EXPECT_NE(privileges.find("the rest of the recording goes on"), std::string::npos);

  const std::string busy = HardwareFailureLine("hardware metrics", "", 26, "");
  EXPECT_NE(busy.find("dcgmi profile --pause"), std::string::npos) << busy;
  EXPECT_EQ(busy.find("()"), std::string::npos);  // no empty detail
  EXPECT_NE(HardwareFailureLine("PC sampling", "", 15, "").find("separate runs"),
            std::string::npos);
  EXPECT_NE(HardwareFailureLine("PC sampling", "", 43, "").find("MIG"), std::string::npos);
  // A code without advice still says what failed.
  const std::string other =
      HardwareFailureLine("PC sampling", "device 1", 999, "CUPTI_ERROR_UNKNOWN");
  EXPECT_NE(other.find("CUPTI_ERROR_UNKNOWN"), std::string::npos);
  EXPECT_NE(other.find("fix:"), std::string::npos);
}

TEST(HardwareAdvice, UnsupportedDevicesAndMissingLineInfo) {
  EXPECT_NE(UnsupportedDeviceLine("hardware metrics", "device 0", "architecture").find("7.0"),
            std::string::npos);
  EXPECT_NE(UnsupportedDeviceLine("hardware metrics", "device 0", "vGPU").find("without vGPU"),
            std::string::npos);
  EXPECT_NE(NoLineInfoLine("copy_kernel").find("nvcc -lineinfo"), std::string::npos);
}

}  // namespace
}  // namespace gpuperf
