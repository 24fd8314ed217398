#include "format/text_dump.h"

#include <cinttypes>
#include <cstdio>
#include <vector>

#include "base/text_escape.h"
#include "format/enum_names.h"
#include "format/record_schema.h"
#include "gpuperf/stats.h"

namespace gpuperf {
namespace {

class DumpSink final : public RecordSink {
 public:
  explicit DumpSink(std::ostream& out) : out_(out) { strings_.emplace_back(); }

  void OnString(StringId id, std::string_view text) override {
    if (strings_.size() <= id) strings_.resize(id + 1);
    strings_[id] = std::string(text);
  }

  void OnStack(const StackRecord& stack) override {
    line_.assign("stack id=");
    line_ += std::to_string(stack.id);
    line_ += " pid=" + std::to_string(stack.pid) + " pcs=";
    for (size_t i = 0; i < stack.pcs.size(); ++i) {
      if (i) line_ += ',';
      AppendHex(stack.pcs[i]);
    }
    Emit();
  }

  void OnSymbol(const SymbolRecord& symbol) override {
    line_.assign("symbol pid=" + std::to_string(symbol.pid) + " pc=");
    AppendHex(symbol.pc);
    for (const SymbolFrame& frame : symbol.frames) {
      line_ += " frame=";
      AppendQuoted(line_, Str(frame.function));
      line_ += '@';
      AppendQuoted(line_, Str(frame.file));
      line_ += ':' + std::to_string(frame.line) + '@';
      AppendQuoted(line_, Str(frame.module));
      line_ += '+';
      AppendHex(frame.module_offset);
    }
    Emit();
  }

  void OnPythonCode(const PythonCodeRecord& code) override {
    line_.assign("python_code pid=" + std::to_string(code.pid) +
                 " code_id=" + std::to_string(code.code_id) + " name=");
    AppendQuoted(line_, Str(code.name));
    line_ += " file=";
    AppendQuoted(line_, Str(code.file));
    line_ += " first_line=" + std::to_string(code.first_line) +
             " python=" + std::to_string(code.python_version >> 24) + '.' +
             std::to_string((code.python_version >> 16) & 0xff) +
             " line_format=" + std::to_string(code.line_format) +
             " code_units=" + std::to_string(code.code_units) + " line_table=";
    static constexpr char kHex[] = "0123456789abcdef";
    for (unsigned char byte : code.line_table) {
      line_ += kHex[byte >> 4];
      line_ += kHex[byte & 15];
    }
    line_ += " first_traceable=" + std::to_string(code.first_traceable);
    Emit();
  }

  void OnPcSample(const PcSampleRecord& sample) override {
    line_.assign("pc_sample pid=" + std::to_string(sample.pid) + " cubin=");
    AppendHex(sample.cubin_crc);
    line_ += " function=";
    AppendQuoted(line_, Str(sample.function));
    line_ += " pc=";
    AppendHex(sample.pc_offset);
    line_ += " correlation_id=" + std::to_string(sample.correlation_id);
    for (const PcStallCount& stall : sample.stalls) {
      line_ += " stall=";
      AppendQuoted(line_, Str(stall.reason));
      line_ += ':' + std::to_string(stall.samples);
    }
    Emit();
  }

  void OnCubin(const CubinRecord& cubin) override {
    line_.assign("cubin pid=" + std::to_string(cubin.pid) + " crc=");
    AppendHex(cubin.crc);
    line_ += " bytes=" + std::to_string(cubin.bytes) + " file=";
    AppendQuoted(line_, Str(cubin.file));
    Emit();
  }

  void OnSassLine(const SassLineRecord& line) override {
    line_.assign("sass_line cubin=");
    AppendHex(line.cubin_crc);
    line_ += " function=";
    AppendQuoted(line_, Str(line.function));
    line_ += " pc=";
    AppendHex(line.pc_offset);
    line_ += " file=";
    AppendQuoted(line_, Str(line.file));
    line_ += " line=" + std::to_string(line.line) + " instruction=";
    AppendQuoted(line_, Str(line.instruction));
    Emit();
  }

#define GPUPERF_DUMP_ON(Type, name, plural, number)                      \
  void On##Type(std::span<const Type##Record> records) override {        \
    for (const Type##Record& record : records) DumpFixed(#name, record); \
  }
  GPUPERF_FIXED_RECORD_TYPES(GPUPERF_DUMP_ON)
#undef GPUPERF_DUMP_ON

 private:
  template <class T>
  void DumpFixed(const char* type_name, const T& record) {
    line_.assign(type_name);
    format::ForEachField(record, [&](const char* field, const auto& value, format::FieldEnc enc) {
      using FieldT = std::remove_cvref_t<decltype(value)>;
      line_ += ' ';
      line_ += field;
      line_ += '=';
      if (enc == format::FieldEnc::kString) {
        AppendQuoted(line_, Str(static_cast<StringId>(value)));
      } else if constexpr (std::is_enum_v<FieldT>) {
        line_ += EnumName(value);
      } else if constexpr (std::is_floating_point_v<FieldT>) {
        char buf[40];
        std::snprintf(buf, sizeof(buf), "%.10g", static_cast<double>(value));
        line_ += buf;
      } else {
        line_ += std::to_string(value);
      }
    });
    if constexpr (std::is_same_v<T, StatRecord>) {
      line_ += " # ";
      line_ += GetStatInfo(record.stat).name;
    }
    Emit();
  }

  std::string_view Str(StringId id) const {
    return id < strings_.size() ? std::string_view(strings_[id]) : std::string_view();
  }

  void AppendHex(uint64_t value) {
    char buf[24];
    std::snprintf(buf, sizeof(buf), "0x%" PRIx64, value);
    line_ += buf;
  }

  void Emit() {
    line_ += '\n';
    out_ << line_;
  }

  std::ostream& out_;
  std::vector<std::string> strings_;
  std::string line_;
};

}  // namespace

void AppendQuoted(std::string& out, std::string_view text) {
  out += '"';
  for (size_t i = 0; i < text.size();) {
    if (AppendShortEscape(out, text[i])) {
      ++i;
      continue;
    }
    // The rest as base/text_escape.h's display form: every byte of a control character or
    // of something that is not UTF-8 as \xNN.
    const size_t kept = KeptLength(text, i, TextForm::kDisplay);
    if (kept == 0) {
      AppendByteEscape(out, static_cast<unsigned char>(text[i++]));
    } else {
      out.append(text, i, kept);
      i += kept;
    }
  }
  out += '"';
}

Status DumpTrace(const std::string& path, std::ostream& out, ReadReport* report) {
  ReadReport local;
  ReadReport& seen = report ? *report : local;
  DumpSink sink(out);
  Status status = ReadTrace(path, sink, &seen);
  if (!status.ok()) return status;
  out << "# files=" << seen.files << " version=" << seen.format_version
      << " chunks=" << seen.chunks_read << " records=" << seen.records_read
      << " corrupt_chunks=" << seen.chunks_corrupt << " unknown_chunks=" << seen.chunks_unknown
      << " truncated_bytes=" << seen.bytes_truncated << "\n";
  return Status::Ok();
}

}  // namespace gpuperf
