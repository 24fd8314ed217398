// Chunk payload encoding: fixed-size records are stored column by column (all pids,
// then all names, ...) as varints, timestamps as deltas. Similar values then sit next
// to each other, which is what brings a kernel record under 16 bytes after zstd.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
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

// A string or stack id too large for its 32-bit field: no id table maps it.
inline constexpr uint32_t kUnmappableId = UINT32_MAX;

namespace codec_detail {

// Decodes values [0, n) of one field's column from `cursor` into records that lie
// sizeof(T) apart from `record`; `last` carries a kDelta field's running value from call to
// call, `previous` holds the previous field's values (for kAfter), `current` gets this
// field's. Everything the loop touches is a local variable or a parameter: a store into a
// record could alias anything reached through a reference, which would then be reloaded
// after every store.
template <class T, FieldEnc kEnc, class FieldT>
void DecodeColumn(LocalCursor& cursor, uint32_t n, char* record, uint64_t& last,
                  const uint64_t* previous, uint64_t* current) {
  uint64_t running = last;
  for (uint32_t i = 0; i < n; ++i, record += sizeof(T)) {
    uint64_t raw = cursor.Varint();
    if constexpr (kEnc == FieldEnc::kDelta) {
      raw = running + static_cast<uint64_t>(UnZigZag(raw));
      running = raw;
    } else if constexpr (kEnc == FieldEnc::kAfter) {
      raw = previous[i] + static_cast<uint64_t>(UnZigZag(raw));
    } else if constexpr (kEnc == FieldEnc::kString || kEnc == FieldEnc::kStack) {
      if (raw > kUnmappableId) raw = kUnmappableId;
    }
    current[i] = raw;
    *reinterpret_cast<FieldT*>(record) = FieldFromU64<FieldT>(raw);
  }
  last = running;
}

// Where the `count`-th varint from `pos` ends (each ends with a byte below 0x80), or
// nullptr when the bytes end first. Eight bytes at a time.
inline const uint8_t* SkipVarints(const uint8_t* pos, const uint8_t* end, uint64_t count) {
  constexpr uint64_t kHighBits = 0x8080808080808080ull;
  while (count > 0 && end - pos >= 8) {
    uint64_t word;
    std::memcpy(&word, pos, 8);
    // One bit per byte that ends a varint, summed by a multiply (no popcount instruction in
    // the baseline x86-64 the build targets).
    const uint64_t ends = (((~word & kHighBits) >> 7) * 0x0101010101010101ull) >> 56;
    if (ends < count) {
      count -= ends;
      pos += 8;
      continue;
    }
    break;
  }
  for (; count > 0 && pos < end; ++pos) count -= *pos < 0x80;
  return count == 0 ? pos : nullptr;
}

// Column by column, each over all records: the plain decode, exact on any payload.
template <class T>
bool DecodeByColumn(ByteCursor& in, std::span<T> out, std::vector<uint64_t>& scratch) {
  const auto count = static_cast<uint32_t>(out.size());
  std::fill(out.begin(), out.end(), T{});
  scratch.resize(2 * size_t{count});
  uint64_t* previous = scratch.data();
  uint64_t* current = scratch.data() + count;
  T probe{};
  char* const records = reinterpret_cast<char*>(out.data());
  LocalCursor cursor(in);
  ForEachField(probe, [&](const char*, auto& field, auto enc_tag) {
    using FieldT = std::remove_cvref_t<decltype(field)>;
    const size_t offset = reinterpret_cast<char*>(&field) - reinterpret_cast<char*>(&probe);
    uint64_t last = 0;
    DecodeColumn<T, decltype(enc_tag)::value, FieldT>(cursor, count, records + offset, last,
                                                      previous, current);
    std::swap(previous, current);
  });
  return !cursor.failed();
}

// The same values block by block: each column's start is found first, then every field of
// a few hundred records is decoded while those records sit in the processor's cache
// (column by column, a chunk of kernels is written 23 times over from memory). Returns
// false, having decoded nothing the caller may keep, on anything unusual: a column that
// does not end where the next starts, a varint too long or cut off. DecodeByColumn then
// gives the exact result for such a payload.
template <class T>
bool DecodeInBlocks(ByteCursor& in, std::span<T> out, std::vector<uint64_t>& scratch) {
  const auto count = static_cast<uint32_t>(out.size());
  constexpr uint32_t kBlock = 256;
  constexpr size_t kMaxFields = 32;
  T probe{};
  size_t fields = 0;
  ForEachField(probe, [&](const char*, const auto&, FieldEnc) { ++fields; });
  if (fields > kMaxFields) return false;
  const uint8_t* column_start[kMaxFields + 1];
  const uint8_t* column_pos[kMaxFields];
  uint64_t column_last[kMaxFields] = {};
  column_start[0] = in.position();
  for (size_t f = 0; f < fields; ++f) {
    column_start[f + 1] = SkipVarints(column_start[f], in.end(), count);
    if (column_start[f + 1] == nullptr) return false;
    column_pos[f] = column_start[f];
  }
  // Each block is cleared just before it is filled, while in the cache.
  scratch.resize(2 * kBlock);
  bool failed = false;
  char* const records = reinterpret_cast<char*>(out.data());
  for (uint32_t first = 0; first < count; first += kBlock) {
    const uint32_t n = std::min(kBlock, count - first);
    std::fill_n(out.data() + first, n, T{});
    uint64_t* previous = scratch.data();
    uint64_t* current = scratch.data() + kBlock;
    size_t f = 0;
    ForEachField(probe, [&](const char*, auto& field, auto enc_tag) {
      using FieldT = std::remove_cvref_t<decltype(field)>;
      const size_t offset = reinterpret_cast<char*>(&field) - reinterpret_cast<char*>(&probe);
      ByteCursor column(column_pos[f], static_cast<size_t>(column_start[f + 1] - column_pos[f]));
      {
        LocalCursor cursor(column);
        DecodeColumn<T, decltype(enc_tag)::value, FieldT>(
            cursor, n, records + first * sizeof(T) + offset, column_last[f], previous, current);
      }
      failed |= column.failed();
      column_pos[f] = column.position();
      std::swap(previous, current);
      ++f;
    });
    if (failed) return false;
  }
  for (size_t f = 0; f < fields; ++f) {
    if (column_pos[f] != column_start[f + 1]) return false;
  }
  in.MoveTo(column_start[fields]);
  return true;
}

}  // namespace codec_detail

