#include "analyze/symbols/cubin_lines.h"

#include <algorithm>
#include <cstring>
#include <map>
#include <optional>

namespace gpuperf {
namespace {

// ---- ELF64, little endian (what every cubin is) ----

template <class T>
bool Read(std::span<const uint8_t> bytes, uint64_t offset, T* out) {
  if (offset > bytes.size() || bytes.size() - offset < sizeof(T)) return false;
  std::memcpy(out, bytes.data() + offset, sizeof(T));
  return true;
}

struct Section {
  std::string name;
  uint32_t type = 0;
  uint64_t offset = 0;
  uint64_t size = 0;
  uint32_t link = 0;
  uint32_t info = 0;
  uint64_t entsize = 0;
};

constexpr uint32_t kShtSymtab = 2;
constexpr uint32_t kShtRela = 4;
constexpr uint32_t kShtRel = 9;

struct Elf {
  std::span<const uint8_t> bytes;
  std::vector<Section> sections;

  std::span<const uint8_t> Data(const Section& s) const { return bytes.subspan(s.offset, s.size); }
  const Section* Find(std::string_view name) const {
    for (const Section& s : sections) {
      if (s.name == name) return &s;
    }
    return nullptr;
  }
};

Result<Elf> ParseElf(std::span<const uint8_t> bytes) {
  auto bad = [](const std::string& why) {
    return Error(StatusCode::kCorrupt, "not a cubin: " + why);
  };
  if (bytes.size() < 64 || std::memcmp(bytes.data(),
                                       "\x7f"
                                       "ELF",
                                       4) != 0) {
    return bad("no ELF header");
  }
  if (bytes[4] != 2 || bytes[5] != 1) return bad("not a 64-bit little-endian ELF file");
  uint64_t shoff = 0;
  uint16_t shentsize = 0, shnum = 0, shstrndx = 0;
  Read(bytes, 0x28, &shoff);
  Read(bytes, 0x3a, &shentsize);
  Read(bytes, 0x3c, &shnum);
  Read(bytes, 0x3e, &shstrndx);
  if (shentsize < 64 || shnum == 0 || shstrndx >= shnum || shoff > bytes.size() ||
      (bytes.size() - shoff) / shentsize < shnum) {
    return bad("section headers out of the file");
  }
  Elf elf{bytes, {}};
  std::vector<uint32_t> names(shnum);
  for (uint16_t i = 0; i < shnum; ++i) {
    const uint64_t h = shoff + uint64_t{i} * shentsize;
    Section s;
    Read(bytes, h + 0, &names[i]);
    Read(bytes, h + 4, &s.type);
    Read(bytes, h + 24, &s.offset);
    Read(bytes, h + 32, &s.size);
    Read(bytes, h + 40, &s.link);
    Read(bytes, h + 44, &s.info);
    Read(bytes, h + 56, &s.entsize);
    // NOBITS sections take no room in the file; others must fit in it.
    if (s.type != 8 && (s.offset > bytes.size() || bytes.size() - s.offset < s.size)) {
      return bad("section " + std::to_string(i) + " out of the file");
    }
    elf.sections.push_back(s);
  }
  const Section& strings = elf.sections[shstrndx];
  for (uint16_t i = 0; i < shnum; ++i) {
    if (names[i] < strings.size) {
      const char* start = reinterpret_cast<const char*>(bytes.data() + strings.offset + names[i]);
      elf.sections[i].name.assign(start, strnlen(start, strings.size - names[i]));
    }
  }
  return elf;
}

// Symbol names by index, from the symbol table.
std::vector<std::string> SymbolNames(const Elf& elf) {
  std::vector<std::string> names;
  for (const Section& symtab : elf.sections) {
    if (symtab.type != kShtSymtab || symtab.link >= elf.sections.size()) continue;
    const Section& strtab = elf.sections[symtab.link];
    for (uint64_t off = 0; off + 24 <= symtab.size; off += 24) {
      uint32_t name = 0;
      Read(elf.bytes, symtab.offset + off, &name);
      std::string text;
      if (name < strtab.size) {
        const char* start = reinterpret_cast<const char*>(elf.bytes.data() + strtab.offset + name);
        text.assign(start, strnlen(start, strtab.size - name));
      }
      names.push_back(std::move(text));
    }
    break;
  }
  return names;
}

// The relocations of .debug_line: offset in the section -> (symbol name, addend).
std::map<uint64_t, std::pair<std::string, int64_t>> LineRelocations(const Elf& elf,
                                                                    size_t debug_line_index) {
  std::map<uint64_t, std::pair<std::string, int64_t>> out;
  const std::vector<std::string> symbols = SymbolNames(elf);
  for (const Section& s : elf.sections) {
    if ((s.type != kShtRela && s.type != kShtRel) || s.info != debug_line_index) continue;
    const uint64_t size = s.type == kShtRela ? 24 : 16;
    for (uint64_t off = 0; off + size <= s.size; off += size) {
      uint64_t where = 0, info = 0;
      int64_t addend = 0;
      Read(elf.bytes, s.offset + off, &where);
      Read(elf.bytes, s.offset + off + 8, &info);
      if (s.type == kShtRela) Read(elf.bytes, s.offset + off + 16, &addend);
      const uint64_t symbol = info >> 32;
      if (symbol < symbols.size()) out[where] = {symbols[symbol], addend};
    }
  }
  return out;
}

// ---- DWARF line programs ----

class Cursor {
 public:
  Cursor(std::span<const uint8_t> data, uint64_t pos, uint64_t end)
      : data_(data), pos_(pos), end_(std::min<uint64_t>(end, data.size())) {}
  bool ok() const { return ok_; }
  uint64_t pos() const { return pos_; }
  bool done() const { return pos_ >= end_; }
  void Seek(uint64_t pos) { pos_ = pos; }

