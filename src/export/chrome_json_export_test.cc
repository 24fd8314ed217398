// Parses our Chrome JSON back (nlohmann::json) and checks what viewers depend on.
#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "analyze/timeline/timeline_read.h"
#include "base/json_output.h"
#include "base/text_escape.h"
#include "export/chrome_json_writer.h"
#include "export/timeline_export.h"
#include "gpuperf/trace_writer.h"
#include "support/golden.h"
#include "support/temp_dir.h"
#include "support/timeline_trace.h"

namespace gpuperf {
namespace {

using nlohmann::json;
using testing::MakeTimelineTrace;

std::string Export(const Trace& trace, TimelineStats* stats = nullptr) {
  std::ostringstream out;
  Status status = DrawTimeline(trace, TimelineOptions{}, *MakeChromeJsonWriter(out), stats);
  EXPECT_TRUE(status.ok()) << status.message();
  return out.str();
}

// ns of a "ts"/"dur" value printed with three decimals, read from the text exactly.
uint64_t Nanos(const json& value) {
  return static_cast<uint64_t>(value.get<double>() * 1000 + 0.5);
}

// What viewers need of any of our files: slices on one track (pid, tid) never partially
// overlap (ours never overlap at all: nesting goes to lanes), and every flow has one
// start and one end. Returns the number of flows.
size_t ExpectValidTimeline(const json& doc) {
  std::map<std::pair<uint32_t, uint32_t>, std::vector<std::pair<uint64_t, uint64_t>>> tracks;
  std::map<uint64_t, int> starts, finishes;
  for (const json& e : doc["traceEvents"]) {
    if (e["ph"] == "X") {
      const uint64_t start = Nanos(e["ts"]);
      tracks[{e["pid"], e["tid"]}].push_back({start, start + Nanos(e["dur"])});
    }
    if (e["ph"] == "s") ++starts[e["id"]];
    if (e["ph"] == "f") ++finishes[e["id"]];
  }
  for (auto& [track, list] : tracks) {
    std::sort(list.begin(), list.end());
    for (size_t i = 1; i < list.size(); ++i) {
      EXPECT_LE(list[i - 1].second, list[i].first)
          << "overlap on pid " << track.first << " tid " << track.second;
    }
  }
  for (const auto& [id, count] : starts) {
    EXPECT_EQ(count, 1) << "flow " << id;
    EXPECT_EQ(finishes[id], 1) << "flow " << id << " has no end";
  }
  EXPECT_EQ(starts.size(), finishes.size());
  return starts.size();
}

class ChromeJsonExport : public ::testing::Test {
 protected:
  void SetUp() override {
    text_ = Export(MakeTimelineTrace(), &stats_);
    doc_ = json::parse(text_);  // throws (fails the test) on invalid JSON
    for (const json& e : doc_["traceEvents"]) {
      if (e["ph"] == "M" && e["name"] == "thread_name") {
        thread_names_[{e["pid"], e["tid"]}] = e["args"]["name"];
      }
      if (e["ph"] == "M" && e["name"] == "process_name")
        process_names_[e["pid"]] = e["args"]["name"];
    }
  }
  const json* Find(const std::string& name) const {
    for (const json& e : doc_["traceEvents"]) {
      if (e["ph"] == "X" && e["name"] == name) return &e;
    }
    return nullptr;
  }
  std::string ThreadOf(const json& e) const { return thread_names_.at({e["pid"], e["tid"]}); }

