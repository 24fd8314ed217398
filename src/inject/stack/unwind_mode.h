// How launch stacks are unwound (GPUPERF_UNWIND; docs/recording.md "How stacks are unwound").
#pragma once

#include <cstdint>
#include <cstring>

namespace gpuperf::inject {

enum class UnwindMode : uint8_t {
  kAuto = 0,           // checked frame pointers, then the .eh_frame tables, then libunwind
  kTable = 1,          // the .eh_frame tables, then libunwind
  kFramePointers = 2,  // checked frame pointers, then libunwind
  kLibunwind = 3,      // libunwind alone
};

inline const char* UnwindModeName(UnwindMode mode) {
  switch (mode) {
    case UnwindMode::kAuto:
      return "auto";
    case UnwindMode::kTable:
      return "table";
    case UnwindMode::kFramePointers:
      return "fp";
    case UnwindMode::kLibunwind:
      return "libunwind";
  }
  return "?";
}

// False, leaving `*mode` alone, for a word that is none of the names above.
inline bool ParseUnwindMode(const char* text, UnwindMode* mode) {
  for (UnwindMode m : {UnwindMode::kAuto, UnwindMode::kTable, UnwindMode::kFramePointers,
                       UnwindMode::kLibunwind}) {
    if (std::strcmp(text, UnwindModeName(m)) == 0) {
      *mode = m;
      return true;
    }
  }
  return false;
}

inline bool WalksFramePointers(UnwindMode mode) {
  return mode == UnwindMode::kAuto || mode == UnwindMode::kFramePointers;
}
inline bool WalksTables(UnwindMode mode) {
  return mode == UnwindMode::kAuto || mode == UnwindMode::kTable;
}

}  // namespace gpuperf::inject
