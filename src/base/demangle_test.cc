#include "base/demangle.h"

#include <gtest/gtest.h>

namespace gpuperf {
namespace {

TEST(Demangle, DemanglesKernelNames) {
  EXPECT_EQ(Demangle("_Z13softmaxKernelPfii"), "softmaxKernel(float*, int, int)");
  EXPECT_EQ(Demangle("ampere_sgemm_128x64_tn"), "ampere_sgemm_128x64_tn");
  EXPECT_EQ(Demangle("_Zbroken"), "_Zbroken");
}

TEST(Demangle, DemanglesDeviceStubsAfterTheirPrefix) {
  EXPECT_EQ(Demangle("__device_stub__Z13matmul_kernelPKfS0_Pfiii"),
            "__device_stub__matmul_kernel(float const*, float const*, float*, int, int, int)");
  // An extern "C" kernel's stub is not mangled; a broken tail stays as it was.
  EXPECT_EQ(Demangle("__device_stub__saxpy"), "__device_stub__saxpy");
  EXPECT_EQ(Demangle("__device_stub__Zbroken"), "__device_stub__Zbroken");
}

TEST(Demangle, ShortNames) {
  EXPECT_EQ(ShortName("softmaxKernel(float*, int, int)"), "softmaxKernel");
  EXPECT_EQ(ShortName("void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<"
                      "float>, std::array<char*, 1ul> >(int, at::native::FillFunctor<float>, "
                      "std::array<char*, 1ul>)"),
            "at::native::vectorized_elementwise_kernel");
  EXPECT_EQ(ShortName("flash_fwd_kernel"), "flash_fwd_kernel");
  // Lambdas: DWARF names an inlined body "operator()"; the call operator keeps its "()".
  EXPECT_EQ(ShortName("operator()"), "operator()");
  EXPECT_EQ(ShortName("operator()<main(int, char**)::<lambda()> >"), "operator()");
  EXPECT_EQ(ShortName("main::{lambda()#1}::operator()() const"), "main::{lambda()#1}::operator()");
  EXPECT_EQ(ShortName("Matrix::operator()(int, int)"), "Matrix::operator()");
  EXPECT_EQ(ShortName("void at::native::(anonymous namespace)::softmax_warp_forward<float, 10>("
                      "float*, int)"),
            "at::native::(anonymous namespace)::softmax_warp_forward");
  EXPECT_EQ(ShortName("(anonymous namespace)::helper(int)"), "(anonymous namespace)::helper");
}

TEST(Demangle, CacheReturnsSameText) {
  DemangleCache cache;
  EXPECT_EQ(cache.Get("_Z13softmaxKernelPfii"), "softmaxKernel(float*, int, int)");
  EXPECT_EQ(&cache.Get("_Z13softmaxKernelPfii"), &cache.Get("_Z13softmaxKernelPfii"));
}

}  // namespace
}  // namespace gpuperf
