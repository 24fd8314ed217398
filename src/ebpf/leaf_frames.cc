#include "ebpf/leaf_frames.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <string>

namespace gpuperf::ebpf {

bool EndsWithCall(const uint8_t (&b)[7]) {
  // b[6] is the byte just before the address.
  if (b[2] == 0xE8) return true;                                             // call rel32
  if (b[1] == 0xFF && (b[2] == 0x15 || (b[2] & 0xF8) == 0x90)) return true;  // [rip+d32], [r+d32]
  if (b[3] == 0xFF && b[4] == 0x54) return true;                             // [rsp+d8] with SIB
  if (b[4] == 0xFF && (b[5] & 0xF8) == 0x50) return true;                    // [r+d8]
  if (b[4] == 0xFF && b[5] == 0x14) return true;                             // [rsp] with SIB
  if (b[5] == 0xFF && (b[6] & 0xF8) == 0xD0) return true;  // call reg (REX or not)
  if (b[5] == 0xFF && (b[6] & 0xF8) == 0x10 && b[6] != 0x14 && b[6] != 0x15) return true;  // [r]
  return false;
}

MissedFrames::~MissedFrames() {
  for (const auto& [pid, fd] : memory_) {
    if (fd >= 0) close(fd);
  }
}

bool MissedFrames::IsReturnAddress(uint32_t pid, uint64_t address) {
  // Unmapped now may be mapped after the process's maps are read again: not remembered.
  if (address < 7 || !mapped_(pid, address)) return false;
  auto [it, added] = known_.try_emplace({pid, address}, false);
  if (!added) return it->second;
  auto fd = memory_.find(pid);
  if (fd == memory_.end()) {
    const std::string path = "/proc/" + std::to_string(pid) + "/mem";
    fd = memory_.emplace(pid, open(path.c_str(), O_RDONLY | O_CLOEXEC)).first;
  }
  uint8_t before[7];
  it->second = fd->second >= 0 &&
               pread(fd->second, before, sizeof(before), static_cast<off_t>(address - 7)) == 7 &&
               EndsWithCall(before);
  return it->second;
}

std::vector<uint64_t> MissedFrames::Complete(uint32_t pid, std::span<const uint64_t> user_pcs,
                                             std::span<const uint64_t> top) {
  std::vector<uint64_t> out(user_pcs.begin(), user_pcs.end());
  if (out.empty()) return out;
  size_t at = 0;  // the frame of `out` the scan has reached
  size_t inserted = 0;
  for (uint64_t word : top) {
    if (inserted == kMaxInserted) break;
    if (!IsReturnAddress(pid, word)) continue;
    auto known = std::find(out.begin() + static_cast<std::ptrdiff_t>(at) + 1, out.end(), word);
    if (known != out.end()) {
      at = static_cast<size_t>(known - out.begin());
      continue;
    }
    if (std::find(out.begin(), out.begin() + static_cast<std::ptrdiff_t>(at) + 1, word) !=
        out.begin() + static_cast<std::ptrdiff_t>(at) + 1) {
      continue;  // a frame the scan has passed (recursion, or a stale copy)
    }
    out.insert(out.begin() + static_cast<std::ptrdiff_t>(at) + 1, word);
    ++at;
    ++inserted;
  }
  return out;
}

}  // namespace gpuperf::ebpf
