#include "inject/stack/eh_frame_parser.h"

#include <cstring>
#include <limits>
#include <type_traits>

namespace gpuperf {
namespace {

// DWARF registers on x86-64 (System V psABI, figure 3.36).
constexpr uint64_t kDwarfRbp = 6;
constexpr uint64_t kDwarfRsp = 7;
constexpr uint64_t kDwarfReturnAddress = 16;

// DW_EH_PE_* pointer encodings: the low nibble is the format, the next three bits the base.
constexpr uint8_t kPeOmit = 0xff;
constexpr uint8_t kPeIndirect = 0x80;
constexpr uint8_t kPeApplicationMask = 0x70;
constexpr uint8_t kPePcrel = 0x10;
constexpr uint8_t kPeDatarel = 0x30;
constexpr uint8_t kPeAligned = 0x50;
constexpr uint8_t kPeDatarelSdata4 = 0x3b;  // the .eh_frame_hdr table as GNU ld writes it

// Bounded little-endian reads over [pos, end) of an EhFrameBytes; a failed read sets a
// sticky error and returns false.
class ByteReader {
 public:
  ByteReader(const EhFrameBytes& bytes, size_t pos, size_t end)
      : bytes_(bytes), pos_(pos), end_(end < bytes.size ? end : bytes.size) {
    if (pos_ > end_) ok_ = false;
  }

  bool ok() const { return ok_; }
  size_t pos() const { return pos_; }
  size_t end() const { return end_; }
  bool AtEnd() const { return pos_ >= end_; }
  uint64_t address() const { return bytes_.address + pos_; }

  bool Bytes(void* out, size_t n) {
    if (!ok_ || end_ - pos_ < n) return Fail();
    std::memcpy(out, bytes_.data + pos_, n);
    pos_ += n;
    return true;
  }
  template <class T>
  bool Fixed(T* out) {
    return Bytes(out, sizeof(T));
  }
  bool Skip(uint64_t n) {
    if (!ok_ || end_ - pos_ < n) return Fail();
    pos_ += static_cast<size_t>(n);
    return true;
  }
  bool Uleb(uint64_t* out) { return Leb128(false, out); }
  bool Sleb(int64_t* out) {
    uint64_t value = 0;
    if (!Leb128(true, &value)) return false;
    *out = static_cast<int64_t>(value);
    return true;
  }

  // A value in the format of `encoding`'s low nibble, sign-extended where signed.
  bool Raw(uint8_t encoding, uint64_t* out) {
    switch (encoding & 0x0f) {
      case 0x00:  // absptr
      case 0x04:  // udata8
      case 0x0c:  // sdata8
        return Fixed(out);
      case 0x01:
        return Uleb(out);
      case 0x09:
        return Widened<int64_t>(out, &ByteReader::Sleb);
      case 0x02:
        return Widened<uint16_t>(out);
      case 0x03:
        return Widened<uint32_t>(out);
      case 0x0a:
        return Widened<int16_t>(out);
      case 0x0b:
        return Widened<int32_t>(out);
      default:
        return Fail();
    }
  }

  // An encoded pointer. `data_base` is the base of datarel values (0: none allowed). The
  // indirect bit is not followed: callers that need a code address reject it.
  bool Pointer(uint8_t encoding, uint64_t data_base, uint64_t* out) {
    if (encoding == kPeOmit) return Fail();
    const uint8_t application = encoding & kPeApplicationMask;
    if (application == kPeAligned) {
      const uint64_t misalign = address() & 7;
      if (misalign != 0 && !Skip(8 - misalign)) return false;
    }
    const uint64_t field_address = address();
    uint64_t value = 0;
    if (!Raw(encoding, &value)) return false;
    switch (application) {
      case 0x00:
      case kPeAligned:
        break;
      case kPePcrel:
        value += field_address;
        break;
      case kPeDatarel:
        if (data_base == 0) return Fail();
        value += data_base;
        break;
      default:  // textrel, funcrel: never used on x86-64 Linux
        return Fail();
    }
    *out = value;
    return true;
  }