// Decodes `out.size()` records into `out` with their string and stack ids as the file
// wrote them (file-local; RemapIds makes them the reader's); returns false if the payload
// is malformed. `scratch` is reused from call to call. Needs nothing the file defined
// earlier, so chunks decode in any order and on any thread.
template <class T>
bool DecodeFixedLocal(ByteCursor& in, std::span<T> out, std::vector<uint64_t>& scratch) {
  const ByteCursor start = in;
  if (codec_detail::DecodeInBlocks(in, out, scratch)) return true;
  in = start;
  return codec_detail::DecodeByColumn(in, out, scratch);
}

// The same into a vector of `count` records. A count the payload cannot hold (every record
// needs at least one byte per field) is refused before anything is allocated: a damaged
// header must not make us allocate gigabytes.
template <class T>
bool DecodeFixedLocal(ByteCursor& in, uint32_t count, std::vector<T>& out,
                      std::vector<uint64_t>& scratch) {
  if (count > in.remaining()) {
    out.clear();
    return false;
  }
  out.resize(count);
  return DecodeFixedLocal(in, std::span<T>(out), scratch);
}

// Turns the file-local string and stack ids of decoded records into the reader's.
template <class T>
void RemapIds(std::span<T> records, IdMaps& ids) {
  T probe{};
  char* const base = reinterpret_cast<char*>(records.data());
  ForEachField(probe, [&](const char*, auto& field, auto enc_tag) {
    constexpr FieldEnc kEnc = decltype(enc_tag)::value;
    if constexpr (kEnc == FieldEnc::kString || kEnc == FieldEnc::kStack) {
      static_assert(sizeof(field) == sizeof(uint32_t));
      const size_t offset = reinterpret_cast<char*>(&field) - reinterpret_cast<char*>(&probe);
      for (size_t i = 0; i < records.size(); ++i) {
        uint32_t id;
        std::memcpy(&id, base + i * sizeof(T) + offset, sizeof(id));
        id = kEnc == FieldEnc::kString ? ids.MapString(id) : ids.MapStack(id);
        std::memcpy(base + i * sizeof(T) + offset, &id, sizeof(id));
      }
    }
  });
}

// Decodes `count` records with the reader's ids; returns false if the payload is
// malformed (the ids of what was decoded are remapped and counted all the same).
template <class T>
bool DecodeFixed(ByteCursor& in, uint32_t count, IdMaps& ids, std::vector<T>& out) {
  std::vector<uint64_t> scratch;
  const bool ok = DecodeFixedLocal(in, count, out, scratch);
  RemapIds(std::span<T>(out), ids);
  return ok;
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
