// libFuzzer target: the .eh_frame compiler and the table built from it must survive any
// bytes (no crash, no read outside the input, no hang). Not part of scripts/fuzz.sh's CI
// run; build and run it by hand:
//   clang++ -std=c++20 -O1 -g -fsanitize=fuzzer,address,undefined -Isrc -o build/ehf \
//     tests/fuzz/eh_frame_fuzzer.cc src/unwind/{eh_frame_parser,cfa_program}.cc \
//     src/unwind/unwind_table.cc
//   build/ehf -max_total_time=60 -max_len=4096
#include <cstddef>
#include <cstdint>
#include <vector>

#include "unwind/eh_frame_parser.h"
#include "unwind/unwind_table.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace gpuperf;
  if (size < 2) return 0;
  // The first byte says where the input splits into an .eh_frame_hdr and the section.
  const size_t split = 1 + data[0] % (size - 1);
  const EhFrameBytes hdr{data + 1, split - 1, 0x8000};
  const EhFrameBytes section{data + split, size - split, 0x10000};
  std::vector<CfiRow> rows;
  std::vector<FdeSpan> spans;
  EhFrameStats stats;
  EhFrameHdr parsed;
  const bool with_hdr = ParseEhFrameHdr(hdr, &parsed);
  CompileEhFrame(section, with_hdr ? &hdr : nullptr, with_hdr ? &parsed : nullptr, &rows, &spans,
                 &stats);
  // Rows must stay inside their FDEs, ascending.
  for (const FdeSpan& span : spans) {
    if (span.begin >= span.end || span.first + span.count > rows.size()) __builtin_trap();
    for (uint32_t i = span.first; i < span.first + span.count; ++i) {
      if (rows[i].pc < span.begin || rows[i].pc >= span.end) __builtin_trap();
      if (i > span.first && rows[i].pc <= rows[i - 1].pc) __builtin_trap();
    }
  }
  // Build a module table over a window of the code addresses seen, and look a few up.
  if (!spans.empty()) {
    const uint64_t start = spans[0].begin & ~uint64_t{0xffff};
    ModuleUnwindTable table;
    if (BuildModuleTable(start, start + 0x100000, rows, spans, &table)) {
      table.start = start;
      table.end = start + 0x100000;
      for (size_t i = 1; i < table.row_starts.size(); ++i) {
        if (table.row_starts[i] <= table.row_starts[i - 1]) __builtin_trap();
      }
      for (const FdeSpan& span : spans) (void)table.Find(span.begin);
    }
  }
  return 0;
}
