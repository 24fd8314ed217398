#include "support/read_log.h"

#include <gtest/gtest.h>

#include "format/record_schema.h"
#include "gpuperf/trace_writer.h"

namespace gpuperf::testing {
namespace {

template <class T>
void AppendFields(std::ostringstream& out, const T& record) {
  format::ForEachField(record, [&](const char*, const auto& value, format::FieldEnc) {
    out << ' ' << format::FieldToU64(value);
  });
  out << '\n';
}

}  // namespace

void CallLog::OnString(StringId id, std::string_view text) {
  out_ << "string " << id << ' ' << text << '\n';
}

void CallLog::OnStack(const StackRecord& stack) {
  out_ << "stack " << stack.pid << ' ' << stack.id;
  for (uint64_t pc : stack.pcs) out_ << ' ' << pc;
  out_ << '\n';
}

void CallLog::OnSymbol(const SymbolRecord& symbol) {
  out_ << "symbol " << symbol.pid << ' ' << symbol.pc;
  for (const SymbolFrame& f : symbol.frames) {
    out_ << " [" << f.function << ' ' << f.file << ' ' << f.line << ' ' << f.module << ' '
         << f.module_offset << ']';
  }
  out_ << '\n';
}

#define GP_CALL_LOG_DEFINE(Type, name, plural, number)                     \
  void CallLog::On##Type(std::span<const Type##Record> records) {          \
    out_ << #name << " batch of " << records.size() << '\n';               \
    for (const Type##Record& record : records) AppendFields(out_, record); \
  }
GPUPERF_FIXED_RECORD_TYPES(GP_CALL_LOG_DEFINE)
#undef GP_CALL_LOG_DEFINE

std::string DescribeReadReport(const ReadReport& r) {
  std::ostringstream out;
  out << "files=" << r.files << " version=" << r.format_version << " chunks_read=" << r.chunks_read
      << " corrupt=" << r.chunks_corrupt << " unknown=" << r.chunks_unknown
      << " truncated=" << r.bytes_truncated << " records=" << r.records_read
      << " skipped=" << r.files_skipped << " without_chunks=" << r.files_without_chunks
      << " duplicate=" << r.files_duplicate << " repeated=" << r.chunks_repeated
      << " max_string=" << r.max_local_string_id << " complete=" << r.complete_bytes << '\n';
  for (const std::string& w : r.warnings) out << w << '\n';
  for (const ReadReport::BeingRecorded& b : r.being_recorded) {
    out << "being recorded: " << b.path << ' ' << b.pid << '\n';
  }
  return out.str();
}

void WriteManyChunks(const std::string& path, uint32_t pid, int kernels) {
  TraceWriterOptions options;
  options.records_per_chunk = 7;
  auto writer = TraceWriter::Create(path, options);
  ASSERT_TRUE(writer.ok()) << writer.status().message();
  for (uint32_t s = 1; s <= 5; ++s) {
    (*writer)->AddStack(StackRecord{pid, s, {0x400000 + s, 0x400100 + 2ull * s}});
  }
  for (int i = 0; i < kernels; ++i) {
    const auto correlation = static_cast<uint32_t>(i + 1);
    const uint64_t t = 1000 + 100ull * i;
    ApiRecord api;
    api.pid = pid;
    api.tid = pid + i % 3;
    api.name = (*writer)->InternString("cudaLaunchKernel");
    api.start_ns = t;
    api.end_ns = t + 20;
    api.correlation_id = correlation;
    (*writer)->Add(api);
    (*writer)->Add(
        LaunchLinkRecord{pid, api.tid, correlation, 1 + static_cast<StackId>(i % 5), api.name, t});
    KernelRecord kernel;
    kernel.pid = pid;
    kernel.name = (*writer)->InternString("kernel_" + std::to_string(i % 11));
    kernel.stream_id = 7 + i % 2;
    kernel.start_ns = t + 50;
    kernel.end_ns = t + 90;
    kernel.grid_x = 1u + i;
    kernel.correlation_id = correlation;
    (*writer)->Add(kernel);
  }
  ProcessRecord process;
  process.pid = pid;
  process.command = (*writer)->InternString("app");
  (*writer)->Add(process);
  ASSERT_TRUE((*writer)->Close().ok());
}

}  // namespace gpuperf::testing
