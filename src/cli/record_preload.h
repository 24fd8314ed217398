// The preload library `gpuperf record` adds to the command's LD_PRELOAD (src/preload): it
// lets gpuperf say when a profiler inside the program is refused CUPTI (docs/recording.md).
#pragma once

#include <optional>
#include <string>

namespace gpuperf::cli {

inline constexpr const char* kPreloadLibraryName = "libgpuperf_preload.so";

// The child's LD_PRELOAD with `preload_library` appended to `current` (the variable as gpuperf
// got it, may be null), or nothing to change: `setting` (GPUPERF_PRELOAD) is "off" or "0", the
// library is not there (empty path), its path cannot be listed (a space or a colon), or it is
// listed already (a nested record).
std::optional<std::string> PreloadValue(const std::string& preload_library, const char* current,
                                        const char* setting);

// PreloadValue for the library beside `inject_library`, from gpuperf's own environment.
std::optional<std::string> PreloadForChild(const std::string& inject_library);

}  // namespace gpuperf::cli
