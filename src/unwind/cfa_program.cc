#include "unwind/cfa_program.h"

#include <limits>

namespace gpuperf::cfi {
namespace {

bool FitsIn16(int64_t value) {
  return value >= std::numeric_limits<int16_t>::min() &&
         value <= std::numeric_limits<int16_t>::max();
}
bool FitsIn32(int64_t value) {
  return value >= std::numeric_limits<int32_t>::min() &&
         value <= std::numeric_limits<int32_t>::max();
}

// The PLT's CFA expression as GNU ld writes it: DW_OP_breg7 8; DW_OP_breg16 0; DW_OP_lit15;
// DW_OP_and; DW_OP_lit<N>; DW_OP_ge; DW_OP_lit3; DW_OP_shl; DW_OP_plus. It adds 8 to the
// CFA once the entry's push has run (RIP & 15 >= N). Returns N, or -1 for anything else.
int PltThreshold(const uint8_t* expression, uint64_t length) {
  static constexpr uint8_t kPattern[] = {0x77, 0x08, 0x80, 0x00, 0x3f, 0x1a,
                                         0x00, 0x2a, 0x33, 0x24, 0x22};
  constexpr size_t kLiteralAt = 6;
  if (length != sizeof(kPattern)) return -1;
  for (size_t i = 0; i < sizeof(kPattern); ++i) {
    if (i != kLiteralAt && expression[i] != kPattern[i]) return -1;
  }
  const uint8_t literal = expression[kLiteralAt];
  if (literal < 0x30 || literal > 0x4f) return -1;  // DW_OP_lit0..DW_OP_lit31
  return literal - 0x30;
}

// A DWARF expression of the form DW_OP_breg<n> <offset> [DW_OP_deref], alone: the forms GCC
// writes for functions that realign the stack (the CFA read from a slot below RBP, RBP
// saved at RBP+0). False for anything else.
struct RegisterExpression {
  uint64_t reg = 0;
  int64_t offset = 0;
  bool deref = false;
};
bool ParseRegisterExpression(const EhFrameBytes& bytes, size_t at, uint64_t length,
                             RegisterExpression* out) {
  constexpr uint8_t kOpBreg0 = 0x70, kOpBreg31 = 0x8f, kOpDeref = 0x06;
  ByteReader in(bytes, at, at + length);
  uint8_t op = 0;
  if (!in.Fixed(&op) || op < kOpBreg0 || op > kOpBreg31 || !in.Sleb(&out->offset)) return false;
  out->reg = op - kOpBreg0;
  out->deref = false;
  if (!in.AtEnd()) {
    if (!in.Fixed(&op) || op != kOpDeref) return false;
    out->deref = true;
  }
  return in.ok() && in.AtEnd();
}

// Runs a call-frame program. For a CIE's initial instructions `loc` is null and any advance
// is an error; for an FDE, rows are written as the location advances.
class CfaProgram {
 public:
  CfaProgram(const EhFrameBytes& bytes, const Cie& cie) : bytes_(bytes), cie_(cie) {}

  // False on a damaged or unknown instruction; `state` and `*loc` then hold where it stopped.
  bool Run(size_t begin, size_t end, FrameState* state, uint64_t* loc, uint64_t loc_end,
           RowWriter* writer) {
    ByteReader in(bytes_, begin, end);
    state_ = state;
    loc_ = loc;
    loc_end_ = loc_end;
    writer_ = writer;
    depth_ = 0;
    while (!in.AtEnd()) {
      if (loc_ != nullptr && *loc_ >= loc_end_) return true;  // the rest is past this FDE
      if (!Step(in)) return false;
    }
    return in.ok();
  }

 private:
  static constexpr int kMaxRememberedStates = 16;

  bool Advance(uint64_t delta) {
    if (loc_ == nullptr) return false;
    uint64_t scaled = 0;
    if (__builtin_mul_overflow(delta, cie_.code_align, &scaled)) scaled = UINT64_MAX;
    return MoveTo(*loc_ > UINT64_MAX - scaled ? UINT64_MAX : *loc_ + scaled);
  }
  bool MoveTo(uint64_t new_loc) {
    if (loc_ == nullptr || new_loc < *loc_) return false;
    if (new_loc > *loc_) {
      writer_->Emit(*loc_, ToRule(*state_, cie_));
      *loc_ = new_loc;
    }
    return true;
  }