  bool SkipPointer(uint8_t encoding) {
    if (encoding == kPeOmit) return true;
    if ((encoding & kPeApplicationMask) == kPeAligned) {
      const uint64_t misalign = address() & 7;
      if (misalign != 0 && !Skip(8 - misalign)) return false;
    }
    uint64_t ignored = 0;
    return Raw(encoding, &ignored);
  }

  // Reads a T (with `read`, or as fixed bytes) and widens it to 64 bits, sign-extending
  // signed types.
  template <class T>
  bool Widened(uint64_t* out, bool (ByteReader::*read)(T*) = &ByteReader::Fixed<T>) {
    T value = 0;
    if (!(this->*read)(&value)) return false;
    *out = static_cast<uint64_t>(
        static_cast<std::conditional_t<std::is_signed_v<T>, int64_t, uint64_t>>(value));
    return true;
  }

  // LEB128: 7 bits a byte, low first; bits past 64 are dropped.
  bool Leb128(bool is_signed, uint64_t* out) {
    uint64_t value = 0;
    unsigned shift = 0;
    uint8_t byte = 0;
    do {
      if (!Fixed(&byte)) return false;
      if (shift < 64) value |= static_cast<uint64_t>(byte & 0x7f) << shift;
      shift += 7;
    } while (byte & 0x80);
    if (is_signed && shift < 64 && (byte & 0x40)) value |= ~uint64_t{0} << shift;
    *out = value;
    return true;
  }

 private:
  bool Fail() {
    ok_ = false;
    return false;
  }

