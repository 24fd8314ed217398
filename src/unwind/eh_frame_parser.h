// Reads a module's `.eh_frame` (and the `.eh_frame_hdr` index in front of it) and compiles
// each FDE's call-frame program into rows: from this PC on, the frame's CFA is RSP+off or
// RBP+off (or, in a function that realigns its stack, is read from RBP+off), the return
// address is at CFA-8, and RBP is either unchanged or saved at CFA+off (or RBP+off). Anything
// else (another CFA expression than the PLT's or the realigning functions', a CFA based on
// another register, the return address described by an expression, a signal frame) becomes
// a row marked kUnexpressible, so that the walk hands the frame to libunwind.
//
// x86-64 only (DWARF registers 6 = RBP, 7 = RSP, 16 = return address).
//
// Every read is bounds-checked against the byte range it was given: damaged input (cut
// short, bad lengths, unknown augmentations or opcodes, advances past the FDE) yields
// fewer rows or kUnexpressible rows, never a read outside the range. The data is addressed
// through `EhFrameBytes`, which carries the runtime address of its first byte separately
// from the bytes themselves, so tests can feed any buffer as if it were mapped elsewhere.
// Nothing here throws except std::bad_alloc from the output vectors.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace gpuperf {

// How to find a frame's CFA (canonical frame address: the caller's RSP).
enum class CfaKind : uint8_t {
  kNoInfo = 0,         // no FDE covers this PC
  kRsp = 1,            // CFA = RSP + cfa_offset
  kRbp = 2,            // CFA = RBP + cfa_offset
  kPlt = 3,            // the PLT's expression: CFA = RSP + 8 + ((RIP & 15) >= cfa_offset ? 8 : 0)
  kUnexpressible = 4,  // a rule this table cannot hold: ask libunwind
  kOutermost = 5,      // the return address is undefined: the thread's first frame
  // CFA = *(RBP + cfa_offset): GCC's stack-realigning functions (`and rsp, -N` through a
  // DRAP register) keep the CFA in a stack slot below their frame record, and say so with
  // DW_CFA_def_cfa_expression (DW_OP_breg6 n; DW_OP_deref).
  kRbpDeref = 6,
};

enum class RbpKind : uint8_t {
  kSame = 0,   // the caller's RBP is this frame's RBP
  kSaved = 1,  // the caller's RBP is stored at CFA + rbp_offset
  kAtRbp = 2,  // ... at RBP + rbp_offset (a realigning function: DW_CFA_expression DW_OP_breg6 n)
};

// One row's rule: 8 bytes.
struct UnwindRule {
  int32_t cfa_offset = 0;
  int16_t rbp_offset = 0;
  CfaKind cfa = CfaKind::kNoInfo;
  RbpKind rbp = RbpKind::kSame;

  bool operator==(const UnwindRule&) const = default;
};
static_assert(sizeof(UnwindRule) == 8);

// The rule from `pc` on (until the next row).
struct CfiRow {
  uint64_t pc = 0;
  UnwindRule rule;
};

// One FDE's rows: rows[first, first + count) of the output vector, covering [begin, end).
struct FdeSpan {
  uint64_t begin = 0, end = 0;
  uint32_t first = 0, count = 0;
};

// A byte range and the runtime address its first byte is mapped at (equal to `data` when
// reading this process's own modules).
struct EhFrameBytes {
  const uint8_t* data = nullptr;
  size_t size = 0;
  uint64_t address = 0;
};

// What compiling found, for counters and tests.
struct EhFrameStats {
  uint32_t fdes = 0;                // FDEs compiled (at least partly)
  uint32_t bad_fdes = 0;            // FDEs skipped: unreadable header, bad CIE, bad range
  uint32_t truncated_programs = 0;  // programs cut at a bad or unknown instruction
  uint32_t rows = 0;                // rows written
  uint32_t unexpressible_rows = 0;  // rows marked kUnexpressible
  bool used_hdr_table = false;      // FDEs found through .eh_frame_hdr's sorted table
};

// The parts of `.eh_frame_hdr` we use.
struct EhFrameHdr {
  uint64_t eh_frame_address = 0;  // runtime address of .eh_frame
  uint8_t table_encoding = 0xff;  // DW_EH_PE_* of the table; 0xff: no table
  uint64_t fde_count = 0;
  size_t table_offset = 0;  // offset of the table within the header bytes
};

// Parses the header at `hdr`. False when it is not a version-1 header we can read.
bool ParseEhFrameHdr(const EhFrameBytes& hdr, EhFrameHdr* out);

// Whether the parsed header's sorted table can be read: the encoding GNU ld and lld write
// (pairs of int32, initial location and FDE address, relative to the header), at least one
// entry, and every entry inside the header's bytes.
bool HdrTableUsable(const EhFrameBytes& hdr, const EhFrameHdr& parsed);

// Compiles every FDE of `eh_frame` into `rows`/`spans` (appended; spans in the order
// found). With a header whose table is usable, the FDEs are those it lists (what libunwind
// looks up); otherwise the section is read front to back until its zero terminator or its
// end. Returns false only when nothing at all could be read.
bool CompileEhFrame(const EhFrameBytes& eh_frame, const EhFrameBytes* hdr,
                    const EhFrameHdr* parsed_hdr, std::vector<CfiRow>* rows,
                    std::vector<FdeSpan>* spans, EhFrameStats* stats);

// Compiles the one FDE at `offset` in `eh_frame`. Exposed for tests.
bool CompileFdeAt(const EhFrameBytes& eh_frame, uint64_t offset, std::vector<CfiRow>* rows,
                  FdeSpan* span, EhFrameStats* stats);

}  // namespace gpuperf