  RegisterRule* RuleFor(uint64_t reg) {
    if (reg == kDwarfRbp) return &state_->rbp;
    if (reg == cie_.return_address_register) return &state_->return_address;
    return nullptr;  // registers the walk does not track
  }
  void SetRule(uint64_t reg, RegisterRule rule) {
    if (RegisterRule* target = RuleFor(reg)) *target = rule;
  }
  void SetOffset(uint64_t reg, int64_t factored) {
    int64_t offset = 0;
    if (__builtin_mul_overflow(factored, cie_.data_align, &offset)) {
      SetRule(reg, {RegisterRule::kOther, 0});
    } else {
      SetRule(reg, {RegisterRule::kOffset, offset});
    }
  }
  void Restore(uint64_t reg) {
    if (reg == kDwarfRbp) state_->rbp = cie_.initial.rbp;
    if (reg == cie_.return_address_register) state_->return_address = cie_.initial.return_address;
  }
  void DefineCfaByExpression(size_t at, uint64_t length) {
    const int threshold = PltThreshold(bytes_.data + at, length);
    RegisterExpression e;
    if (threshold >= 0) {
      state_->cfa_type = FrameState::kPltExpression;
      state_->cfa_offset = threshold;
    } else if (ParseRegisterExpression(bytes_, at, length, &e) && e.reg == kDwarfRbp && e.deref) {
      state_->cfa_type = FrameState::kRbpDeref;
      state_->cfa_offset = e.offset;
    } else if (ParseRegisterExpression(bytes_, at, length, &e) && !e.deref) {
      state_->cfa_type = FrameState::kRegisterOffset;  // the same as DW_CFA_def_cfa
      state_->cfa_register = e.reg;
      state_->cfa_offset = e.offset;
    } else {
      state_->cfa_type = FrameState::kOtherExpression;
      state_->cfa_offset = -1;
    }
  }
  void SetCfaOffset(int64_t offset) {
    state_->cfa_offset = offset;
    if (state_->cfa_type != FrameState::kRegisterOffset)
      state_->cfa_type = FrameState::kOtherExpression;
  }
  bool ScaledOffset(ByteReader& in, int64_t* out) {
    int64_t factored = 0;
    if (!in.Sleb(&factored)) return false;
    if (__builtin_mul_overflow(factored, cie_.data_align, out)) *out = INT64_MAX;
    return true;
  }
  bool SignedFactored(ByteReader& in, int64_t* out) {
    uint64_t factored = 0;
    if (!in.Uleb(&factored)) return false;
    *out = factored > static_cast<uint64_t>(INT64_MAX) ? INT64_MAX : static_cast<int64_t>(factored);
    return true;
  }