  const EhFrameBytes& bytes_;
  size_t pos_;
  size_t end_;
  bool ok_ = true;
};

// The head of a CIE or FDE: its length (32-bit, or 64-bit after 0xffffffff) and its id
// (0 for a CIE; for an FDE the distance back to its CIE), as wide as the length.
struct EntryHeader {
  size_t id_position = 0;  // where the id field starts
  size_t body = 0;         // where the fields after the id start
  size_t end = 0;          // one past the entry
  uint64_t id = 0;
};

// False for a zero length (the section's terminator), a length past the bytes, or an id
// that does not fit.
bool ReadEntryHeader(const EhFrameBytes& bytes, uint64_t offset, EntryHeader* header) {
  if (offset >= bytes.size) return false;
  ByteReader in(bytes, static_cast<size_t>(offset), bytes.size);
  uint32_t short_length = 0;
  uint64_t length = 0;
  if (!in.Fixed(&short_length)) return false;
  const bool is_64 = short_length == 0xffffffffu;
  if (!is_64) {
    length = short_length;
  } else if (!in.Fixed(&length)) {
    return false;
  }
  if (length == 0 || length > in.end() - in.pos()) return false;
  header->id_position = in.pos();
  header->end = in.pos() + static_cast<size_t>(length);
  ByteReader id_field(bytes, in.pos(), header->end);
  uint32_t id32 = 0;
  if (is_64 ? !id_field.Fixed(&header->id) : !id_field.Fixed(&id32)) return false;
  if (!is_64) header->id = id32;
  header->body = id_field.pos();
  return true;
}

// The rule for one register, as far as we need to tell them apart.
struct RegisterRule {
  enum Kind : uint8_t { kUnspecified, kSame, kUndefined, kOffset, kOther } kind = kUnspecified;
  int64_t offset = 0;  // kOffset: saved at CFA + offset
};

struct FrameState {
  enum CfaType : uint8_t { kRegisterOffset, kPltExpression, kOtherExpression };
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

UnwindRule RuleOfKind(CfaKind kind) {
  UnwindRule rule;
  rule.cfa = kind;
  return rule;
}

bool FitsIn16(int64_t value) {
  return value >= std::numeric_limits<int16_t>::min() &&
         value <= std::numeric_limits<int16_t>::max();
}
bool FitsIn32(int64_t value) {
  return value >= std::numeric_limits<int32_t>::min() &&
         value <= std::numeric_limits<int32_t>::max();
}

// The row for `state`; anything the table cannot hold becomes the one kUnexpressible rule
// (all fields but `cfa` zero, so that equal rows merge).
UnwindRule ToRule(const FrameState& state, const Cie& cie) {
  // A signal frame's "return address" is the interrupted instruction, not a call's: the
  // walk would look it up at pc-1. libunwind knows how; we do not try.
  if (cie.signal_frame) return RuleOfKind(CfaKind::kUnexpressible);
  if (state.return_address.kind == RegisterRule::kUndefined) return RuleOfKind(CfaKind::kOutermost);
  UnwindRule rule;
  const bool return_address_known =
      state.return_address.kind == RegisterRule::kOffset && state.return_address.offset == -8;
  const bool rbp_known = state.rbp.kind == RegisterRule::kUnspecified ||
                         state.rbp.kind == RegisterRule::kSame ||
                         (state.rbp.kind == RegisterRule::kOffset && FitsIn16(state.rbp.offset));
  if (!return_address_known || !rbp_known || !FitsIn32(state.cfa_offset)) {
    return RuleOfKind(CfaKind::kUnexpressible);
  }
  if (state.rbp.kind == RegisterRule::kOffset) {
    rule.rbp = RbpKind::kSaved;
    rule.rbp_offset = static_cast<int16_t>(state.rbp.offset);
  }
  rule.cfa_offset = static_cast<int32_t>(state.cfa_offset);
  if (state.cfa_type == FrameState::kPltExpression) {
    rule.cfa = CfaKind::kPlt;
  } else if (state.cfa_type == FrameState::kRegisterOffset && state.cfa_register == kDwarfRsp) {
    rule.cfa = CfaKind::kRsp;
  } else if (state.cfa_type == FrameState::kRegisterOffset && state.cfa_register == kDwarfRbp) {
    rule.cfa = CfaKind::kRbp;
  } else {
    return RuleOfKind(CfaKind::kUnexpressible);
  }
  return rule;
}

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
        const int threshold = PltThreshold(bytes_.data + at, value);
        state_->cfa_type =
            threshold >= 0 ? FrameState::kPltExpression : FrameState::kOtherExpression;
        state_->cfa_offset = threshold;
        return true;
      }
      case 0x10:  // DW_CFA_expression
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

// Reads the CIE at `offset`; runs its initial instructions.
bool ParseCie(const EhFrameBytes& bytes, uint64_t offset, Cie* cie) {
  EntryHeader header;
  if (!ReadEntryHeader(bytes, offset, &header)) return false;
  const size_t end = header.end;
  ByteReader body(bytes, header.body, end);
  const uint64_t id = header.id;
  uint8_t version = 0;
  if (id != 0 || !body.Fixed(&version)) return false;
  if (version != 1 && version != 3 && version != 4) return false;

  char augmentation[16];
  size_t augmentation_length = 0;
  for (;;) {
    char c = 0;
    if (!body.Fixed(&c)) return false;
    if (c == '\0') break;
    if (augmentation_length + 1 >= sizeof(augmentation)) return false;
    augmentation[augmentation_length++] = c;
  }
  // Only "" and "z..." describe their layout; "eh" (GCC 2.x) and the like are refused.
  if (augmentation_length > 0 && augmentation[0] != 'z') return false;
  cie->has_augmentation_data = augmentation_length > 0;

  if (version == 4) {
    uint8_t address_size = 0, segment_size = 0;
    if (!body.Fixed(&address_size) || !body.Fixed(&segment_size)) return false;
    if (address_size != 8 || segment_size != 0) return false;
  }
  if (!body.Uleb(&cie->code_align) || !body.Sleb(&cie->data_align)) return false;
  if (version == 1) {
    uint8_t reg = 0;
    if (!body.Fixed(&reg)) return false;
    cie->return_address_register = reg;
  } else if (!body.Uleb(&cie->return_address_register)) {
    return false;
  }

  if (cie->has_augmentation_data) {
    uint64_t data_length = 0;
    if (!body.Uleb(&data_length) || data_length > body.end() - body.pos()) return false;
    const size_t data_end = body.pos() + static_cast<size_t>(data_length);
    ByteReader data(bytes, body.pos(), data_end);
    for (size_t i = 1; i < augmentation_length; ++i) {
      uint8_t encoding = 0;
      const char c = augmentation[i];
      if (c == 'R') {
        if (!data.Fixed(&cie->fde_encoding)) return false;
      } else if (c == 'L') {
        if (!data.Fixed(&encoding)) return false;
      } else if (c == 'P') {
        // The personality routine: only its size matters here.
        if (!data.Fixed(&encoding) || !data.SkipPointer(encoding)) return false;
      } else if (c == 'S') {
        cie->signal_frame = true;
      } else {
        break;  // 'B', 'G' or newer: their data (if any) is skipped by length below
      }
    }
    if (!body.Skip(data_length)) return false;
  }
  // The FDE's address and range must be plain code addresses.
  if ((cie->fde_encoding & kPeIndirect) != 0) return false;

  cie->program_begin = body.pos();
  cie->program_end = end;
  CfaProgram program(bytes, *cie);
  FrameState state;
  state.rbp = {RegisterRule::kSame, 0};
  if (!program.Run(cie->program_begin, cie->program_end, &state, nullptr, 0, nullptr)) {
    return false;
  }
  cie->initial = state;
  return true;
}

// The last CIE parsed: FDEs of one object share a few CIEs and come grouped behind them.
struct CieCache {
  uint64_t offset = UINT64_MAX;
  bool ok = false;
  Cie cie;

