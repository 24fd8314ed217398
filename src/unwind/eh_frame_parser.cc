#include "unwind/eh_frame_parser.h"

#include <cstring>

#include "unwind/cfa_program.h"
#include "unwind/eh_frame_reader.h"

namespace gpuperf {
namespace {

using namespace cfi;  // the reader and the interpreter are this file's building blocks

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
  FrameState state;
  state.rbp = {RegisterRule::kSame, 0};
  if (!RunCfaProgram(bytes, *cie, cie->program_begin, cie->program_end, &state, nullptr, 0,
                     nullptr)) {
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
  if (RunCfaProgram(bytes, *cie, body.pos(), end, &state, &loc, span->end, &writer)) {
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
  if (!HdrTableUsable(hdr, parsed)) return false;
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

bool HdrTableUsable(const EhFrameBytes& hdr, const EhFrameHdr& parsed) {
  return parsed.table_encoding == kPeDatarelSdata4 && parsed.fde_count > 0 &&
         parsed.table_offset <= hdr.size &&
         (hdr.size - parsed.table_offset) / 8 >= parsed.fde_count;
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
