#include "format/record_codec.h"

namespace gpuperf::format {

namespace {
// Limits that only damaged input exceeds; checked before allocating.
constexpr uint64_t kMaxStackDepth = 4096;
constexpr uint64_t kMaxInlineFrames = 1024;
constexpr uint64_t kMaxLineTableBytes = 1u << 24;
}  // namespace

void EncodeStrings(uint32_t first_id, std::span<const std::string> strings, std::string& out) {
  PutVarint(out, first_id);
  for (const std::string& s : strings) {
    PutVarint(out, s.size());
    out.append(s);
  }
}

bool DecodeStrings(ByteCursor& in, uint32_t count, uint32_t* first_id,
                   std::vector<std::string>& out) {
  *first_id = static_cast<uint32_t>(in.Varint());
  if (count > in.remaining()) return false;
  out.clear();
  out.reserve(count);
  for (uint32_t i = 0; i < count && !in.failed(); ++i) {
    uint64_t size = in.Varint();
    const uint8_t* bytes = in.Bytes(size);
    if (bytes == nullptr) return false;
    out.emplace_back(reinterpret_cast<const char*>(bytes), size);
  }
  return !in.failed();
}

void EncodeStacks(std::span<const StackRecord> stacks, std::string& out) {
  for (const StackRecord& stack : stacks) {
    PutVarint(out, stack.pid);
    PutVarint(out, stack.id);
    PutVarint(out, stack.pcs.size());
    uint64_t last = 0;
    for (uint64_t pc : stack.pcs) {
      // Neighbouring frames are usually in the same module: deltas are short.
      PutVarint(out, ZigZag(static_cast<int64_t>(pc - last)));
      last = pc;
    }
  }
}

bool DecodeStacks(ByteCursor& in, uint32_t count, std::vector<StackRecord>& out) {
  if (count > in.remaining()) return false;
  out.clear();
  out.reserve(count);
  for (uint32_t i = 0; i < count && !in.failed(); ++i) {
    StackRecord stack;
    stack.pid = static_cast<uint32_t>(in.Varint());
    stack.id = static_cast<StackId>(in.Varint());
    uint64_t depth = in.Varint();
    if (depth > kMaxStackDepth || depth > in.remaining()) return false;
    stack.pcs.resize(depth);
    uint64_t last = 0;
    for (uint64_t& pc : stack.pcs) {
      pc = last + static_cast<uint64_t>(UnZigZag(in.Varint()));
      last = pc;
    }
    out.push_back(std::move(stack));
  }
  return !in.failed();
}

void EncodeSymbols(std::span<const SymbolRecord> symbols, std::string& out) {
  for (const SymbolRecord& symbol : symbols) {
    PutVarint(out, symbol.pid);
    PutVarint(out, symbol.pc);
    PutVarint(out, symbol.frames.size());
    for (const SymbolFrame& frame : symbol.frames) {
      PutVarint(out, frame.function);
      PutVarint(out, frame.file);
      PutVarint(out, frame.line);
      PutVarint(out, frame.module);
      PutVarint(out, frame.module_offset);
    }
  }
}

bool DecodeSymbols(ByteCursor& in, uint32_t count, IdMaps& ids, std::vector<SymbolRecord>& out) {
  if (count > in.remaining()) return false;
  out.clear();
  out.reserve(count);
  for (uint32_t i = 0; i < count && !in.failed(); ++i) {
    SymbolRecord symbol;
    symbol.pid = static_cast<uint32_t>(in.Varint());
    symbol.pc = in.Varint();
    uint64_t frames = in.Varint();
    if (frames > kMaxInlineFrames || frames > in.remaining()) return false;
    symbol.frames.resize(frames);
    for (SymbolFrame& frame : symbol.frames) {
      frame.function = ids.MapString(in.Varint());
      frame.file = ids.MapString(in.Varint());
      frame.line = static_cast<uint32_t>(in.Varint());
      frame.module = ids.MapString(in.Varint());
      frame.module_offset = in.Varint();
    }
    out.push_back(std::move(symbol));
  }
  return !in.failed();
}

void EncodePythonCodes(std::span<const PythonCodeRecord> codes, std::string& out) {
  for (const PythonCodeRecord& code : codes) {
    PutVarint(out, code.pid);
    PutVarint(out, code.code_id);
    PutVarint(out, code.name);
    PutVarint(out, code.file);
    PutVarint(out, ZigZag(code.first_line));
    PutVarint(out, code.python_version);
    PutVarint(out, code.line_format);
    PutVarint(out, code.code_units);
    PutVarint(out, code.line_table.size());
    out.append(code.line_table);
  }
  // A trailer older readers never read (they stop after the records): each record's first
  // traceable code unit, in record order.
  for (const PythonCodeRecord& code : codes) PutVarint(out, code.first_traceable);
}

bool DecodePythonCodes(ByteCursor& in, uint32_t count, IdMaps& ids,
                       std::vector<PythonCodeRecord>& out) {
  if (count > in.remaining()) return false;
  out.clear();
  out.reserve(count);
  for (uint32_t i = 0; i < count && !in.failed(); ++i) {
    PythonCodeRecord code;
    code.pid = static_cast<uint32_t>(in.Varint());
    code.code_id = static_cast<uint32_t>(in.Varint());
    code.name = ids.MapString(in.Varint());
    code.file = ids.MapString(in.Varint());
    code.first_line = static_cast<int32_t>(UnZigZag(in.Varint()));
    code.python_version = static_cast<uint32_t>(in.Varint());
    code.line_format = static_cast<uint8_t>(in.Varint());
    code.code_units = static_cast<uint32_t>(in.Varint());
    const uint64_t size = in.Varint();
    if (size > kMaxLineTableBytes) return false;
    const uint8_t* bytes = in.Bytes(size);
    if (bytes == nullptr) return false;
    code.line_table.assign(reinterpret_cast<const char*>(bytes), size);
    out.push_back(std::move(code));
  }
  // Chunks written before the trailer existed end here (first_traceable stays 0).
  if (!in.failed() && in.remaining() > 0) {
    for (PythonCodeRecord& code : out) code.first_traceable = static_cast<uint32_t>(in.Varint());
  }
  return !in.failed();
}

}  // namespace gpuperf::format
