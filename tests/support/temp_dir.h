// A scratch directory for one test, removed afterwards.
#pragma once

#include <filesystem>
#include <string>

namespace gpuperf::testing {

class TempDir {
 public:
  TempDir();
  ~TempDir();
  const std::filesystem::path& path() const { return path_; }
  std::string File(const std::string& name) const { return (path_ / name).string(); }

 private:
  std::filesystem::path path_;
};

std::string ReadFileToString(const std::string& path);
void WriteStringToFile(const std::string& path, const std::string& data);

}  // namespace gpuperf::testing
