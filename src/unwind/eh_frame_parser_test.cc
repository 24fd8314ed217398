// The .eh_frame compiler on hand-built call-frame programs (the rows each instruction
// yields), and on damaged input: cut short, bad lengths and augmentations, unknown
// opcodes, huge advances, random damage to real sections. Every buffer ends right before
// an inaccessible page, so a read past its end would crash the test.
#include "unwind/eh_frame_parser.h"

#include <gtest/gtest.h>
#include <link.h>

#include <cstring>
#include <random>

#include "unwind/eh_frame_test_util.h"

namespace gpuperf {
namespace {

using testing_util::EhFrameBuilder;
using testing_util::GuardedBytes;

constexpr uint64_t kSectionAddress = 0x10000;
constexpr uint64_t kCode = 0x20000;

UnwindRule Rsp(int32_t offset) {
  return {offset, 0, CfaKind::kRsp, RbpKind::kSame};
}
UnwindRule RspSavedRbp(int32_t offset, int16_t rbp) {
  return {offset, rbp, CfaKind::kRsp, RbpKind::kSaved};
}
UnwindRule RbpBased(int32_t offset, int16_t rbp) {
  return {offset, rbp, CfaKind::kRbp, RbpKind::kSaved};
}
UnwindRule Kind(CfaKind kind) {
  UnwindRule rule;
  rule.cfa = kind;
  return rule;
}

struct Compiled {
  std::vector<CfiRow> rows;
  std::vector<FdeSpan> spans;
  EhFrameStats stats;
  bool ok = false;
};

Compiled Compile(const std::vector<uint8_t>& bytes, uint64_t address = kSectionAddress) {
  GuardedBytes guarded(bytes);
  Compiled out;
  out.ok = guarded.ok() && CompileEhFrame(guarded.View(address), nullptr, nullptr, &out.rows,
                                          &out.spans, &out.stats);
  return out;
}

// Rows of the only FDE, as (offset from kCode, rule).
std::vector<std::pair<uint64_t, UnwindRule>> RowsOf(const Compiled& c) {
  std::vector<std::pair<uint64_t, UnwindRule>> rows;
  for (const CfiRow& row : c.rows) rows.emplace_back(row.pc - kCode, row.rule);
  return rows;
}

using Rows = std::vector<std::pair<uint64_t, UnwindRule>>;

Compiled CompileOneFde(const std::vector<uint8_t>& program, uint32_t range = 0x40) {
  EhFrameBuilder b(kSectionAddress);
  const size_t cie = b.Cie();
  b.Fde(cie, kCode, range, program);
  b.Terminator();
  return Compile(b.bytes);
}

TEST(EhFrameParser, CompilesAPrologueBodyAndEpilogue) {
  const Compiled c = CompileOneFde({
      0x41, 0x0e, 0x10, 0x86, 0x02,  // push %rbp: cfa rsp+16, rbp at cfa-16
      0x43, 0x0d, 0x06,              // mov %rsp,%rbp: cfa rbp+16
      0x0a,                          // remember state
      0x50, 0x0c, 0x07, 0x08, 0xc6,  // leave: cfa rsp+8, rbp restored
      0x41, 0x0b,                    // ret; the body goes on as before the epilogue
  });
  ASSERT_TRUE(c.ok);
  EXPECT_EQ(c.stats.fdes, 1u);
  EXPECT_EQ(c.stats.bad_fdes, 0u);
  EXPECT_EQ(c.stats.truncated_programs, 0u);
  ASSERT_EQ(c.spans.size(), 1u);
  EXPECT_EQ(c.spans[0].begin, kCode);
  EXPECT_EQ(c.spans[0].end, kCode + 0x40);
  EXPECT_EQ(RowsOf(c), (Rows{{0x00, Rsp(8)},
                             {0x01, RspSavedRbp(16, -16)},
                             {0x04, RbpBased(16, -16)},
                             {0x14, Rsp(8)},
                             {0x15, RbpBased(16, -16)}}));
}

TEST(EhFrameParser, MergesRowsWithTheSameRule) {
  const Compiled c = CompileOneFde({0x41, 0x0e, 0x10, 0x41, 0x0e, 0x10, 0x41, 0x2e, 0x08});
  EXPECT_EQ(RowsOf(c), (Rows{{0x00, Rsp(8)}, {0x01, Rsp(16)}}));
}

TEST(EhFrameParser, RecognizesThePltExpression) {
  const Compiled c = CompileOneFde({0x0e, 0x10, 0x46, 0x0e, 0x18, 0x4a, 0x0f, 0x0b, 0x77, 0x08,
                                    0x80, 0x00, 0x3f, 0x1a, 0x3b, 0x2a, 0x33, 0x24, 0x22});
  UnwindRule plt = Kind(CfaKind::kPlt);
  plt.cfa_offset = 11;
  EXPECT_EQ(RowsOf(c), (Rows{{0x00, Rsp(16)}, {0x06, Rsp(24)}, {0x10, plt}}));
}

TEST(EhFrameParser, MarksRulesItCannotHold) {
  // CFA in r10 (stack realignment).
  EXPECT_EQ(RowsOf(CompileOneFde({0x41, 0x0c, 0x0a, 0x00})),
            (Rows{{0x00, Rsp(8)}, {0x01, Kind(CfaKind::kUnexpressible)}}));
  // Other CFA expressions: read through R10, through RSP, or more than one operation.
  for (const std::vector<uint8_t>& expression : {std::vector<uint8_t>{0x7a, 0x00, 0x06},
                                                 {0x77, 0x08, 0x06},
                                                 {0x76, 0x78, 0x06, 0x06},
                                                 {0x76, 0x78, 0x23, 0x08},
                                                 {0x76},
                                                 {0x06}}) {
    std::vector<uint8_t> program = {0x41, 0x0f, static_cast<uint8_t>(expression.size())};
    program.insert(program.end(), expression.begin(), expression.end());
    EXPECT_EQ(RowsOf(CompileOneFde(program)),
              (Rows{{0x00, Rsp(8)}, {0x01, Kind(CfaKind::kUnexpressible)}}))
        << testing::PrintToString(expression);
  }
  // RBP saved at an address other than RBP+n, read through RBP, or kept in another register.
  EXPECT_EQ(RowsOf(CompileOneFde({0x41, 0x10, 0x06, 0x02, 0x77, 0x00})),
            (Rows{{0x00, Rsp(8)}, {0x01, Kind(CfaKind::kUnexpressible)}}));
  EXPECT_EQ(RowsOf(CompileOneFde({0x41, 0x10, 0x06, 0x03, 0x76, 0x00, 0x06})),
            (Rows{{0x00, Rsp(8)}, {0x01, Kind(CfaKind::kUnexpressible)}}));
  EXPECT_EQ(RowsOf(CompileOneFde({0x41, 0x09, 0x06, 0x03})),
            (Rows{{0x00, Rsp(8)}, {0x01, Kind(CfaKind::kUnexpressible)}}));
  // An expression for a register the walk does not track changes nothing.
  EXPECT_EQ(RowsOf(CompileOneFde({0x41, 0x10, 0x0c, 0x02, 0x76, 0x00})), (Rows{{0x00, Rsp(8)}}));
  // An undefined return address marks the outermost frame.
  EXPECT_EQ(RowsOf(CompileOneFde({0x41, 0x07, 0x10})),
            (Rows{{0x00, Rsp(8)}, {0x01, Kind(CfaKind::kOutermost)}}));
}

TEST(EhFrameParser, UnderstandsFunctionsThatRealignTheStack) {
  // GCC's DRAP prologue and body, as in libcublasLt: lea 8(%rsp),%r10 (CFA = R10); and
  // $-64,%rsp; push -8(%r10); push %rbp (RBP saved at RBP+0); mov %rsp,%rbp; push %r10
  // (CFA = *(RBP-8)); ... and the epilogue back to CFA = R10, then RSP+8.
  UnwindRule realigned{-8, 0, CfaKind::kRbpDeref, RbpKind::kAtRbp};
  UnwindRule r10 = Kind(CfaKind::kUnexpressible);
  EXPECT_EQ(RowsOf(CompileOneFde({
                0x45, 0x0c, 0x0a, 0x00,              // def_cfa r10+0
                0x49, 0x10, 0x06, 0x02, 0x76, 0x00,  // expression rbp: breg6 0
                0x44, 0x0f, 0x03, 0x76, 0x78, 0x06,  // def_cfa_expression breg6 -8; deref
                0x60, 0x0c, 0x0a, 0x00,              // def_cfa r10+0
                0x42, 0x0c, 0x07, 0x08,              // def_cfa rsp+8
            })),
            (Rows{{0x00, Rsp(8)},
                  {0x05, r10},
                  {0x12, realigned},
                  {0x32, r10},
                  {0x34, {8, 0, CfaKind::kRsp, RbpKind::kAtRbp}}}));
  // A CFA in a slot further down (more callee-saved registers pushed first), with RBP saved
  // at CFA-16 as usual; and breg6/breg7 without a dereference, which is a plain RBP/RSP+n.
  EXPECT_EQ(RowsOf(CompileOneFde({0x41, 0x86, 0x02, 0x0f, 0x03, 0x76, 0x58, 0x06})),
            (Rows{{0x00, Rsp(8)}, {0x01, {-40, -16, CfaKind::kRbpDeref, RbpKind::kSaved}}}));
  EXPECT_EQ(
      RowsOf(CompileOneFde({0x41, 0x0f, 0x02, 0x76, 0x10, 0x41, 0x0f, 0x02, 0x77, 0x18})),
      (Rows{{0x00, Rsp(8)}, {0x01, {16, 0, CfaKind::kRbp, RbpKind::kSame}}, {0x02, Rsp(24)}}));
}

TEST(EhFrameParser, SignalFramesAreLeftToLibunwind) {
  EhFrameBuilder b(kSectionAddress);
  const size_t cie = b.Cie("zRS", {0x1b});
  b.Fde(cie, kCode, 0x10, {});
  const Compiled c = Compile(b.bytes);
  EXPECT_EQ(RowsOf(c), (Rows{{0x00, Kind(CfaKind::kUnexpressible)}}));
}

TEST(EhFrameParser, AnUnknownOpcodeKeepsTheRowsBeforeIt) {
  const Compiled c = CompileOneFde({0x0e, 0x10, 0x42, 0x0e, 0x20, 0x41, 0x3f, 0x41, 0x0e, 0x08});
  EXPECT_EQ(c.stats.truncated_programs, 1u);
  EXPECT_EQ(RowsOf(c),
            (Rows{{0x00, Rsp(16)}, {0x02, Rsp(32)}, {0x03, Kind(CfaKind::kUnexpressible)}}));
}

TEST(EhFrameParser, HugeAdvancesStopAtTheEndOfTheFunction) {
  // advance_loc4 by 4 GiB - 1, then more instructions that no longer apply.
  Compiled c = CompileOneFde(
      {0x0e, 0x10, 0x04, 0xff, 0xff, 0xff, 0xff, 0x0e, 0x20, 0x04, 0xff, 0xff, 0xff, 0xff, 0x3f});
  EXPECT_EQ(c.stats.truncated_programs, 0u);
  EXPECT_EQ(RowsOf(c), (Rows{{0x00, Rsp(16)}}));
  // A code alignment factor that overflows the advance.
  EhFrameBuilder b(kSectionAddress);
  const size_t cie =
      b.Cie("zR", {0x1b}, EhFrameBuilder::StandardInitialInstructions(), 1, uint64_t{1} << 62);
  b.Fde(cie, kCode, 0x40, {0x0e, 0x10, 0x44, 0x0e, 0x20});
  c = Compile(b.bytes);
  EXPECT_EQ(RowsOf(c), (Rows{{0x00, Rsp(16)}}));
}

TEST(EhFrameParser, ALocationMovedBackwardsEndsTheProgram) {
  EhFrameBuilder b(kSectionAddress);
  const size_t cie = b.Cie();
  // advance 4, then set_loc to before the function; the operand sits 2 bytes into the
  // program, which starts 17 bytes into the FDE (length, CIE pointer, start, range, 0).
  const uint32_t back = b.PcRelative(kCode - 8, b.bytes.size() + 17 + 2);
  b.Fde(cie, kCode, 0x40,
        {0x44, 0x01, static_cast<uint8_t>(back), static_cast<uint8_t>(back >> 8),
         static_cast<uint8_t>(back >> 16), static_cast<uint8_t>(back >> 24)});
  const Compiled c = Compile(b.bytes);
  EXPECT_EQ(c.stats.truncated_programs, 1u);
  EXPECT_EQ(RowsOf(c), (Rows{{0x00, Rsp(8)}, {0x04, Kind(CfaKind::kUnexpressible)}}));
}

TEST(EhFrameParser, RememberedStatesAreBounded) {
  std::vector<uint8_t> program(17, 0x0a);  // 17 remember_state: one too many
  Compiled c = CompileOneFde(program);
  EXPECT_EQ(c.stats.truncated_programs, 1u);
  EXPECT_EQ(RowsOf(c), (Rows{{0x00, Kind(CfaKind::kUnexpressible)}}));
  c = CompileOneFde({0x41, 0x0b});  // restore_state with nothing remembered
  EXPECT_EQ(RowsOf(c), (Rows{{0x00, Rsp(8)}, {0x01, Kind(CfaKind::kUnexpressible)}}));
}

TEST(EhFrameParser, RefusesCiesItCannotRead) {
  struct Case {
    std::string augmentation;
    std::vector<uint8_t> data;
    uint8_t version;
    bool readable;
  };
  const Case cases[] = {
      {"zR", {0x1b}, 1, true},
      {"zR", {0x1b}, 3, true},
      {"zPLR", {0x9b, 0, 0, 0, 0, 0x1b, 0x1b}, 1, true},  // personality, LSDA, FDE encoding
      {"zRX", {0x1b, 0xaa}, 1, true},                     // unknown letter: skipped by length
      {"eh", {}, 1, false},                               // GCC 2.x
      {"xyz", {}, 1, false},
      {"zR", {0x1b}, 2, false},  // no such version
      {"zR", {0x9b}, 1, false},  // indirect FDE addresses
      {"zR", {0x2b}, 1, false},  // text-relative FDE addresses
      {"zP", {0x0d}, 1, false},  // personality in an unknown format
  };
  for (const Case& test : cases) {
    SCOPED_TRACE(test.augmentation + " v" + std::to_string(test.version));
    EhFrameBuilder b(kSectionAddress);
    const size_t cie = b.Cie(test.augmentation, test.data,
                             EhFrameBuilder::StandardInitialInstructions(), test.version);
    b.Fde(cie, kCode, 0x10, {}, test.augmentation[0] == 'z');
    const Compiled c = Compile(b.bytes);
    EXPECT_EQ(c.ok, test.readable);
    EXPECT_EQ(c.stats.bad_fdes, test.readable ? 0u : 1u);
    EXPECT_EQ(c.spans.size(), test.readable ? 1u : 0u);
  }
}

// A section of one CIE and three FDEs, as a well-formed starting point for damage.
std::vector<uint8_t> ThreeFunctions() {
  EhFrameBuilder b(kSectionAddress);
  const size_t cie = b.Cie();
  b.Fde(cie, kCode, 0x40, {0x41, 0x0e, 0x10, 0x86, 0x02, 0x43, 0x0d, 0x06, 0x50, 0x0c, 0x07, 0x08});
  b.Fde(cie, kCode + 0x40, 0x20, {0x44, 0x0e, 0x30, 0x0a, 0x41, 0x0e, 0x08, 0x41, 0x0b});
  b.Fde(cie, kCode + 0x60, 0x100, {0x42, 0x03, 0x00, 0x01, 0x0e, 0x80, 0x80, 0x04});
  b.Terminator();
  return b.bytes;
}

// What must hold for any input: rows inside their FDE's range, ascending.
void ExpectWellFormed(const Compiled& c) {
  for (const FdeSpan& span : c.spans) {
    ASSERT_LT(span.begin, span.end);
    ASSERT_LE(span.first + span.count, c.rows.size());
    for (uint32_t i = span.first; i < span.first + span.count; ++i) {
      ASSERT_GE(c.rows[i].pc, span.begin);
      ASSERT_LT(c.rows[i].pc, span.end);
      if (i > span.first) ASSERT_GT(c.rows[i].pc, c.rows[i - 1].pc);
    }
  }
}

TEST(EhFrameParser, EveryTruncationIsReadSafely) {
  const std::vector<uint8_t> whole = ThreeFunctions();
  const Compiled full = Compile(whole);
  ASSERT_EQ(full.spans.size(), 3u);
  for (size_t size = 0; size <= whole.size(); ++size) {
    SCOPED_TRACE("size " + std::to_string(size));
    const Compiled c = Compile(std::vector<uint8_t>(whole.begin(), whole.begin() + size));
    ExpectWellFormed(c);
    EXPECT_LE(c.spans.size(), 3u);
    // A cut section keeps exactly the FDEs that fit whole.
    if (size == whole.size() - 4) EXPECT_EQ(c.spans.size(), 3u);
  }
}

TEST(EhFrameParser, BadLengthsAreRefused) {
  std::vector<uint8_t> bytes = ThreeFunctions();
  // The second FDE claims to run past the section; the sequential reader stops there.
  const uint32_t first_cie_length = bytes[0] | bytes[1] << 8;
  const size_t fde1 = 4 + first_cie_length;
  const size_t fde2 = fde1 + 4 + (bytes[fde1] | bytes[fde1 + 1] << 8);
  std::vector<uint8_t> damaged = bytes;
  damaged[fde2] = 0xf0;
  damaged[fde2 + 1] = 0xff;
  damaged[fde2 + 2] = 0xff;
  damaged[fde2 + 3] = 0x7f;
  Compiled c = Compile(damaged);
  ExpectWellFormed(c);
  EXPECT_EQ(c.spans.size(), 1u);
  // The 64-bit length escape with a length that does not fit.
  damaged = bytes;
  std::memset(damaged.data() + fde2, 0xff, 4);
  c = Compile(damaged);
  ExpectWellFormed(c);
  EXPECT_EQ(c.spans.size(), 1u);
  // An FDE whose CIE pointer points before the section.
  damaged = bytes;
  damaged[fde1 + 4] = 0xff;
  damaged[fde1 + 5] = 0xff;
  c = Compile(damaged);
  EXPECT_EQ(c.stats.bad_fdes, 1u);
  EXPECT_EQ(c.spans.size(), 2u);
}

void DamageAndCompile(const std::vector<uint8_t>& original, int rounds, uint32_t seed) {
  std::mt19937 random(seed);
  for (int round = 0; round < rounds; ++round) {
    std::vector<uint8_t> bytes = original;
    const int changes = 1 + static_cast<int>(random() % 6);
    for (int i = 0; i < changes; ++i) {
      const size_t at = random() % bytes.size();
      switch (random() % 4) {
        case 0:
          bytes[at] = static_cast<uint8_t>(random());
          break;
        case 1:
          bytes[at] ^= static_cast<uint8_t>(1u << (random() % 8));
          break;
        case 2:
          bytes[at] = random() % 2 ? 0xff : 0x00;
          break;
        default:
          bytes.resize(at + 1);  // cut short
          break;
      }
    }
    const Compiled c = Compile(bytes);
    ExpectWellFormed(c);
  }
}

TEST(EhFrameParser, RandomDamageNeverReadsOutside) {
  DamageAndCompile(ThreeFunctions(), 3000, 12345);
}

// The first 32 KiB of this process's libc .eh_frame: real CIEs, FDEs and programs.
std::vector<uint8_t> LibcEhFrameSample() {
  struct Found {
    std::vector<uint8_t> bytes;
  } found;
  dl_iterate_phdr(
      [](dl_phdr_info* info, size_t, void* data) {
        auto* out = static_cast<Found*>(data);
        if (info->dlpi_name == nullptr || std::strstr(info->dlpi_name, "libc.so") == nullptr) {
          return 0;
        }
        for (int i = 0; i < info->dlpi_phnum; ++i) {
          if (info->dlpi_phdr[i].p_type != PT_GNU_EH_FRAME) continue;
          const uint64_t hdr_address = info->dlpi_addr + info->dlpi_phdr[i].p_vaddr;
          EhFrameBytes hdr{reinterpret_cast<const uint8_t*>(hdr_address),
                           info->dlpi_phdr[i].p_memsz, hdr_address};
          EhFrameHdr parsed;
          if (!ParseEhFrameHdr(hdr, &parsed)) return 0;
          const auto* section = reinterpret_cast<const uint8_t*>(parsed.eh_frame_address);
          out->bytes.assign(section, section + 32 * 1024);
          return 1;
        }
        return 0;
      },
      &found);
  return found.bytes;
}

TEST(EhFrameParser, RandomDamageToARealSectionNeverReadsOutside) {
  const std::vector<uint8_t> sample = LibcEhFrameSample();
  if (sample.empty()) GTEST_SKIP() << "libc has no .eh_frame_hdr here";
  const Compiled intact = Compile(sample);
  EXPECT_GT(intact.spans.size(), 100u);
  ExpectWellFormed(intact);
  DamageAndCompile(sample, 150, 777);
}

// A header with a sorted table (datarel sdata4), as GNU ld writes it, in front of `eh_frame`.
std::vector<uint8_t> HeaderFor(uint64_t hdr_address, uint64_t eh_frame_address,
                               const std::vector<std::pair<uint64_t, uint64_t>>& pc_and_fde,
                               uint32_t count) {
  EhFrameBuilder h(hdr_address);
  h.bytes = {1, 0x1b, 0x03, 0x3b};
  h.U32(h.PcRelative(eh_frame_address, h.bytes.size()));
  h.U32(count);
  for (const auto& [pc, fde] : pc_and_fde) {
    h.U32(static_cast<uint32_t>(pc - hdr_address));
    h.U32(static_cast<uint32_t>(fde - hdr_address));
  }
  return h.bytes;
}

TEST(EhFrameParser, FindsFdesThroughTheHeaderTable) {
  const uint64_t hdr_address = kSectionAddress - 0x1000;
  EhFrameBuilder b(kSectionAddress);
  const size_t cie = b.Cie();
  const size_t fde1 = b.Fde(cie, kCode, 0x40, {0x41, 0x0e, 0x10});
  const size_t fde2 = b.Fde(cie, kCode + 0x40, 0x20, {});
  b.Terminator();
  GuardedBytes section(b.bytes);
  const std::vector<std::pair<uint64_t, uint64_t>> table = {{kCode, kSectionAddress + fde1},
                                                            {kCode + 0x40, kSectionAddress + fde2}};
  struct Case {
    uint32_t count;
    std::vector<std::pair<uint64_t, uint64_t>> entries;
    bool table_used;
    size_t spans;
  };
  const Case cases[] = {
      {2, table, true, 2},
      {1, {table[1]}, true, 1},    // lists only the second
      {1000000, table, false, 2},  // count past the header: scan
      {2, {table[0], {kCode + 0x40, kSectionAddress + 0x9000}}, true, 1},  // FDE outside
      {2, {table[0], {kCode + 0x40, kSectionAddress + 3}}, true, 1},       // not at an FDE
  };
  for (const Case& test : cases) {
    SCOPED_TRACE("count " + std::to_string(test.count));
    GuardedBytes hdr(HeaderFor(hdr_address, kSectionAddress, test.entries, test.count));
    EhFrameHdr parsed;
    ASSERT_TRUE(ParseEhFrameHdr(hdr.View(hdr_address), &parsed));
    EXPECT_EQ(parsed.eh_frame_address, kSectionAddress);
    Compiled c;
    const EhFrameBytes hdr_view = hdr.View(hdr_address);
    CompileEhFrame(section.View(kSectionAddress), &hdr_view, &parsed, &c.rows, &c.spans, &c.stats);
    EXPECT_EQ(c.stats.used_hdr_table, test.table_used);
    EXPECT_EQ(c.spans.size(), test.spans);
    ExpectWellFormed(c);
  }
  // Headers that cannot be read at all.
  for (std::vector<uint8_t> bad :
       {std::vector<uint8_t>{}, std::vector<uint8_t>{2, 0x1b, 0x03, 0x3b},
        std::vector<uint8_t>{1, 0xff, 0x03, 0x3b},
        std::vector<uint8_t>{1, 0x1b, 0x03, 0x3b, 0x00}}) {
    GuardedBytes hdr(bad);
    EhFrameHdr parsed;
    EXPECT_FALSE(ParseEhFrameHdr(hdr.View(hdr_address), &parsed));
  }
}

}  // namespace
}  // namespace gpuperf