  uint64_t Fixed(size_t bytes) {
    if (end_ - std::min(pos_, end_) < bytes) return Fail();
    uint64_t v = 0;
    for (size_t i = 0; i < bytes; ++i) v |= uint64_t{data_[pos_ + i]} << (8 * i);
    pos_ += bytes;
    return v;
  }
  uint64_t Uleb() {
    uint64_t v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (pos_ >= end_) return Fail();
      const uint8_t b = data_[pos_++];
      v |= uint64_t{b & 0x7fu} << shift;
      if (!(b & 0x80)) return v;
    }
    return Fail();
  }
  int64_t Sleb() {
    int64_t v = 0;
    int shift = 0;
    uint8_t b = 0;
    do {
      if (pos_ >= end_ || shift >= 64) return static_cast<int64_t>(Fail());
      b = data_[pos_++];
      v |= static_cast<int64_t>(b & 0x7f) << shift;
      shift += 7;
    } while (b & 0x80);
    if (shift < 64 && (b & 0x40)) v |= -(int64_t{1} << shift);
    return v;
  }
  std::string String() {
    const uint64_t start = pos_;
    while (pos_ < end_ && data_[pos_] != 0) ++pos_;
    if (pos_ >= end_) return Fail(), std::string();
    std::string s(reinterpret_cast<const char*>(data_.data() + start), pos_ - start);
    ++pos_;
    return s;
  }
  void Skip(uint64_t bytes) {
    if (end_ - std::min(pos_, end_) < bytes)
      Fail();
    else
      pos_ += bytes;
  }

