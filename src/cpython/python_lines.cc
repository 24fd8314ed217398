#include "cpython/python_lines.h"

#include <cstdint>

namespace gpuperf {
namespace {

// A line that a damaged table drove out of range is unknown.
int ValidLine(int64_t line) {
  return line > 0 && line <= INT32_MAX ? int(line) : 0;
}

// 3.10: each pair covers `bytes` bytes of bytecode; the line changes by the signed delta
// first (zero-length pairs only carry line changes), -128 marks a range without a line.
int Resolve310(int32_t first_line, std::span<const uint8_t> table, uint64_t byte_offset) {
  int64_t line = first_line;
  uint64_t end = 0;
  for (size_t i = 0; i + 1 < table.size(); i += 2) {
    uint64_t start = end;
    end += table[i];
    int delta = static_cast<int8_t>(table[i + 1]);
    bool no_line = delta == -128;
    if (!no_line) line += delta;
    if (byte_offset >= start && byte_offset < end) return no_line ? 0 : ValidLine(line);
  }
  return 0;
}

// Location-table entry kinds (the 4 bits after the header bit).
constexpr int kLocationNoColumns = 13;
constexpr int kLocationLong = 14;
constexpr int kLocationNone = 15;
constexpr int kLocationOneLine0 = 10;
constexpr int kLocationOneLine2 = 12;

// A varint of 6-bit groups, bit 6 = more follow. Stops at the end of the table.
uint32_t ReadVarint(std::span<const uint8_t> table, size_t pos) {
  uint32_t value = 0;
  for (int shift = 0; pos < table.size() && shift < 32; shift += 6, ++pos) {
    value |= uint32_t(table[pos] & 63) << shift;
    if ((table[pos] & 64) == 0) break;
  }
  return value;
}

int32_t ReadSignedVarint(std::span<const uint8_t> table, size_t pos) {
  uint32_t raw = ReadVarint(table, pos);
  return (raw & 1) ? -int32_t(raw >> 1) : int32_t(raw >> 1);
}

int32_t LineDelta(std::span<const uint8_t> table, size_t pos, int kind) {
  if (kind == kLocationNoColumns || kind == kLocationLong) return ReadSignedVarint(table, pos + 1);
  if (kind >= kLocationOneLine0 && kind <= kLocationOneLine2) return kind - kLocationOneLine0;
  return 0;  // short forms (0-9) stay on the line; "none" does not move it
}

// 3.11+: entries start at bytes with bit 7 set; the bytes between are their payload.
int Resolve311(int32_t first_line, std::span<const uint8_t> table, uint64_t unit) {
  int64_t line = first_line;
  uint64_t end = 0;
  size_t pos = 0;
  while (pos < table.size() && (table[pos] & 0x80) == 0) ++pos;
  while (pos < table.size()) {
    uint8_t header = table[pos];
    int kind = (header >> 3) & 15;
    uint64_t start = end;
    end += (header & 7) + 1;
    line += LineDelta(table, pos, kind);
    if (unit >= start && unit < end) return kind == kLocationNone ? 0 : ValidLine(line);
    do {
      ++pos;
    } while (pos < table.size() && (table[pos] & 0x80) == 0);
  }
  return 0;
}

}  // namespace

int ResolvePythonLine(PyLineTableFormat format, int32_t first_line, std::span<const uint8_t> table,
                      uint32_t instr_offset) {
  if (instr_offset == kPyNoInstruction) return first_line > 0 ? first_line : 0;
  switch (format) {
    case PyLineTableFormat::kLineTable310:
      return Resolve310(first_line, table, uint64_t{instr_offset} * 2);
    case PyLineTableFormat::kLocations311:
      return Resolve311(first_line, table, instr_offset);
    case PyLineTableFormat::kNone:
      break;
  }
  return 0;
}

int ResolvePythonLine(const PyCodeInfo& code, uint32_t instr_offset) {
  std::span<const uint8_t> table(reinterpret_cast<const uint8_t*>(code.line_table.data()),
                                 code.line_table.size());
  return ResolvePythonLine(code.line_format, code.first_line, table, instr_offset);
}

bool PythonFrameIsIncomplete(uint32_t python_version, uint32_t first_traceable,
                             uint32_t instr_offset, bool generator) {
  if (python_version < (3u << 24 | 11u << 16)) return false;
  if (static_cast<int32_t>(instr_offset) < 0) return true;
  return !generator && instr_offset < first_traceable;
}

}  // namespace gpuperf
