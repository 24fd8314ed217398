#include "inject/attach_settings.h"

#include <gtest/gtest.h>

namespace gpuperf::inject {
namespace {

std::string Settings(const std::string& more = "") {
  return "GPUPERF_ATTACH_PROTOCOL=" + std::to_string(kAttachProtocol) +
         "\nGPUPERF_ATTACH_STATE=/tmp/x.state\nGPUPERF_ATTACH_STOP=/tmp/x.stop\n"
         "GPUPERF_ATTACH_LOG=/tmp/x.log\nGPUPERF_ATTACH_INJECTOR=4242\n" +
         more;
}

TEST(AttachSettingsTest, TheWindowsOwnAndRecordsSettings) {
  AttachSettings settings;
  std::string error;
  ASSERT_TRUE(ParseAttachSettings(
      Settings("GPUPERF_ATTACH_DURATION_MS=5000\nGPUPERF_ATTACH_AT_NS=17\n"
               "GPUPERF_OUTPUT_DIR=/data/run\nGPUPERF_STACKS=0\nGPUPERF_DELAY_MS=3000\n"
               "GPUPERF_LIVE=on\nGPUPERF_HW_TRACE=on\n")
          .c_str(),
      &settings, &error))
      << error;
  EXPECT_EQ(settings.state_path, "/tmp/x.state");
  EXPECT_EQ(settings.injector_pid, 4242u);
  EXPECT_EQ(settings.duration_ms, 5000u);
  EXPECT_EQ(settings.at_realtime_ns, 17u);
  const Config config = AttachConfig(settings, &error);
  EXPECT_EQ(config.output_dir, "/data/run");
  EXPECT_FALSE(config.stacks);
  // The window is attach's own; what starts with the process is not for a running one.
  EXPECT_EQ(config.delay_ms, 0u);
  EXPECT_FALSE(config.live_page);
  EXPECT_FALSE(config.hw_trace);
}

TEST(AttachSettingsTest, RefusesWhatItCannotTrust) {
  AttachSettings settings;
  std::string error;
  EXPECT_FALSE(ParseAttachSettings(nullptr, &settings, &error));
  EXPECT_FALSE(ParseAttachSettings("GPUPERF_ATTACH_PROTOCOL=99\n", &settings, &error));
  EXPECT_NE(error.find("protocol 99"), std::string::npos);
  AttachSettings relative;
  EXPECT_FALSE(ParseAttachSettings(
      Settings().replace(Settings().find("/tmp/x.stop"), 11, "x.stop").c_str(), &relative, &error));
  EXPECT_NE(error.find("GPUPERF_ATTACH_STOP must be an absolute path"), std::string::npos);
  AttachSettings junk;
  EXPECT_FALSE(ParseAttachSettings((Settings() + "no equals sign\n").c_str(), &junk, &error));
  AttachSettings number;
  EXPECT_FALSE(ParseAttachSettings((Settings() + "GPUPERF_ATTACH_DURATION_MS=5s\n").c_str(),
                                   &number, &error));
}

}  // namespace
}  // namespace gpuperf::inject