 private:
  uint64_t Fail() {
    ok_ = false;
    pos_ = end_;
    return 0;
  }
  std::span<const uint8_t> data_;
  uint64_t pos_;
  uint64_t end_;
  bool ok_ = true;
};

std::string JoinPath(const std::string& dir, const std::string& file) {
  if (file.empty() || file[0] == '/' || dir.empty()) return file;
  return dir + "/" + file;
}

struct Header {
  uint16_t version = 0;
  uint8_t min_length = 1;
  int8_t line_base = 0;
  uint8_t line_range = 1;
  uint8_t opcode_base = 1;
  std::vector<uint8_t> opcode_lengths;
  std::vector<std::string> files;  // index as the program uses it (v2-4: 1-based; v5: 0-based)
  uint64_t program = 0;
  uint64_t end = 0;
};

// DWARF 5 entry formats: a string inline, in .debug_line_str, or a number.
std::optional<std::string> ReadForm(Cursor& in, uint64_t form, bool offset64,
                                    std::span<const uint8_t> line_str) {
  switch (form) {
    case 0x08:  // DW_FORM_string
      return in.String();
    case 0x1f:    // DW_FORM_line_strp
    case 0x0e: {  // DW_FORM_strp (no .debug_str here: read as unknown)
      const uint64_t off = in.Fixed(offset64 ? 8 : 4);
      if (form != 0x1f || off >= line_str.size()) return std::string();
      const char* s = reinterpret_cast<const char*>(line_str.data() + off);
      return std::string(s, strnlen(s, line_str.size() - off));
    }
    case 0x0f:
      return std::to_string(in.Uleb());  // udata
    case 0x0b:
      return std::to_string(in.Fixed(1));  // data1
    case 0x05:
      return std::to_string(in.Fixed(2));  // data2
    case 0x06:
      return std::to_string(in.Fixed(4));  // data4
    case 0x07:
      return std::to_string(in.Fixed(8));  // data8
    case 0x1e:
      in.Skip(16);
      return std::string();  // data16 (MD5)
    case 0x09:
      in.Skip(in.Uleb());
      return std::string();  // block
    default:
      return std::nullopt;
  }
}

bool ReadEntries(Cursor& in, bool offset64, std::span<const uint8_t> line_str,
                 std::vector<std::pair<std::string, uint64_t>>& out) {
  const uint64_t formats = in.Fixed(1);
  std::vector<std::pair<uint64_t, uint64_t>> format;  // (content type, form)
  for (uint64_t i = 0; i < formats && in.ok(); ++i) format.emplace_back(in.Uleb(), in.Uleb());
  const uint64_t count = in.Uleb();
  for (uint64_t i = 0; i < count && in.ok(); ++i) {
    std::pair<std::string, uint64_t> entry;
    for (const auto& [type, form] : format) {
      std::optional<std::string> value = ReadForm(in, form, offset64, line_str);
      if (!value) return false;
      if (type == 1) entry.first = *value;                                       // DW_LNCT_path
      if (type == 2) entry.second = std::strtoull(value->c_str(), nullptr, 10);  // directory
    }
    out.push_back(std::move(entry));
  }
  return in.ok();
}

bool ReadHeader(Cursor& in, std::span<const uint8_t> line_str, Header& h) {
  uint64_t length = in.Fixed(4);
  const bool offset64 = length == 0xffffffffu;
  if (offset64) length = in.Fixed(8);
  h.end = in.pos() + length;
  h.version = static_cast<uint16_t>(in.Fixed(2));
  if (h.version < 2 || h.version > 5) return false;
  if (h.version >= 5) in.Skip(2);  // address size, segment selector size
  const uint64_t header_length = in.Fixed(offset64 ? 8 : 4);
  h.program = in.pos() + header_length;
  h.min_length = static_cast<uint8_t>(in.Fixed(1));
  if (h.version >= 4) in.Fixed(1);  // maximum operations per instruction
  in.Fixed(1);                      // default is_stmt
  h.line_base = static_cast<int8_t>(in.Fixed(1));
  h.line_range = static_cast<uint8_t>(in.Fixed(1));
  h.opcode_base = static_cast<uint8_t>(in.Fixed(1));
  if (h.line_range == 0 || h.opcode_base == 0) return false;
  for (int i = 1; i < h.opcode_base; ++i)
    h.opcode_lengths.push_back(static_cast<uint8_t>(in.Fixed(1)));
  if (h.version >= 5) {
    std::vector<std::pair<std::string, uint64_t>> dirs, files;
    if (!ReadEntries(in, offset64, line_str, dirs) || !ReadEntries(in, offset64, line_str, files)) {
      return false;
    }
    for (const auto& [name, dir] : files) {
      h.files.push_back(JoinPath(dir < dirs.size() ? dirs[dir].first : "", name));
    }
    return in.ok();
  }
  std::vector<std::string> dirs{""};
  for (std::string d = in.String(); in.ok() && !d.empty(); d = in.String()) dirs.push_back(d);
  h.files.emplace_back();  // file 0 does not exist before DWARF 5
  for (std::string f = in.String(); in.ok() && !f.empty(); f = in.String()) {
    const uint64_t dir = in.Uleb();
    in.Uleb();  // modification time
    in.Uleb();  // length
    h.files.push_back(JoinPath(dir < dirs.size() ? dirs[dir] : "", f));
  }
  return in.ok();
}

}  // namespace

class LineProgramReader {
 public:
  LineProgramReader(CubinLineTable& table,
                    std::map<uint64_t, std::pair<std::string, int64_t>> relocations)
      : table_(table), relocations_(std::move(relocations)) {}

  // Runs every unit's program; false on damage.
  bool Run(std::span<const uint8_t> section, std::span<const uint8_t> line_str) {
    Cursor in(section, 0, section.size());
    while (!in.done()) {
      Header h;
      if (!ReadHeader(in, line_str, h)) return false;
      in.Seek(h.program);
      Cursor program(section, h.program, h.end);
      if (!RunProgram(program, h)) return false;
      in.Seek(h.end);
    }
    return true;
  }

