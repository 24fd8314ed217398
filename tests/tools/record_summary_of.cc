// Prints what `gpuperf record` prints as its summary, for a recording already on disk (a
// directory of traces or one trace file): the e2e tests check it against `gpuperf report`
// on every trace they make and on every fixture (tests/e2e/lib.sh, check_loss_agrees).
#include <cstdio>

#include "cli/record_summary.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: gpuperf_record_summary DIR|FILE\n");
    return 2;
  }
  auto totals = gpuperf::cli::SummarizeRecording(argv[1]);
  if (!totals.ok()) {
    std::fprintf(stderr, "gpuperf_record_summary: %s\n", totals.status().message().c_str());
    return 1;
  }
  std::fputs(gpuperf::cli::FormatRecordSummary(*totals, argv[1]).c_str(), stdout);
  return 0;
}
