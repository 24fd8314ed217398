#include "ebpf/kernel_symbols.h"

#include <gtest/gtest.h>

#include <sstream>

namespace gpuperf::ebpf {
namespace {

TEST(KernelSymbols, NamesAddressesByTheTextSymbolBelowThem) {
  std::istringstream text(
      "ffffffff81000000 T _stext\n"
      "ffffffff81000100 t do_one\n"
      "ffffffff81000200 D some_data\n"  // not code
      "ffffffff81000300 W weak_fn\n"
      "ffffffffc0a00000 t nvidia_ioctl\t[nvidia]\n"
      "0000000000000000 T hidden\n"  // kptr_restrict: no address
      "garbage line\n");
  KernelSymbols symbols = KernelSymbols::Parse(text);
  EXPECT_EQ(symbols.size(), 4u);
  KernelSymbols::Lookup found = symbols.Find(0xffffffff81000150);
  EXPECT_EQ(found.function, "do_one");
  EXPECT_EQ(found.module, "");
  EXPECT_EQ(found.offset, 0x50u);
  EXPECT_EQ(symbols.Find(0xffffffff81000250).function, "do_one");  // data is not code
  EXPECT_EQ(symbols.Find(0xffffffff81000300).function, "weak_fn");
  found = symbols.Find(0xffffffffc0a00010);
  EXPECT_EQ(found.function, "nvidia_ioctl");
  EXPECT_EQ(found.module, "nvidia");
  EXPECT_TRUE(symbols.Find(0xffffffff80000000).function.empty());  // below every symbol
  EXPECT_TRUE(symbols.Find(0xffffffffc0f00000).function.empty());  // far past the last
}

TEST(KernelSymbols, HiddenAddressesGiveNoSymbols) {
  std::istringstream text("0000000000000000 T _stext\n0000000000000000 t schedule\n");
  EXPECT_TRUE(KernelSymbols::Parse(text).empty());
}

}  // namespace
}  // namespace gpuperf::ebpf
