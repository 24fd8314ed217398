#include "cli/record_preload.h"

#include <cstdlib>
#include <cstring>
#include <filesystem>

namespace gpuperf::cli {

std::optional<std::string> PreloadValue(const std::string& preload_library, const char* current,
                                        const char* setting) {
  if (setting != nullptr && (std::strcmp(setting, "off") == 0 || std::strcmp(setting, "0") == 0)) {
    return std::nullopt;
  }
  // ld.so splits LD_PRELOAD at spaces and colons; such a path would load something else.
  if (preload_library.empty() || preload_library.find_first_of(" :") != std::string::npos) {
    return std::nullopt;
  }
  const std::string list = current != nullptr ? current : "";
  size_t start = 0;
  while (start <= list.size()) {
    size_t end = list.find_first_of(" :", start);
    if (end == std::string::npos) end = list.size();
    if (list.compare(start, end - start, preload_library) == 0) return std::nullopt;
    start = end + 1;
  }
  return list.empty() ? preload_library : list + ":" + preload_library;
}

std::optional<std::string> PreloadForChild(const std::string& inject_library) {
  const std::filesystem::path library =
      std::filesystem::path(inject_library).parent_path() / kPreloadLibraryName;
  std::error_code ec;
  const bool present = std::filesystem::is_regular_file(library, ec);
  return PreloadValue(present ? library.string() : std::string(), std::getenv("LD_PRELOAD"),
                      std::getenv("GPUPERF_PRELOAD"));
}

}  // namespace gpuperf::cli
