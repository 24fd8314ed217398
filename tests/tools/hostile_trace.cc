// gpuperf_hostile_trace: writes support/hostile_trace.h's trace with NAME in every string a
// recorded program controls, for the end-to-end test of how every output shows such bytes
// (tests/e2e/hostile_strings_test.sh).
#include <cstdio>

#include "support/hostile_trace.h"
#include "support/test_trace.h"

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: gpuperf_hostile_trace FILE NAME\n");
    return 2;
  }
  const gpuperf::Status status =
      gpuperf::testing::WriteTrace(gpuperf::testing::HostileNamesTrace(argv[2]), argv[1]);
  if (!status.ok()) {
    std::fprintf(stderr, "gpuperf_hostile_trace: %s\n", status.message().c_str());
    return 1;
  }
  return 0;
}
