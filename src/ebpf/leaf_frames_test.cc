#include "ebpf/leaf_frames.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <vector>

namespace gpuperf::ebpf {
namespace {

TEST(LeafFrames, RecognizesCallInstructions) {
  const uint8_t direct[7] = {0x90, 0x90, 0xE8, 0x10, 0x20, 0x30, 0x40};     // call rel32
  const uint8_t got[7] = {0x90, 0xFF, 0x15, 0x00, 0x10, 0x00, 0x00};        // call *[rip+d32]
  const uint8_t reg[7] = {0x90, 0x90, 0x90, 0x90, 0x41, 0xFF, 0xD3};        // call *%r11
  const uint8_t mem_disp8[7] = {0x90, 0x90, 0x90, 0x90, 0xFF, 0x50, 0x18};  // call *0x18(%rax)
  const uint8_t mem_reg[7] = {0x90, 0x90, 0x90, 0x90, 0x90, 0xFF, 0x10};    // call *(%rax)
  const uint8_t nops[7] = {0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90};
  const uint8_t jump[7] = {0x90, 0x90, 0xE9, 0x10, 0x20, 0x30, 0x40};  // jmp rel32
  EXPECT_TRUE(EndsWithCall(direct));
  EXPECT_TRUE(EndsWithCall(got));
  EXPECT_TRUE(EndsWithCall(reg));
  EXPECT_TRUE(EndsWithCall(mem_disp8));
  EXPECT_TRUE(EndsWithCall(mem_reg));
  EXPECT_FALSE(EndsWithCall(nops));
  EXPECT_FALSE(EndsWithCall(jump));
}

// Real return addresses of this test binary: where the calls below return to. The callers
// differ, so that the compiler cannot fold them into one.
volatile int g_calls;
__attribute__((noinline)) uint64_t ReturnAddress() {
  return reinterpret_cast<uint64_t>(__builtin_return_address(0));
}
__attribute__((noinline)) uint64_t FirstCaller() {
  const uint64_t r = ReturnAddress();
  g_calls = g_calls + 1;
  return r;
}
__attribute__((noinline)) uint64_t SecondCaller() {
  const uint64_t r = ReturnAddress();
  g_calls = g_calls + 2;
  return r + 0 * g_calls;
}

TEST(LeafFrames, PutsBackTheCallersTheWalkMissed) {
  const uint32_t pid = static_cast<uint32_t>(getpid());
  const uint64_t into_first = FirstCaller();    // return address inside FirstCaller
  const uint64_t into_second = SecondCaller();  // ... inside SecondCaller
  ASSERT_NE(into_first, into_second);
  const uint64_t code = reinterpret_cast<uint64_t>(&ReturnAddress);
  MissedFrames missed([&](uint32_t p, uint64_t address) {
    return p == pid && address > code - (1 << 20) && address < code + (1 << 20);
  });
  const uint64_t leaf = code + 1;  // an instruction of the innermost function
  const uint64_t outer = 0x1234;   // a frame the walk found (any value: only compared)

  // The walk found leaf and outer; the stack's top holds data, then the return addresses
  // into FirstCaller and SecondCaller: both missed, in that order.
  const std::vector<uint64_t> walked = {leaf, outer};
  const std::vector<uint64_t> top = {7, into_first, 0x7ffd00001000, into_second, outer, 9};
  EXPECT_EQ(missed.Complete(pid, walked, top),
            (std::vector<uint64_t>{leaf, into_first, into_second, outer}));

  // The walk has into_first already (the innermost function kept a frame pointer): the
  // scan moves past it, and only what lies beyond it and is missing goes in.
  const std::vector<uint64_t> walked_more = {leaf, into_first, outer};
  EXPECT_EQ(missed.Complete(pid, walked_more, top),
            (std::vector<uint64_t>{leaf, into_first, into_second, outer}));

  // Words that are not return addresses change nothing.
  const std::vector<uint64_t> junk = {0, 1, 0x7ffd00001000, 0xffffffffffffffff};
  EXPECT_EQ(missed.Complete(pid, walked, junk), walked);
  EXPECT_TRUE(missed.Complete(pid, {}, top).empty());
}

}  // namespace
}  // namespace gpuperf::ebpf