  TimelineStats stats_;
  std::string text_;
  json doc_;
  std::map<std::pair<uint32_t, uint32_t>, std::string> thread_names_;
  std::map<uint32_t, std::string> process_names_;
};

TEST_F(ChromeJsonExport, IntegerIdsAndMetadata) {
  for (const json& e : doc_["traceEvents"]) {
    ASSERT_TRUE(e["pid"].is_number_unsigned()) << e.dump();
    if (e.contains("tid")) EXPECT_TRUE(e["tid"].is_number_unsigned()) << e.dump();
  }
  EXPECT_EQ(process_names_.at(testing::kTimelinePid), "python3 train.py");
  EXPECT_EQ(process_names_.at(kGpuPidBase), "GPU 0 (NVIDIA H100 80GB HBM3)");
  EXPECT_EQ(thread_names_.at({testing::kTimelinePid, testing::kTimelineTid}), "main");
  const json* gemm = Find("gemm(float*, float*, int)");
  ASSERT_NE(gemm, nullptr);
  EXPECT_EQ((*gemm)["pid"], kGpuPidBase);
  EXPECT_EQ((*gemm)["tid"], 7);
  EXPECT_EQ(ThreadOf(*gemm), "stream 7");
  EXPECT_EQ((*gemm)["args"]["grid"], "[64, 2, 1]");
  EXPECT_EQ((*gemm)["args"]["registers_per_thread"], 32);
  // Every track has a sort index.
  std::set<std::pair<uint32_t, uint32_t>> sorted;
  for (const json& e : doc_["traceEvents"]) {
    if (e["ph"] == "M" && e["name"] == "thread_sort_index") {
      sorted.insert({e["pid"].get<uint32_t>(), e["tid"].get<uint32_t>()});
    }
  }
  for (const auto& [key, name] : thread_names_) EXPECT_TRUE(sorted.count(key)) << name;
}

TEST_F(ChromeJsonExport, SlicesOnOneTrackNeverPartiallyOverlap) {
  EXPECT_EQ(ExpectValidTimeline(doc_), 6u);
  size_t slices = 0;
  for (const json& e : doc_["traceEvents"]) slices += e["ph"] == "X";
  EXPECT_EQ(slices, stats_.slices);
  // Bytes that are not UTF-8 are \xNN text (base/text_escape.h).
  const json* nasty = Find(Utf8Text(testing::kNastyKernelName));
  ASSERT_NE(nasty, nullptr);
  EXPECT_EQ(ThreadOf(*nasty), "stream 7 (lane 2)");
  EXPECT_EQ(ThreadOf(*Find("cuLaunchKernel")), "main (lane 2)");
}

TEST_F(ChromeJsonExport, EveryFlowHasBothEnds) {
  std::map<uint64_t, const json*> starts, finishes;
  for (const json& e : doc_["traceEvents"]) {
    if (e["ph"] == "s") EXPECT_TRUE(starts.emplace(e["id"], &e).second);
    if (e["ph"] == "f") {
      EXPECT_TRUE(finishes.emplace(e["id"], &e).second);
      EXPECT_EQ(e["bp"], "e");
    }
    if (e["ph"] == "s" || e["ph"] == "f") EXPECT_EQ(e["cat"], "ac2g");
  }
  EXPECT_EQ(starts.size(), 6u);
  ASSERT_EQ(starts.size(), finishes.size());
  for (const auto& [id, start] : starts) {
    ASSERT_TRUE(finishes.count(id)) << id;
    // Each end sits where its slice starts, on that slice's track.
    const json& finish = *finishes[id];
    bool on_slice = false;
    for (const json& e : doc_["traceEvents"]) {
      on_slice |= e["ph"] == "X" && e["pid"] == finish["pid"] && e["tid"] == finish["tid"] &&
                  e["ts"] == finish["ts"];
    }
    EXPECT_TRUE(on_slice) << finish.dump();
  }
}

TEST_F(ChromeJsonExport, LaunchStacksInTheStackFrameTable) {
  const json* launch = Find("cudaLaunchKernel");
  ASSERT_NE(launch, nullptr);
  ASSERT_TRUE(launch->contains("sf"));
  std::vector<std::string> frames;
  std::string id = std::to_string((*launch)["sf"].get<uint32_t>());
  while (!id.empty()) {
    const json& frame = doc_["stackFrames"][id];
    frames.push_back(frame["name"]);
    id = frame.contains("parent") ? frame["parent"].get<std::string>() : "";
  }
  EXPECT_EQ(frames,
            (std::vector<std::string>{"launch_gemm (gemm.cu:30)", "Model::forward (model.cc:20)",
                                      "main (main.cc:10)"}));
}

TEST_F(ChromeJsonExport, CountersAndInstants) {
  std::map<std::string, std::vector<json>> counters;
  size_t instants = 0;
  for (const json& e : doc_["traceEvents"]) {
    if (e["ph"] == "C") counters[e["name"]].push_back(e["args"]);
    if (e["ph"] == "i") {
      ++instants;
      EXPECT_EQ(e["name"], "checkpoint");
    }
  }
  EXPECT_EQ(instants, 1u);
  ASSERT_EQ(counters["GPU 0 memory in use"].size(), 2u);
  EXPECT_EQ(counters["GPU 0 memory in use"][0]["bytes"], 1 << 20);
  EXPECT_EQ(counters["GPU 0 busy %"][0]["percent"], 1.6);
}

TEST_F(ChromeJsonExport, MatchesGolden) {
  EXPECT_MATCHES_GOLDEN(text_, "export/timeline.json");
}

TEST(ChromeJson, MicrosecondsHaveExactlyThreeDecimals) {
  auto micros = [](uint64_t ns) {
    std::string out;
    AppendMicros(out, ns);
    return out;
  };
  EXPECT_EQ(micros(0), "0.000");
  EXPECT_EQ(micros(5), "0.005");
  EXPECT_EQ(micros(1234567), "1234.567");
  // Large CLOCK_MONOTONIC values print exactly, where a double would round.
  EXPECT_EQ(micros(18'446'744'073'709'551'615ull), "18446744073709551.615");
  EXPECT_EQ(micros(1'000'000'000'000'001ull), "1000000000000.001");
}

TEST(ChromeJson, EscapesEveryControlCharacter) {
  std::string raw;
  for (int c = 0; c < 0x20; ++c) raw += static_cast<char>(c);
  raw +=
      "\"\\\x7f"
      "ok \xc3\xa9 \xe2\x82\xac";  // quote, backslash, DEL, é, €
  std::string out;
  AppendJsonString(out, raw);
  for (char c : out) EXPECT_GE(static_cast<unsigned char>(c), 0x20) << out;
  EXPECT_EQ(json::parse(out).get<std::string>(), raw);
  out.clear();
  // Bytes that are not UTF-8 (stray, truncated, a surrogate) as \xNN text
  // (base/text_escape.h); C1 controls, valid UTF-8, as \u escapes: no control in the text.
  AppendJsonString(out, "a\xff\xc3(b\xed\xa0\x80 \xc2\x9b");
  EXPECT_EQ(out, R"("a\\xff\\xc3(b\\xed\\xa0\\x80 \u009b")");
  EXPECT_EQ(json::parse(out).get<std::string>(), "a\\xff\\xc3(b\\xed\\xa0\\x80 \xc2\x9b");
}

// Writes the hand-made trace to a file, `records_per_chunk` records per chunk.
void WriteTimelineTrace(const std::string& path, uint32_t records_per_chunk) {
  {
    auto writer =
        TraceWriter::Create(path, TraceWriterOptions{.records_per_chunk = records_per_chunk});
    ASSERT_TRUE(writer.ok());
    Trace source = MakeTimelineTrace();
    // Re-intern through the writer so ids are the file's own.
    auto remap = [&](StringId id) { return (*writer)->InternString(source.str(id)); };
    for (StackRecord stack : source.stacks) {
      if (stack.id) (*writer)->AddStack(stack);
    }
    for (SymbolRecord symbol : source.symbols) {
      for (SymbolFrame& f : symbol.frames) {
        f.function = remap(f.function), f.file = remap(f.file), f.module = remap(f.module);
      }
      (*writer)->AddSymbol(symbol);
    }
#define GP_COPY(Type, name, plural, number) \
  for (Type##Record r : source.plural) {    \
    RemapStrings(r, remap);                 \
    (*writer)->Add(r);                      \
  }
    auto RemapStrings = [](auto& r, auto& remap) {
      using R = std::decay_t<decltype(r)>;
      if constexpr (std::is_same_v<R, ProcessRecord>) {
        r.command = remap(r.command), r.hostname = remap(r.hostname),
        r.gpuperf_version = remap(r.gpuperf_version);
      } else if constexpr (std::is_same_v<R, ThreadRecord> || std::is_same_v<R, DeviceRecord> ||
                           std::is_same_v<R, KernelRecord> || std::is_same_v<R, ApiRecord>) {
        r.name = remap(r.name);
      } else if constexpr (std::is_same_v<R, NvtxRecord>) {
        r.name = remap(r.name), r.domain = remap(r.domain);
      } else if constexpr (std::is_same_v<R, LaunchLinkRecord>) {
        r.api_name = remap(r.api_name);
      } else if constexpr (std::is_same_v<R, ModuleRecord>) {
        r.path = remap(r.path), r.build_id = remap(r.build_id);
      }
    };
    GPUPERF_FIXED_RECORD_TYPES(GP_COPY)
#undef GP_COPY
    ASSERT_TRUE((*writer)->Close().ok());
  }
}

std::string ExportFile(const std::string& path) {
  std::ostringstream out;
  Status status = DrawTimelineFile(path, TimelineOptions{},
                                   *MakeTimelineWriter(TimelineFormat::kChromeJson, out));
  EXPECT_TRUE(status.ok()) << status.message();
  return out.str();
}

// Streaming from a file gives the same timeline as exporting the loaded trace.
TEST(ChromeJson, StreamingFromAFileMatchesTheLoadedTrace) {
  testing::TempDir dir;
  const std::string path = dir.File("t.gpt");
  WriteTimelineTrace(path, 32768);
  auto loaded = LoadTrace(path);
  ASSERT_TRUE(loaded.ok());
  const std::string streamed = ExportFile(path);
  EXPECT_EQ(streamed, Export(*loaded));
  // And it is the hand-made trace's timeline: the same events.
  EXPECT_EQ(json::parse(streamed)["traceEvents"].size(),
            json::parse(Export(MakeTimelineTrace()))["traceEvents"].size());
}

// Tiny chunks scatter related records (a call and the call nested in it, kernels of one
// stream) over many batches, in the order CUPTI would report them. The timeline may use
// more lanes then, but stays valid, with every arrow.
TEST(ChromeJson, TinyChunksStillGiveAValidTimeline) {
  testing::TempDir dir;
  const std::string path = dir.File("t.gpt");
  WriteTimelineTrace(path, 2);
  EXPECT_EQ(ExpectValidTimeline(json::parse(ExportFile(path))), 6u);
}

}  // namespace
}  // namespace gpuperf
