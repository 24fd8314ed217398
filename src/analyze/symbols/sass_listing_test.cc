#include "analyze/symbols/sass_listing.h"

#include <gtest/gtest.h>

namespace gpuperf {
namespace {

// The shape of `nvdisasm -c` output (CUDA 13): section directives, a label per function,
// one instruction per line with its offset in a comment.
constexpr char kListing[] = R"(
	.section	.text._Z15hot_loop_kernelPfPKfii,"ax",@progbits
	.sectioninfo	@"SHI_REGISTERS=12"
	.align	128
        .global         _Z15hot_loop_kernelPfPKfii
        .type           _Z15hot_loop_kernelPfPKfii,@function
_Z15hot_loop_kernelPfPKfii:
.text._Z15hot_loop_kernelPfPKfii:
        /*0000*/                   LDC R1, c[0x0][0x28] ;
        /*0010*/                   S2R R0, SR_CTAID.X ;
        /*0200*/              @!P0 BRA `(.L_x_1) ;
        /*0230*/                   FFMA R4, R2, R3, R4 ;    /* 0x0000000302047223 */
.L_x_1:
	.section	.text._Z10fma_kernelPfi,"ax",@progbits
        /*0000*/                   MOV R1, c[0x0][0x28] ;
        /*zz*/                     NOT AN INSTRUCTION ;
)";

TEST(SassListing, ReadsEachFunctionsInstructionsByOffset) {
  const SassListing listing = ParseSassListing(kListing);
  ASSERT_EQ(listing.size(), 2u);
  const auto& hot = listing.at("_Z15hot_loop_kernelPfPKfii");
  ASSERT_EQ(hot.size(), 4u);
  EXPECT_EQ(hot.at(0x0), "LDC R1, c[0x0][0x28]");
  EXPECT_EQ(hot.at(0x200), "@!P0 BRA `(.L_x_1)");
  EXPECT_EQ(hot.at(0x230), "FFMA R4, R2, R3, R4");
  ASSERT_EQ(listing.at("_Z10fma_kernelPfi").size(), 1u);
  EXPECT_TRUE(ParseSassListing("garbage\n/*0010*/ NOP ;\n").empty());  // no function yet
}

}  // namespace
}  // namespace gpuperf