  const Cie* Get(const EhFrameBytes& bytes, uint64_t cie_offset) {
    if (cie_offset != offset) {
      offset = cie_offset;
      cie = Cie();
      ok = ParseCie(bytes, cie_offset, &cie);
    }
    return ok ? &cie : nullptr;
  }
};

constexpr uint64_t kMaxFdeRange = uint64_t{1} << 32;

bool CompileFde(const EhFrameBytes& bytes, uint64_t offset, CieCache* cache,
                std::vector<CfiRow>* rows, FdeSpan* span, EhFrameStats* stats) {
  EntryHeader header;
  if (!ReadEntryHeader(bytes, offset, &header)) return false;
  const size_t end = header.end;
  ByteReader body(bytes, header.body, end);
  const size_t id_position = header.id_position;
  const uint64_t cie_pointer = header.id;
  // In .eh_frame the CIE pointer counts back from the pointer itself; 0 marks a CIE.
  if (cie_pointer == 0 || cie_pointer > id_position) return false;
  const Cie* cie = cache->Get(bytes, id_position - cie_pointer);
  if (cie == nullptr) return false;

  uint64_t pc_begin = 0, pc_range = 0;
  if (!body.Pointer(cie->fde_encoding, 0, &pc_begin) || !body.Raw(cie->fde_encoding, &pc_range)) {
    return false;
  }
  if (pc_range == 0 || pc_range >= kMaxFdeRange || pc_begin > UINT64_MAX - pc_range) return false;
  if (cie->has_augmentation_data) {
    uint64_t data_length = 0;
    if (!body.Uleb(&data_length) || !body.Skip(data_length)) return false;
  }

  span->begin = pc_begin;
  span->end = pc_begin + pc_range;
  span->first = static_cast<uint32_t>(rows->size());
  RowWriter writer(rows, stats);
  FrameState state = cie->initial;
  uint64_t loc = pc_begin;
  CfaProgram program(bytes, *cie);
  if (program.Run(body.pos(), end, &state, &loc, span->end, &writer)) {
    if (loc < span->end) writer.Emit(loc, ToRule(state, *cie));
  } else {
    ++stats->truncated_programs;
    if (loc < span->end) writer.Emit(loc, RuleOfKind(CfaKind::kUnexpressible));
  }
  span->count = writer.written();
  ++stats->fdes;
  return true;
}

// Appends one compiled FDE, or counts it as bad.
void CompileOne(const EhFrameBytes& bytes, uint64_t offset, CieCache* cache,
                std::vector<CfiRow>* rows, std::vector<FdeSpan>* spans, EhFrameStats* stats) {
  const size_t rows_before = rows->size();
  FdeSpan span;
  if (CompileFde(bytes, offset, cache, rows, &span, stats)) {
    spans->push_back(span);
  } else {
    rows->resize(rows_before);
    ++stats->bad_fdes;
  }
}

bool CompileFromHdrTable(const EhFrameBytes& eh_frame, const EhFrameBytes& hdr,
                         const EhFrameHdr& parsed, CieCache* cache, std::vector<CfiRow>* rows,
                         std::vector<FdeSpan>* spans, EhFrameStats* stats) {
  if (parsed.table_encoding != kPeDatarelSdata4 || parsed.fde_count == 0) return false;
  if (parsed.table_offset > hdr.size || (hdr.size - parsed.table_offset) / 8 < parsed.fde_count) {
    return false;
  }
  stats->used_hdr_table = true;
  for (uint64_t i = 0; i < parsed.fde_count; ++i) {
    int32_t entry[2];  // initial location, FDE address; both relative to the header
    std::memcpy(entry, hdr.data + parsed.table_offset + i * 8, sizeof(entry));
    const uint64_t fde_address =
        hdr.address + static_cast<uint64_t>(static_cast<int64_t>(entry[1]));
    const uint64_t offset = fde_address - eh_frame.address;  // wraps to huge when below
    if (offset >= eh_frame.size) {
      ++stats->bad_fdes;
      continue;
    }
    CompileOne(eh_frame, offset, cache, rows, spans, stats);
  }
  return true;
}

void CompileSequentially(const EhFrameBytes& eh_frame, CieCache* cache, std::vector<CfiRow>* rows,
                         std::vector<FdeSpan>* spans, EhFrameStats* stats) {
  size_t offset = 0;
  EntryHeader header;
  while (ReadEntryHeader(eh_frame, offset, &header)) {  // stops at the zero terminator
    if (header.id != 0) CompileOne(eh_frame, offset, cache, rows, spans, stats);
    offset = header.end;
  }
}

}  // namespace

bool ParseEhFrameHdr(const EhFrameBytes& hdr, EhFrameHdr* out) {
  ByteReader in(hdr, 0, hdr.size);
  uint8_t version = 0, eh_frame_encoding = 0, count_encoding = 0, table_encoding = 0;
  if (!in.Fixed(&version) || !in.Fixed(&eh_frame_encoding) || !in.Fixed(&count_encoding) ||
      !in.Fixed(&table_encoding) || version != 1) {
    return false;
  }
  if (eh_frame_encoding == kPeOmit || (eh_frame_encoding & kPeIndirect) != 0) return false;
  if (!in.Pointer(eh_frame_encoding, hdr.address, &out->eh_frame_address)) return false;
  out->table_encoding = kPeOmit;
  out->fde_count = 0;
  if (count_encoding != kPeOmit && table_encoding != kPeOmit &&
      (count_encoding & kPeIndirect) == 0 &&
      in.Pointer(count_encoding, hdr.address, &out->fde_count)) {
    out->table_encoding = table_encoding;
    out->table_offset = in.pos();
  }
  return true;
}

bool CompileFdeAt(const EhFrameBytes& eh_frame, uint64_t offset, std::vector<CfiRow>* rows,
                  FdeSpan* span, EhFrameStats* stats) {
  CieCache cache;
  return CompileFde(eh_frame, offset, &cache, rows, span, stats);
}

bool CompileEhFrame(const EhFrameBytes& eh_frame, const EhFrameBytes* hdr,
                    const EhFrameHdr* parsed_hdr, std::vector<CfiRow>* rows,
                    std::vector<FdeSpan>* spans, EhFrameStats* stats) {
  if (eh_frame.data == nullptr || eh_frame.size == 0) return false;
  CieCache cache;
  const size_t spans_before = spans->size();
  if (hdr == nullptr || parsed_hdr == nullptr ||
      !CompileFromHdrTable(eh_frame, *hdr, *parsed_hdr, &cache, rows, spans, stats)) {
    CompileSequentially(eh_frame, &cache, rows, spans, stats);
  }
  return spans->size() > spans_before;
}

}  // namespace gpuperf
