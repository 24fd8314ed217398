// Chunk payload encoding: fixed-size records are stored column by column (all pids,
// then all names, ...) as varints, timestamps as deltas. Similar values then sit next
// to each other, which is what brings a kernel record under 16 bytes after zstd.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "format/record_schema.h"
#include "format/varint.h"
#include "gpuperf/records.h"

namespace gpuperf::format {

// Remapping of file-local ids to the reader's global ids. An id outside the table
// (its defining chunk was lost) becomes 0 and is counted in `unresolved`.
struct IdMaps {
  std::span<const uint32_t> strings;
  std::span<const uint32_t> stacks;
  uint64_t unresolved = 0;

  uint32_t MapString(uint64_t id) { return Map(strings, id); }
  uint32_t MapStack(uint64_t id) { return Map(stacks, id); }

 private:
  uint32_t Map(std::span<const uint32_t> table, uint64_t id) {
    if (id == 0) return 0;
    if (id < table.size() && table[id] != 0) return table[id];
    ++unresolved;
    return 0;
  }
};

// Writes a varint at `p`, returns the position after it (at most 10 bytes).
inline char* WriteVarint(char* p, uint64_t value) {
  while (value >= 0x80) {
    *p++ = static_cast<char>((value & 0x7f) | 0x80);
    value >>= 7;
  }
  *p++ = static_cast<char>(value);
  return p;
}

template <class T>
void EncodeFixed(std::span<const T> records, std::string& out) {
  const size_t n = records.size();
  size_t fields = 0;
  const T probe{};
  ForEachField(probe, [&](const char*, const auto&, FieldEnc) { ++fields; });
  // Worst case 10 bytes per value; written through a raw pointer, trimmed at the end
  // (byte-wise appends to the string were most of the writer's time).
  const size_t start = out.size();
  out.resize(start + n * fields * 10);
  char* p = out.data() + start;
  std::vector<uint64_t> previous_column(n), column(n);
  ForEachField(probe, [&](const char*, const auto& field, FieldEnc enc) {
    using FieldT = std::remove_cvref_t<decltype(field)>;
    const size_t offset =
        reinterpret_cast<const char*>(&field) - reinterpret_cast<const char*>(&probe);
    for (size_t i = 0; i < n; ++i) {
      const auto* value =
          reinterpret_cast<const FieldT*>(reinterpret_cast<const char*>(&records[i]) + offset);
      column[i] = FieldToU64(*value);
    }
    if (enc == FieldEnc::kDelta) {
      uint64_t last = 0;
      for (size_t i = 0; i < n; ++i) {
        p = WriteVarint(p, ZigZag(static_cast<int64_t>(column[i] - last)));
        last = column[i];
      }
    } else if (enc == FieldEnc::kAfter) {
      for (size_t i = 0; i < n; ++i) {
        p = WriteVarint(p, ZigZag(static_cast<int64_t>(column[i] - previous_column[i])));
      }
    } else {
      for (size_t i = 0; i < n; ++i) p = WriteVarint(p, column[i]);
    }
    previous_column.swap(column);
  });
  out.resize(static_cast<size_t>(p - out.data()));
}

// Decodes `count` records; returns false if the payload is malformed.
template <class T>
bool DecodeFixed(ByteCursor& in, uint32_t count, IdMaps& ids, std::vector<T>& out) {
  // Every record needs at least one byte per field: reject absurd counts before
  // allocating (a damaged header must not make us allocate gigabytes).
  if (count > in.remaining()) return false;
  out.assign(count, T{});
  std::vector<uint64_t> previous_column(count), column(count);
  T probe{};
  ForEachField(probe, [&](const char*, auto& field, FieldEnc enc) {
    using FieldT = std::remove_cvref_t<decltype(field)>;
    const size_t offset = reinterpret_cast<char*>(&field) - reinterpret_cast<char*>(&probe);
    uint64_t last = 0;
    for (uint32_t i = 0; i < count; ++i) {
      uint64_t raw = in.Varint();
      switch (enc) {
        case FieldEnc::kDelta:
          raw = last + static_cast<uint64_t>(UnZigZag(raw));
          last = raw;
          break;
        case FieldEnc::kAfter:
          raw = previous_column[i] + static_cast<uint64_t>(UnZigZag(raw));
          break;
        case FieldEnc::kString:
          raw = ids.MapString(raw);
          break;
        case FieldEnc::kStack:
          raw = ids.MapStack(raw);
          break;
        case FieldEnc::kPlain:
          break;
      }
      column[i] = raw;
      auto* value = reinterpret_cast<FieldT*>(reinterpret_cast<char*>(&out[i]) + offset);
      *value = FieldFromU64<FieldT>(raw);
    }
    previous_column.swap(column);
  });
  return !in.failed();
}

// Strings chunk: first id, then each string as length + bytes.
void EncodeStrings(uint32_t first_id, std::span<const std::string> strings, std::string& out);
bool DecodeStrings(ByteCursor& in, uint32_t count, uint32_t* first_id,
                   std::vector<std::string>& out);

// Stack ids are file-local here; the reader assigns global ones.
void EncodeStacks(std::span<const StackRecord> stacks, std::string& out);
bool DecodeStacks(ByteCursor& in, uint32_t count, std::vector<StackRecord>& out);

void EncodeSymbols(std::span<const SymbolRecord> symbols, std::string& out);
bool DecodeSymbols(ByteCursor& in, uint32_t count, IdMaps& ids, std::vector<SymbolRecord>& out);

// Each code: its fields as varints (first_line zigzag), then the line table as length +
// bytes; after all codes, a trailer of each one's first_traceable (varints, in record
// order), which readers from before it never reach. Without it, first_traceable is 0.
void EncodePythonCodes(std::span<const PythonCodeRecord> codes, std::string& out);
bool DecodePythonCodes(ByteCursor& in, uint32_t count, IdMaps& ids,
                       std::vector<PythonCodeRecord>& out);

}  // namespace gpuperf::format
