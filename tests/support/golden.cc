#include "support/golden.h"

#include <cstdlib>
#include <filesystem>

#include "support/temp_dir.h"

namespace gpuperf::testing {

std::string SourcePath(const std::string& relative) {
  return std::string(GPUPERF_SOURCE_DIR) + "/" + relative;
}

std::string CompareWithGolden(const std::string& actual, const std::string& golden) {
  const std::string path = SourcePath("tests/golden/" + golden);
  const char* bless = std::getenv("GPUPERF_BLESS");
  if (bless != nullptr && std::string(bless) == "1") {
    std::filesystem::create_directories(std::filesystem::path(path).parent_path());
    WriteStringToFile(path, actual);
    return "";
  }
  if (!std::filesystem::exists(path)) {
    return "golden file " + path + " is missing; run the test with GPUPERF_BLESS=1 to create it";
  }
  const std::string expected = ReadFileToString(path);
  if (expected == actual) return "";
  const std::string actual_path = std::string(GPUPERF_BINARY_DIR) + "/golden_actual/" + golden;
  std::filesystem::create_directories(std::filesystem::path(actual_path).parent_path());
  WriteStringToFile(actual_path, actual);
  return "output differs from golden " + path + "\n  actual output: " + actual_path +
         "\n  diff them, and if the change is intended rerun with GPUPERF_BLESS=1";
}

}  // namespace gpuperf::testing