 private:
  bool RunProgram(Cursor& in, const Header& h) {
    uint64_t address = 0;
    uint64_t file = 1;
    int64_t line = 1;
    std::string function;
    auto emit = [&] {
      if (function.empty()) return;
      std::vector<SassLine>& rows = table_.functions_[function].rows;
      rows.push_back({address, file < h.files.size() ? h.files[file] : std::string(),
                      static_cast<uint32_t>(line < 0 ? 0 : line)});
    };
    while (!in.done() && in.ok()) {
      const uint8_t opcode = static_cast<uint8_t>(in.Fixed(1));
      if (opcode >= h.opcode_base) {
        const uint8_t adjusted = opcode - h.opcode_base;
        address += static_cast<uint64_t>(adjusted / h.line_range) * h.min_length;
        line += h.line_base + adjusted % h.line_range;
        emit();
        continue;
      }
      switch (opcode) {
        case 0: {  // extended
          const uint64_t length = in.Uleb();
          const uint64_t start = in.pos();
          const uint8_t sub = static_cast<uint8_t>(in.Fixed(1));
          if (sub == 1) {  // end of sequence
            if (!function.empty()) {
              auto& f = table_.functions_[function];
              f.end = std::max(f.end, address);
            }
            address = 0, file = 1, line = 1;
            function.clear();
          } else if (sub == 2) {  // set address: relocated against the function's symbol
            const uint64_t operand_at = in.pos();
            address = length >= 2 && length <= 9 ? in.Fixed(static_cast<size_t>(length - 1)) : 0;
            auto it = relocations_.find(operand_at);
            if (it != relocations_.end()) {
              function = it->second.first;
              address += static_cast<uint64_t>(it->second.second);
            }
          }
          in.Seek(start + length);
          break;
        }
        case 1:
          emit();
          break;  // copy
        case 2:
          address += in.Uleb() * h.min_length;
          break;  // advance pc
        case 3:
          line += in.Sleb();
          break;  // advance line
        case 4:
          file = in.Uleb();
          break;  // set file
        case 8:   // const add pc
          address += static_cast<uint64_t>((255u - h.opcode_base) / h.line_range) * h.min_length;
          break;
        case 9:
          address += in.Fixed(2);
          break;  // fixed advance pc
        default:  // column, flags, isa, and opcodes of later versions: skip their operands
          for (int i = 0; opcode - 1 < static_cast<int>(h.opcode_lengths.size()) &&
                          i < h.opcode_lengths[opcode - 1];
               ++i) {
            in.Uleb();
          }
          break;
      }
    }
    return in.ok();
  }

  CubinLineTable& table_;
  std::map<uint64_t, std::pair<std::string, int64_t>> relocations_;
};

Result<CubinLineTable> CubinLineTable::Parse(std::span<const uint8_t> cubin) {
  GP_ASSIGN_OR_RETURN(Elf elf, ParseElf(cubin));
  CubinLineTable table;
  const Section* line = elf.Find(".debug_line");
  if (line == nullptr) return table;
  const size_t index = static_cast<size_t>(line - elf.sections.data());
  const Section* line_str = elf.Find(".debug_line_str");
  LineProgramReader reader(table, LineRelocations(elf, index));
  if (!reader.Run(elf.Data(*line), line_str ? elf.Data(*line_str) : std::span<const uint8_t>())) {
    return Error(StatusCode::kCorrupt, "damaged .debug_line in the cubin");
  }
  for (auto& [name, f] : table.functions_) {
    std::stable_sort(f.rows.begin(), f.rows.end(),
                     [](const SassLine& a, const SassLine& b) { return a.offset < b.offset; });
  }
  return table;
}

const SassLine* CubinLineTable::Find(const std::string& function, uint64_t offset) const {
  auto it = functions_.find(function);
  if (it == functions_.end() || it->second.rows.empty() || offset >= it->second.end) {
    return nullptr;
  }
  const std::vector<SassLine>& rows = it->second.rows;
  auto after = std::upper_bound(rows.begin(), rows.end(), offset,
                                [](uint64_t o, const SassLine& row) { return o < row.offset; });
  if (after == rows.begin()) return nullptr;
  return &*std::prev(after);
}

std::span<const SassLine> CubinLineTable::Rows(const std::string& function) const {
  auto it = functions_.find(function);
  if (it == functions_.end()) return {};
  return it->second.rows;
}

}  // namespace gpuperf
