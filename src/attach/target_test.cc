#include "attach/target.h"

#include <elf.h>
#include <gtest/gtest.h>
#include <unistd.h>

namespace gpuperf::attach {
namespace {

#if defined(__x86_64__)
TEST(TargetTest, ProgramsOfAnotherArchitectureAreRefusedByName) {
  EXPECT_EQ(ForeignProgram(EM_X86_64, true), "");
  EXPECT_EQ(ForeignProgram(EM_386, false),
            "a 32-bit x86 program: gpuperf attach works with x86-64 programs");
  EXPECT_EQ(ForeignProgram(EM_X86_64, false),
            "an x32 program: gpuperf attach works with x86-64 programs");
  EXPECT_EQ(ForeignProgram(EM_AARCH64, true),
            "an aarch64 program: gpuperf attach works with x86-64 programs");
}
#endif

TEST(TargetTest, NeitherItselfNorAProcessThatIsNotThere) {
  const Result<Target> self = InspectTarget(getpid());
  ASSERT_FALSE(self.ok());
  EXPECT_NE(self.status().message().find("it is this gpuperf"), std::string::npos);
  const Result<Target> none = InspectTarget(999999999);
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.status().code(), StatusCode::kNotFound);
}

}  // namespace
}  // namespace gpuperf::attach
