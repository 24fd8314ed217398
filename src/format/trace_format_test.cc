// Round trips and damage handling of the trace file format.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <sstream>

#include "format/file_format.h"
#include "format/record_codec.h"
#include "format/record_schema.h"
#include "format/text_dump.h"
#include "gpuperf/python_frame_word.h"
#include "gpuperf/trace.h"
#include "gpuperf/trace_append.h"
#include "gpuperf/trace_writer.h"
#include "support/raw_chunk.h"
#include "support/temp_dir.h"

namespace gpuperf {
namespace {

using testing::RawChunk;
using testing::ReadFileToString;
using testing::TempDir;
using testing::WriteStringToFile;

template <class T>
std::vector<uint64_t> FieldValues(const T& record) {
  std::vector<uint64_t> values;
  format::ForEachField(record, [&](const char*, const auto& value, format::FieldEnc) {
    values.push_back(format::FieldToU64(value));
  });
  return values;
}

// Fills every field of a record with a value derived from (seed, field index), using
// valid string and stack ids for fields of those kinds.
template <class T>
T MakeRecord(TraceWriter& writer, uint64_t seed) {
  T record{};
  int index = 0;
  format::ForEachField(record, [&](const char* name, auto& value, format::FieldEnc enc) {
    using FieldT = std::remove_cvref_t<decltype(value)>;
    ++index;
    if constexpr (std::is_enum_v<FieldT>) {
      value = static_cast<FieldT>(1 + (seed + index) % 2);
    } else if constexpr (std::is_floating_point_v<FieldT>) {
      value = static_cast<FieldT>(seed) * 1.25 + 1.0 / (index + 3);  // not an integer
    } else if (enc == format::FieldEnc::kString) {
      value = writer.InternString(std::string(name) + "-" + std::to_string(seed % 3));
    } else if (enc == format::FieldEnc::kStack) {
      value = static_cast<FieldT>(1 + seed % 2);
    } else if constexpr (sizeof(FieldT) == 8) {
      value = static_cast<FieldT>((1ull << 40) + seed * 1000003 + index);
    } else if constexpr (std::is_signed_v<FieldT>) {
      value = static_cast<FieldT>(static_cast<int64_t>(seed % 5) - 2 - index);
    } else {
      value = static_cast<FieldT>(seed * 31 + index);
    }
  });
  return record;
}

struct Expected {
#define GP_EXPECTED_VECTOR(Type, name, plural, number) std::vector<Type##Record> plural;
  GPUPERF_FIXED_RECORD_TYPES(GP_EXPECTED_VECTOR)
#undef GP_EXPECTED_VECTOR
  std::vector<StackRecord> stacks;
};

// Writes `count` records of every type plus two stacks and a symbol.
Expected WriteEverything(const std::string& path, int count, uint32_t records_per_chunk) {
  Expected expected;
  TraceWriterOptions options;
  options.records_per_chunk = records_per_chunk;
  auto writer = TraceWriter::Create(path, options);
  EXPECT_TRUE(writer.ok()) << writer.status().message();
  for (uint32_t id = 1; id <= 2; ++id) {
    StackRecord stack{7, id, {0x401000 + id, 0x7f0000001234, 0x400500}};
    (*writer)->AddStack(stack);
    expected.stacks.push_back(stack);
  }
  SymbolRecord symbol{7,
                      0x401001,
                      {{(*writer)->InternString("inlined_fn"), (*writer)->InternString("a.cc"), 12,
                        (*writer)->InternString("/bin/app"), 0x1001},
                       {(*writer)->InternString("main"), 0, 0, 0, 0}}};
  (*writer)->AddSymbol(symbol);
  for (int i = 0; i < count; ++i) {
#define GP_WRITE_ONE(Type, name, plural, number)                    \
  expected.plural.push_back(MakeRecord<Type##Record>(**writer, i)); \
  (*writer)->Add(expected.plural.back());
    GPUPERF_FIXED_RECORD_TYPES(GP_WRITE_ONE)
#undef GP_WRITE_ONE
  }
  EXPECT_TRUE((*writer)->Close().ok());
  return expected;
}

TEST(TraceFormat, RoundTripsEveryRecordType) {
  TempDir dir;
  const std::string path = dir.File("all.gpt");
  Expected expected = WriteEverything(path, 10, 3);
  auto trace = LoadTrace(path);
  ASSERT_TRUE(trace.ok()) << trace.status().message();
  EXPECT_EQ(trace->read_report.chunks_corrupt, 0u);
  EXPECT_TRUE(trace->read_report.warnings.empty());
#define GP_CHECK_TYPE(Type, name, plural, number)                             \
  ASSERT_EQ(trace->plural.size(), expected.plural.size()) << #name;           \
  for (size_t i = 0; i < expected.plural.size(); ++i) {                       \
    EXPECT_EQ(FieldValues(trace->plural[i]), FieldValues(expected.plural[i])) \
        << #name << " record " << i;                                          \
  }
  GPUPERF_FIXED_RECORD_TYPES(GP_CHECK_TYPE)
#undef GP_CHECK_TYPE
  // A single file keeps its ids, so string ids resolve to the same text.
  EXPECT_EQ(trace->str(trace->kernels[1].name), "name-1");
  ASSERT_EQ(trace->stacks.size(), 3u);
  EXPECT_EQ(trace->stacks[2].pcs, expected.stacks[1].pcs);
  ASSERT_EQ(trace->symbols.size(), 1u);
  ASSERT_EQ(trace->symbols[0].frames.size(), 2u);
  EXPECT_EQ(trace->str(trace->symbols[0].frames[0].function), "inlined_fn");
  EXPECT_EQ(trace->symbols[0].frames[0].line, 12u);
  EXPECT_EQ(trace->str(trace->symbols[0].frames[1].function), "main");
}

TEST(TraceFormat, DumpShowsRecordsReadably) {
  TempDir dir;
  const std::string path = dir.File("t.gpt");
  auto writer = TraceWriter::Create(path);
  ASSERT_TRUE(writer.ok());
  KernelRecord kernel;
  kernel.pid = 12;
  kernel.name = (*writer)->InternString("vec\"Add\n");
  kernel.start_ns = 100;
  kernel.end_ns = 250;
  (*writer)->Add(kernel);
  MemcpyRecord copy;
  copy.kind = MemcpyKind::kHtoD;
  (*writer)->Add(copy);
  ASSERT_TRUE((*writer)->Close().ok());
  std::ostringstream out;
  ASSERT_TRUE(DumpTrace(path, out, nullptr).ok());
  const std::string text = out.str();
  EXPECT_NE(text.find("kernel pid=12 name=\"vec\\\"Add\\n\" device_id=0"), std::string::npos)
      << text;
  EXPECT_NE(text.find("start_ns=100 end_ns=250"), std::string::npos) << text;
  EXPECT_NE(text.find("memcpy pid=0 kind=HtoD"), std::string::npos) << text;
  EXPECT_NE(text.find("# files=1 version=1"), std::string::npos) << text;
}

TEST(TraceFormat, TruncatedFileYieldsEveryCompleteChunk) {
  TempDir dir;
  const std::string path = dir.File("full.gpt");
  WriteEverything(path, 40, 4);
  const std::string bytes = ReadFileToString(path);
  auto full = LoadTrace(path);
  ASSERT_TRUE(full.ok());
  size_t previous = 0;
  bool saw_mid_chunk_warning = false;
  for (size_t cut = format::kFileHeaderSize; cut <= bytes.size(); cut += 37) {
    const std::string cut_path = dir.File("cut.gpt");
    WriteStringToFile(cut_path, bytes.substr(0, cut));
    auto trace = LoadTrace(cut_path);
    ASSERT_TRUE(trace.ok()) << "cut at " << cut << ": " << trace.status().message();
    EXPECT_EQ(trace->read_report.chunks_corrupt, 0u);
    EXPECT_GE(trace->kernels.size(), previous) << "cut at " << cut;
    previous = trace->kernels.size();
    if (trace->read_report.bytes_truncated > 0) {
      ASSERT_FALSE(trace->read_report.warnings.empty());
      saw_mid_chunk_warning |=
          trace->read_report.warnings[0].find("ends inside a chunk") != std::string::npos;
    }
  }
  EXPECT_TRUE(saw_mid_chunk_warning);
  // Cutting off only the last byte loses exactly the last chunk.
  WriteStringToFile(dir.File("cut.gpt"), bytes.substr(0, bytes.size() - 1));
  auto almost = LoadTrace(dir.File("cut.gpt"));
  ASSERT_TRUE(almost.ok());
  EXPECT_EQ(almost->read_report.chunks_read + 1, full->read_report.chunks_read);
}

TEST(TraceFormat, CorruptedChunkIsSkippedAndCounted) {
  TempDir dir;
  const std::string path = dir.File("c.gpt");
  WriteEverything(path, 40, 4);
  std::string bytes = ReadFileToString(path);
  auto full = LoadTrace(path);
  ASSERT_TRUE(full.ok());
  bytes[bytes.size() / 2] ^= 0x5a;  // inside some chunk's payload or header
  WriteStringToFile(path, bytes);
  auto trace = LoadTrace(path);
  ASSERT_TRUE(trace.ok()) << trace.status().message();
  EXPECT_GE(trace->read_report.chunks_corrupt, 1u);
  EXPECT_GE(trace->read_report.chunks_read + 2, full->read_report.chunks_read);
  EXPECT_LT(trace->read_report.chunks_read, full->read_report.chunks_read);
  ASSERT_FALSE(trace->read_report.warnings.empty());
  EXPECT_NE(trace->read_report.warnings[0].find("damaged chunk"), std::string::npos);
}

TEST(TraceFormat, DamagedChunkHeaderResynchronizes) {
  TempDir dir;
  const std::string path = dir.File("h.gpt");
  WriteEverything(path, 20, 4);
  std::string bytes = ReadFileToString(path);
  // Break the magic of the first chunk: everything after it must still be read.
  bytes[format::kFileHeaderSize] ^= 0xff;
  WriteStringToFile(path, bytes);
  auto trace = LoadTrace(path);
  ASSERT_TRUE(trace.ok());
  EXPECT_EQ(trace->read_report.chunks_corrupt, 1u);
  EXPECT_EQ(trace->kernels.size(), 20u);
}

TEST(TraceFormat, EmptyFileIsAClearError) {
  TempDir dir;
  WriteStringToFile(dir.File("empty.gpt"), "");
  auto trace = LoadTrace(dir.File("empty.gpt"));
  ASSERT_FALSE(trace.ok());
  EXPECT_EQ(trace.status().code(), StatusCode::kNotATrace);
  EXPECT_NE(trace.status().message().find("is empty"), std::string::npos);
}

TEST(TraceFormat, NonTraceInputIsAClearError) {
  TempDir dir;
  WriteStringToFile(dir.File("notes.txt"), "this is not a trace\n");
  auto trace = LoadTrace(dir.File("notes.txt"));
  ASSERT_FALSE(trace.ok());
  EXPECT_EQ(trace.status().code(), StatusCode::kNotATrace);
  EXPECT_NE(trace.status().message().find("is not a gpuperf trace"), std::string::npos);
}

TEST(TraceFormat, WrongVersionIsAClearError) {
  TempDir dir;
  const std::string path = dir.File("v.gpt");
  WriteEverything(path, 1, 4);
  std::string bytes = ReadFileToString(path);
  const uint32_t newer = format::kFormatVersion + 1;
  std::memcpy(bytes.data() + 8, &newer, 4);
  WriteStringToFile(path, bytes);
  auto trace = LoadTrace(path);
  ASSERT_FALSE(trace.ok());
  EXPECT_EQ(trace.status().code(), StatusCode::kUnsupportedVersion);
  EXPECT_NE(trace.status().message().find("version 2"), std::string::npos);
  EXPECT_NE(trace.status().message().find("upgrade gpuperf"), std::string::npos);
}

TEST(TraceFormat, MissingPathIsNotFound) {
  auto trace = LoadTrace("/nonexistent/trace.gpt");
  ASSERT_FALSE(trace.ok());
  EXPECT_EQ(trace.status().code(), StatusCode::kNotFound);
}

TEST(TraceFormat, UnknownChunkTypeIsSkipped) {
  TempDir dir;
  const std::string path = dir.File("u.gpt");
  WriteEverything(path, 2, 100);
  std::string bytes = ReadFileToString(path);
  // Append a well-formed chunk of a type from the future.
  const std::string chunk = RawChunk(999, std::string(3, '\0'), 1);
  WriteStringToFile(path, bytes + chunk);
  auto trace = LoadTrace(path);
  ASSERT_TRUE(trace.ok());
  EXPECT_EQ(trace->read_report.chunks_unknown, 1u);
  EXPECT_EQ(trace->read_report.chunks_corrupt, 0u);
  EXPECT_EQ(trace->kernels.size(), 2u);
}

TEST(TraceFormat, DirectoryReadsAsOneTraceWithRemappedIds) {
  TempDir dir;
  for (uint32_t pid : {100u, 200u}) {
    auto writer = TraceWriter::Create(dir.File("app." + std::to_string(pid) + ".gpt"));
    ASSERT_TRUE(writer.ok());
    // Both files use local stack id 1 and string id 1, for different content.
    (*writer)->InternString(pid == 100 ? "only-in-100" : "only-in-200");
    (*writer)->AddStack(StackRecord{pid, 1, {pid * 16ull}});
    KernelRecord kernel;
    kernel.pid = pid;
    kernel.name = (*writer)->InternString("shared_kernel");
    kernel.correlation_id = 5;
    (*writer)->Add(kernel);
    (*writer)->Add(LaunchLinkRecord{pid, pid, 5, 1});
    ASSERT_TRUE((*writer)->Close().ok());
  }
  WriteStringToFile(dir.File("README.txt"), "not a trace, not read");
  auto trace = LoadTrace(dir.path().string());
  ASSERT_TRUE(trace.ok()) << trace.status().message();
  EXPECT_EQ(trace->read_report.files, 2u);
  ASSERT_EQ(trace->kernels.size(), 2u);
  EXPECT_EQ(trace->kernels[0].name, trace->kernels[1].name);  // deduplicated
  EXPECT_EQ(trace->str(trace->kernels[1].name), "shared_kernel");
  ASSERT_EQ(trace->launch_links.size(), 2u);
  for (const LaunchLinkRecord& link : trace->launch_links) {
    const StackRecord& stack = trace->stacks[link.stack_id];
    EXPECT_EQ(stack.pid, link.pid);
    EXPECT_EQ(stack.pcs, std::vector<uint64_t>{link.pid * 16ull});
  }
}

// Python code records: names remapped like every string id, line tables byte for byte
// (zero bytes included), tagged Python words in stacks kept as they are.
TEST(TraceFormat, PythonCodesRoundTripAcrossFiles) {
  TempDir dir;
  const std::string table("\x80\x00\xd8\x02\x00\xff", 6);
  for (uint32_t pid : {100u, 200u}) {
    auto writer = TraceWriter::Create(dir.File("app." + std::to_string(pid) + ".gpt"));
    ASSERT_TRUE(writer.ok());
    (*writer)->InternString(pid == 100 ? "only-in-100" : "only-in-200");
    PythonCodeRecord code;
    code.pid = pid;
    code.code_id = 1;
    code.name = (*writer)->InternString(pid == 100 ? "Model.forward" : "<module>");
    code.file = (*writer)->InternString("/src/model.py");
    code.first_line = pid == 100 ? 87 : -3;
    code.python_version = 0x030b0000;
    code.line_format = 2;
    code.code_units = 40;
    code.line_table = table;
    code.first_traceable = pid == 100 ? 6 : 0;
    (*writer)->AddPythonCode(code);
    (*writer)->AddStack(StackRecord{
        pid, 1, {0x401000, MakePythonFrameWord(1, 7, false), MakePythonFrameWord(1, 0, true)}});
    ASSERT_TRUE((*writer)->Close().ok());
  }
  auto trace = LoadTrace(dir.path().string());
  ASSERT_TRUE(trace.ok()) << trace.status().message();
  EXPECT_EQ(trace->read_report.chunks_corrupt, 0u);
  ASSERT_EQ(trace->python_codes.size(), 2u);
  const PythonCodeRecord& first = trace->python_codes[0];
  const PythonCodeRecord& second = trace->python_codes[1];
  EXPECT_EQ(first.pid, 100u);
  EXPECT_EQ(first.code_id, 1u);
  EXPECT_EQ(trace->str(first.name), "Model.forward");
  EXPECT_EQ(trace->str(second.name), "<module>");
  EXPECT_EQ(first.file, second.file);  // one global id for the shared file name
  EXPECT_EQ(trace->str(second.file), "/src/model.py");
  EXPECT_EQ(first.first_line, 87);
  EXPECT_EQ(second.first_line, -3);
  EXPECT_EQ(first.python_version, 0x030b0000u);
  EXPECT_EQ(first.line_format, 2);
  EXPECT_EQ(first.code_units, 40u);
  EXPECT_EQ(first.line_table, table);
  EXPECT_EQ(first.first_traceable, 6u);
  EXPECT_EQ(second.first_traceable, 0u);
  ASSERT_EQ(trace->stacks.size(), 3u);
  EXPECT_EQ(trace->stacks[1].pcs[1], MakePythonFrameWord(1, 7, false));
  EXPECT_TRUE(PythonFrameIsEntry(trace->stacks[2].pcs[2]));

  std::ostringstream out;
  ASSERT_TRUE(DumpTrace(dir.File("app.100.gpt"), out, nullptr).ok());
  EXPECT_NE(out.str().find("python_code pid=100 code_id=1 name=\"Model.forward\" "
                           "file=\"/src/model.py\" first_line=87 python=3.11 line_format=2 "
                           "code_units=40 line_table=8000d80200ff first_traceable=6"),
            std::string::npos)
      << out.str();
}

TEST(TraceFormat, PythonFrameWordsNeverLookLikePcs) {
  const uint64_t word = MakePythonFrameWord(kMaxPythonCodeId, 0xffffffffu, true);
  EXPECT_TRUE(IsPythonFrameWord(word));
  EXPECT_EQ(PythonFrameCodeId(word), kMaxPythonCodeId);
  EXPECT_EQ(PythonFrameInstruction(word), 0xffffffffu);
  EXPECT_TRUE(PythonFrameIsEntry(word));
  EXPECT_FALSE(PythonFrameIsGenerator(word));
  EXPECT_FALSE(PythonFrameIsEntry(MakePythonFrameWord(5, 1, false)));
  // The generator bit is the code id's old top bit: it leaves the id and the rest alone.
  const uint64_t generator = MakePythonFrameWord(kMaxPythonCodeId, 3, false, true);
  EXPECT_TRUE(PythonFrameIsGenerator(generator));
  EXPECT_FALSE(PythonFrameIsEntry(generator));
  EXPECT_EQ(PythonFrameCodeId(generator), kMaxPythonCodeId);
  EXPECT_EQ(PythonFrameInstruction(generator), 3u);
  EXPECT_EQ(PythonFrameCodeId(MakePythonFrameWord(kMaxPythonCodeId + 1, 0, false)), 0u);
  EXPECT_FALSE(IsPythonFrameWord(0x7fffffffffffull));  // the highest user-space address
}

// Each code's first traceable unit goes in a trailer after the records: a reader that
// stops after the records (every reader before it) reads the same records, and a chunk
// without it (every trace before it) reads with first_traceable 0.
TEST(TraceFormat, PythonCodeFirstTraceableIsATrailerOldReadersSkip) {
  std::vector<PythonCodeRecord> codes(2);
  codes[0].code_id = 1;
  codes[0].first_line = 4;
  codes[0].python_version = 0x030c0000;
  codes[0].line_table = "ab";
  codes[0].first_traceable = 300;  // two varint bytes
  codes[1].code_id = 2;
  codes[1].python_version = 0x030a0000;
  std::string bytes;
  format::EncodePythonCodes(codes, bytes);
  const std::vector<uint32_t> identity = {0, 1, 2, 3};
  auto decode = [&](std::string_view payload, std::vector<PythonCodeRecord>& out) {
    format::ByteCursor in(reinterpret_cast<const uint8_t*>(payload.data()), payload.size());
    format::IdMaps ids{identity, identity};
    return format::DecodePythonCodes(in, 2, ids, out);
  };
  std::vector<PythonCodeRecord> read;
  ASSERT_TRUE(decode(bytes, read));
  ASSERT_EQ(read.size(), 2u);
  EXPECT_EQ(read[0].first_traceable, 300u);
  EXPECT_EQ(read[1].first_traceable, 0u);
  EXPECT_EQ(read[0].line_table, "ab");
  EXPECT_EQ(read[1].code_id, 2u);

  const std::string records = bytes.substr(0, bytes.size() - 3);  // varints 300, 0
  ASSERT_TRUE(decode(records, read));
  ASSERT_EQ(read.size(), 2u);
  EXPECT_EQ(read[0].first_traceable, 0u);
  EXPECT_EQ(read[0].code_id, 1u);
  EXPECT_EQ(read[0].first_line, 4);
  EXPECT_EQ(read[0].line_table, "ab");
  EXPECT_EQ(read[1].python_version, 0x030a0000u);
}

TEST(TraceFormat, EmptyDirectoryIsAClearError) {
  TempDir dir;
  auto trace = LoadTrace(dir.path().string());
  ASSERT_FALSE(trace.ok());
  EXPECT_NE(trace.status().message().find("holds no trace files"), std::string::npos);
}

}  // namespace
}  // namespace gpuperf

namespace gpuperf {
namespace {

TEST(TraceFormat, AppendAddsChunksAfterATruncatedTail) {
  TempDir dir;
  const std::string path = dir.File("a.gpt");
  WriteEverything(path, 8, 4);
  std::string bytes = ReadFileToString(path);
  WriteStringToFile(path, bytes.substr(0, bytes.size() - 5));  // a torn last chunk
  auto before = LoadTrace(path);
  ASSERT_TRUE(before.ok());
  {
    auto writer = AppendToTrace(path);
    ASSERT_TRUE(writer.ok()) << writer.status().message();
    SymbolRecord symbol{
        7,
        0x400500,
        {{(*writer)->InternString("appended_fn"), (*writer)->InternString("name-1"), 3, 0, 0}}};
    (*writer)->AddSymbol(symbol);
    ASSERT_TRUE((*writer)->Close().ok());
  }
  auto after = LoadTrace(path);
  ASSERT_TRUE(after.ok());
  EXPECT_EQ(after->read_report.bytes_truncated, 0u);
  EXPECT_EQ(after->kernels.size(), before->kernels.size());
  ASSERT_EQ(after->symbols.size(), 2u);
  EXPECT_EQ(after->str(after->symbols[1].frames[0].function), "appended_fn");
  // "name-1" existed already: it resolves to the same global id as before.
  EXPECT_EQ(after->str(after->symbols[1].frames[0].file), "name-1");
  EXPECT_EQ(after->symbols[1].frames[0].file, after->kernels[1].name);
}

}  // namespace
}  // namespace gpuperf

namespace gpuperf {
namespace {

TEST(TraceFormat, CallerChosenStringIdsMayHaveGaps) {
  TempDir dir;
  const std::string path = dir.File("s.gpt");
  auto writer = TraceWriter::Create(path);
  ASSERT_TRUE(writer.ok());
  (*writer)->AddString(1, "one");
  (*writer)->AddString(2, "two");
  (*writer)->AddString(7, "seven");
  KernelRecord kernel;
  kernel.name = 7;
  (*writer)->Add(kernel);
  kernel.name = 2;
  (*writer)->Add(kernel);
  ASSERT_TRUE((*writer)->Close().ok());
  auto trace = LoadTrace(path);
  ASSERT_TRUE(trace.ok());
  ASSERT_EQ(trace->kernels.size(), 2u);
  EXPECT_EQ(trace->str(trace->kernels[0].name), "seven");
  EXPECT_EQ(trace->str(trace->kernels[1].name), "two");
}

}  // namespace
}  // namespace gpuperf
