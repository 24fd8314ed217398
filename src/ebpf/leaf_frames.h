// The frames a frame-pointer walk misses. bpf_get_stack follows frame pointers; when the
// innermost functions keep none (libc's system call wrappers, memcpy, the vDSO's callers),
// the walk goes from the instruction to the first caller that keeps one, and the functions
// in between, often the one a profile is about ("which function slept"), are not in the
// stack. Their return addresses are still at the top of the user stack. Scanning it
// upwards, a word that points just after a call instruction in mapped code (the
// stack-scanning heuristic of debuggers) is a return address: one the walk has moves the
// scan past that frame; one it lacks is inserted there.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <span>
#include <utility>
#include <vector>

namespace gpuperf::ebpf {

// Whether the 7 bytes before an address end with an x86-64 call instruction (direct
// rel32, or indirect through a register or memory).
bool EndsWithCall(const uint8_t (&before)[7]);

class MissedFrames {
 public:
  ~MissedFrames();
  // `mapped(pid, address)`: whether the address is in an executable file the process maps.
  explicit MissedFrames(std::function<bool(uint32_t, uint64_t)> mapped)
      : mapped_(std::move(mapped)) {}

  // The user stack with the frames the walk missed put back (at most kMaxInserted).
  std::vector<uint64_t> Complete(uint32_t pid, std::span<const uint64_t> user_pcs,
                                 std::span<const uint64_t> top);
  static constexpr size_t kMaxInserted = 4;

 private:
  bool IsReturnAddress(uint32_t pid, uint64_t address);

  std::function<bool(uint32_t, uint64_t)> mapped_;
  std::map<std::pair<uint32_t, uint64_t>, bool> known_;
  std::map<uint32_t, int> memory_;  // pid -> /proc/PID/mem, -1 when it cannot be opened
};

}  // namespace gpuperf::ebpf