  bool Step(ByteReader& in) {
    uint8_t op = 0;
    if (!in.Fixed(&op)) return false;
    const uint8_t low = op & 0x3f;
    switch (op >> 6) {
      case 1:  // DW_CFA_advance_loc
        return Advance(low);
      case 2: {  // DW_CFA_offset
        int64_t factored = 0;
        if (!SignedFactored(in, &factored)) return false;
        SetOffset(low, factored);
        return true;
      }
      case 3:  // DW_CFA_restore
        Restore(low);
        return true;
      default:
        break;
    }
    uint64_t reg = 0, value = 0;
    int64_t svalue = 0;
    switch (op) {
      case 0x00:  // DW_CFA_nop
        return true;
      case 0x01: {  // DW_CFA_set_loc
        uint64_t target = 0;
        if (!in.Pointer(cie_.fde_encoding, 0, &target)) return false;
        return MoveTo(target);
      }
      case 0x02: {  // DW_CFA_advance_loc1
        uint8_t delta = 0;
        return in.Fixed(&delta) && Advance(delta);
      }
      case 0x03: {  // DW_CFA_advance_loc2
        uint16_t delta = 0;
        return in.Fixed(&delta) && Advance(delta);
      }
      case 0x04: {  // DW_CFA_advance_loc4
        uint32_t delta = 0;
        return in.Fixed(&delta) && Advance(delta);
      }
      case 0x05:  // DW_CFA_offset_extended
        if (!in.Uleb(&reg) || !SignedFactored(in, &svalue)) return false;
        SetOffset(reg, svalue);
        return true;
      case 0x06:  // DW_CFA_restore_extended
        if (!in.Uleb(&reg)) return false;
        Restore(reg);
        return true;
      case 0x07:  // DW_CFA_undefined
        if (!in.Uleb(&reg)) return false;
        SetRule(reg, {RegisterRule::kUndefined, 0});
        return true;
      case 0x08:  // DW_CFA_same_value
        if (!in.Uleb(&reg)) return false;
        SetRule(reg, {RegisterRule::kSame, 0});
        return true;
      case 0x09:  // DW_CFA_register
        if (!in.Uleb(&reg) || !in.Uleb(&value)) return false;
        SetRule(reg, {RegisterRule::kOther, 0});
        return true;
      case 0x0a:  // DW_CFA_remember_state (the CFA rule included, as GCC's epilogues expect)
        if (depth_ >= kMaxRememberedStates) return false;
        remembered_[depth_++] = *state_;
        return true;
      case 0x0b:  // DW_CFA_restore_state
        if (depth_ == 0) return false;
        *state_ = remembered_[--depth_];
        return true;
      case 0x0c:  // DW_CFA_def_cfa
        if (!in.Uleb(&reg) || !in.Uleb(&value)) return false;
        state_->cfa_type = FrameState::kRegisterOffset;
        state_->cfa_register = reg;
        state_->cfa_offset = value > INT64_MAX ? INT64_MAX : static_cast<int64_t>(value);
        return true;
      case 0x0d:  // DW_CFA_def_cfa_register
        if (!in.Uleb(&reg)) return false;
        if (state_->cfa_type == FrameState::kRegisterOffset) {
          state_->cfa_register = reg;
        } else {
          state_->cfa_type = FrameState::kOtherExpression;  // no offset to keep: invalid
        }
        return true;
      case 0x0e:  // DW_CFA_def_cfa_offset
        if (!in.Uleb(&value)) return false;
        SetCfaOffset(value > INT64_MAX ? INT64_MAX : static_cast<int64_t>(value));
        return true;
      case 0x0f: {  // DW_CFA_def_cfa_expression
        if (!in.Uleb(&value)) return false;
        const size_t at = in.pos();
        if (!in.Skip(value)) return false;
        DefineCfaByExpression(at, value);
        return true;
      }
      case 0x10: {  // DW_CFA_expression: the register is saved at the expression's value
        if (!in.Uleb(&reg) || !in.Uleb(&value)) return false;
        const size_t at = in.pos();
        if (!in.Skip(value)) return false;
        RegisterExpression e;
        if (ParseRegisterExpression(bytes_, at, value, &e) && e.reg == kDwarfRbp && !e.deref) {
          SetRule(reg, {RegisterRule::kAtRbp, e.offset});
        } else {
          SetRule(reg, {RegisterRule::kOther, 0});
        }
        return true;
      }
      case 0x16:  // DW_CFA_val_expression
        if (!in.Uleb(&reg) || !in.Uleb(&value) || !in.Skip(value)) return false;
        SetRule(reg, {RegisterRule::kOther, 0});
        return true;
      case 0x11:  // DW_CFA_offset_extended_sf
        if (!in.Uleb(&reg) || !in.Sleb(&svalue)) return false;
        SetOffset(reg, svalue);
        return true;
      case 0x12:  // DW_CFA_def_cfa_sf
        if (!in.Uleb(&reg) || !ScaledOffset(in, &svalue)) return false;
        state_->cfa_type = FrameState::kRegisterOffset;
        state_->cfa_register = reg;
        state_->cfa_offset = svalue;
        return true;
      case 0x13:  // DW_CFA_def_cfa_offset_sf
        if (!ScaledOffset(in, &svalue)) return false;
        SetCfaOffset(svalue);
        return true;
      case 0x14:  // DW_CFA_val_offset
        if (!in.Uleb(&reg) || !in.Uleb(&value)) return false;
        SetRule(reg, {RegisterRule::kOther, 0});
        return true;
      case 0x15:  // DW_CFA_val_offset_sf
        if (!in.Uleb(&reg) || !in.Sleb(&svalue)) return false;
        SetRule(reg, {RegisterRule::kOther, 0});
        return true;
      case 0x2e:  // DW_CFA_GNU_args_size: only matters to exception handling
        return in.Uleb(&value);
      case 0x2f:  // DW_CFA_GNU_negative_offset_extended
        if (!in.Uleb(&reg) || !in.Uleb(&value)) return false;
        SetOffset(reg, value > INT64_MAX ? INT64_MIN + 1 : -static_cast<int64_t>(value));
        return true;
      default:
        return false;  // unknown to us: the rest of the program cannot be trusted
    }
  }

