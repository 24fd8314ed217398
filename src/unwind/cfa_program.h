// One call-frame program (a CIE's initial instructions or an FDE's) run into rows of
// UnwindRules: the interpreter of the .eh_frame compiler (eh_frame_parser.h). Only the rules
// the table walk uses are tracked: the CFA, RBP and the return address. x86-64 only.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "unwind/eh_frame_reader.h"

namespace gpuperf::cfi {

// The rule for one register, as far as we need to tell them apart.
struct RegisterRule {
  enum Kind : uint8_t {
    kUnspecified,
    kSame,
    kUndefined,
    kOffset,
    kAtRbp,
    kOther
  } kind = kUnspecified;
  int64_t offset = 0;  // kOffset: saved at CFA + offset; kAtRbp: at RBP + offset
};

struct FrameState {
  // kRbpDeref: CFA = *(RBP + cfa_offset), the expression of stack-realigning functions.
  enum CfaType : uint8_t { kRegisterOffset, kPltExpression, kRbpDeref, kOtherExpression };
  CfaType cfa_type = kRegisterOffset;
  uint64_t cfa_register = kDwarfRsp;
  int64_t cfa_offset = 8;
  RegisterRule rbp{RegisterRule::kSame, 0};
  RegisterRule return_address;
};

struct Cie {
  uint64_t code_align = 1;
  int64_t data_align = -8;
  uint64_t return_address_register = kDwarfReturnAddress;
  uint8_t fde_encoding = 0;  // absptr
  bool has_augmentation_data = false;
  bool signal_frame = false;
  size_t program_begin = 0, program_end = 0;
  FrameState initial;
};

// Appends one FDE's rows, skipping a row whose rule equals the one before it.
class RowWriter {
 public:
  RowWriter(std::vector<CfiRow>* rows, EhFrameStats* stats) : rows_(rows), stats_(stats) {}

  void Emit(uint64_t pc, const UnwindRule& rule) {
    if (written_ > 0 && rows_->back().rule == rule) return;
    rows_->push_back({pc, rule});
    ++written_;
    ++stats_->rows;
    if (rule.cfa == CfaKind::kUnexpressible) ++stats_->unexpressible_rows;
  }
  uint32_t written() const { return written_; }

 private:
  std::vector<CfiRow>* rows_;
  EhFrameStats* stats_;
  uint32_t written_ = 0;
};

UnwindRule RuleOfKind(CfaKind kind);

// The row for `state`; anything the table cannot hold becomes the one kUnexpressible rule
// (all fields but `cfa` zero, so that equal rows merge).
UnwindRule ToRule(const FrameState& state, const Cie& cie);

// Runs the program in bytes [begin, end) from `state`. For a CIE's initial instructions
// `loc` is null and any advance is an error; for an FDE, `writer` gets a row each time the
// location advances, and the run ends once it reaches `loc_end`. False on a damaged or
// unknown instruction; `state` and `*loc` then hold where it stopped.
bool RunCfaProgram(const EhFrameBytes& bytes, const Cie& cie, size_t begin, size_t end,
                   FrameState* state, uint64_t* loc, uint64_t loc_end, RowWriter* writer);

}  // namespace gpuperf::cfi
