// Kernel frames inside a recorded stack (StackRecord::pcs).
//
// CPU samples (`gpuperf record --cpu`) hold the kernel's PCs first, then the user ones.
// Kernel addresses are the upper half of the address space (their top 8 bits are all
// ones, with 4- and 5-level page tables alike), which would read as a Python frame word
// (gpuperf/python_frame_word.h, bit 63). So they are stored as:
//
//   bit 63       0
//   bit 62       1: a kernel PC
//   bits 0..55   the low 56 bits of the address
//
// User-space PCs are below 2^56, so they never have bit 62 set, and stack markers
// (gpuperf/stack_marker.h) have top bits 0001. `gpuperf record` names
// kernel frames itself (from /proc/kallsyms, module "[kernel]"); the symbolizer leaves
// them alone.
#pragma once

#include <cstdint>

namespace gpuperf {

inline constexpr uint64_t kKernelFrameTag = 1ull << 62;
inline constexpr uint64_t kKernelFrameAddressMask = (1ull << 56) - 1;

constexpr bool IsKernelFrameWord(uint64_t word) {
  return (word >> 62) == 1;
}

constexpr uint64_t MakeKernelFrameWord(uint64_t kernel_pc) {
  return kKernelFrameTag | (kernel_pc & kKernelFrameAddressMask);
}

constexpr uint64_t KernelFramePc(uint64_t word) {
  return (word & kKernelFrameAddressMask) | ~kKernelFrameAddressMask;
}

}  // namespace gpuperf