  const EhFrameBytes& bytes_;
  const Cie& cie_;
  FrameState* state_ = nullptr;
  uint64_t* loc_ = nullptr;
  uint64_t loc_end_ = 0;
  RowWriter* writer_ = nullptr;
  FrameState remembered_[kMaxRememberedStates];
  int depth_ = 0;
};

}  // namespace

UnwindRule RuleOfKind(CfaKind kind) {
  UnwindRule rule;
  rule.cfa = kind;
  return rule;
}

UnwindRule ToRule(const FrameState& state, const Cie& cie) {
  // A signal frame's "return address" is the interrupted instruction, not a call's: the
  // walk would look it up at pc-1. libunwind knows how; we do not try.
  if (cie.signal_frame) return RuleOfKind(CfaKind::kUnexpressible);
  if (state.return_address.kind == RegisterRule::kUndefined) return RuleOfKind(CfaKind::kOutermost);
  UnwindRule rule;
  const bool return_address_known =
      state.return_address.kind == RegisterRule::kOffset && state.return_address.offset == -8;
  const bool rbp_saved =
      state.rbp.kind == RegisterRule::kOffset || state.rbp.kind == RegisterRule::kAtRbp;
  const bool rbp_known = state.rbp.kind == RegisterRule::kUnspecified ||
                         state.rbp.kind == RegisterRule::kSame ||
                         (rbp_saved && FitsIn16(state.rbp.offset));
  if (!return_address_known || !rbp_known || !FitsIn32(state.cfa_offset)) {
    return RuleOfKind(CfaKind::kUnexpressible);
  }
  if (rbp_saved) {
    rule.rbp = state.rbp.kind == RegisterRule::kOffset ? RbpKind::kSaved : RbpKind::kAtRbp;
    rule.rbp_offset = static_cast<int16_t>(state.rbp.offset);
  }
  rule.cfa_offset = static_cast<int32_t>(state.cfa_offset);
  if (state.cfa_type == FrameState::kPltExpression) {
    rule.cfa = CfaKind::kPlt;
  } else if (state.cfa_type == FrameState::kRbpDeref) {
    rule.cfa = CfaKind::kRbpDeref;
  } else if (state.cfa_type == FrameState::kRegisterOffset && state.cfa_register == kDwarfRsp) {
    rule.cfa = CfaKind::kRsp;
  } else if (state.cfa_type == FrameState::kRegisterOffset && state.cfa_register == kDwarfRbp) {
    rule.cfa = CfaKind::kRbp;
  } else {
    return RuleOfKind(CfaKind::kUnexpressible);
  }
  return rule;
}

bool RunCfaProgram(const EhFrameBytes& bytes, const Cie& cie, size_t begin, size_t end,
                   FrameState* state, uint64_t* loc, uint64_t loc_end, RowWriter* writer) {
  CfaProgram program(bytes, cie);
  return program.Run(begin, end, state, loc, loc_end, writer);
}

}  // namespace gpuperf::cfi
