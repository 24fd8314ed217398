// Decodes our pprof output with protoc against tests/proto/profile.proto (written from
// the format's public definition) and reads it back the way pprof does: samples resolved
// through locations, lines and functions to names.
#include "export/pprof_export.h"

#include <gtest/gtest.h>

#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "support/model_trace.h"
#include "support/proto_text.h"
#include "support/temp_dir.h"
#include "support/test_trace.h"

namespace gpuperf {
namespace {

using testing::Node;
using testing::TestTrace;

struct Profile {
  std::vector<std::string> strings;
  std::vector<std::pair<std::string, std::string>> sample_types;
  std::string default_sample_type;
  struct Function {
    std::string name, system_name, file;
  };
  struct Line {
    uint64_t function;
    int64_t line;
  };
  struct Location {
    uint64_t mapping = 0, address = 0;
    std::vector<Line> lines;
  };
  struct Mapping {
    uint64_t start = 0, limit = 0;
    std::string file, build_id;
    bool has_functions = false, has_inline_frames = false;
  };
  struct Sample {
    std::vector<std::string> frames;  // leaf first, one per line ("fn file:line")
    std::vector<uint64_t> locations;
    std::vector<int64_t> values;
    std::map<std::string, std::string> labels;
  };
  std::map<uint64_t, Function> functions;
  std::map<uint64_t, Location> locations;
  std::map<uint64_t, Mapping> mappings;
  std::vector<Sample> samples;
  std::vector<std::string> comments;
  int64_t time_nanos = 0, duration_nanos = 0;

  const Sample* Find(const std::string& leaf) const {
    for (const Sample& s : samples) {
      if (!s.frames.empty() && s.frames[0] == leaf) return &s;
    }
    return nullptr;
  }
};

// Reads the decoded message, checking what pprof's own reader checks: ids non-zero and
// unique, every reference resolved, string indexes in range, string 0 empty.
Profile Read(const std::string& bytes) {
  const Node root = testing::ParseTextFormat(
      testing::ProtocDecode(bytes, "profile.proto", "perftools.profiles.Profile"));
  Profile p;
  p.strings = root.Values("string_table");
  EXPECT_FALSE(p.strings.empty());
  if (p.strings.empty()) return p;
  EXPECT_EQ(p.strings[0], "");
  auto str = [&p](const Node& n, const std::string& field) {
    const uint64_t i = n.Uint(field);
    EXPECT_LT(i, p.strings.size()) << field;
    return i < p.strings.size() ? p.strings[i] : std::string("?");
  };
  for (const Node* t : root.All("sample_type")) {
    p.sample_types.emplace_back(str(*t, "type"), str(*t, "unit"));
  }
  p.default_sample_type = str(root, "default_sample_type");
  for (const Node* f : root.All("function")) {
    const uint64_t id = f->Uint("id");
    EXPECT_NE(id, 0u);
    EXPECT_TRUE(p.functions
                    .emplace(id, Profile::Function{str(*f, "name"), str(*f, "system_name"),
                                                   str(*f, "filename")})
                    .second)
        << "function id " << id << " twice";
  }
  for (const Node* m : root.All("mapping")) {
    Profile::Mapping mapping{m->Uint("memory_start"),
                             m->Uint("memory_limit"),
                             str(*m, "filename"),
                             str(*m, "build_id"),
                             m->Get("has_functions") == "true",
                             m->Get("has_inline_frames") == "true"};
    EXPECT_NE(m->Uint("id"), 0u);
    EXPECT_TRUE(p.mappings.emplace(m->Uint("id"), mapping).second);
  }
  for (const Node* l : root.All("location")) {
    Profile::Location location{l->Uint("mapping_id"), l->Uint("address"), {}};
    if (location.mapping != 0) {
      EXPECT_TRUE(p.mappings.count(location.mapping));
    }
    for (const Node* line : l->All("line")) {
      const uint64_t fn = line->Uint("function_id");
      EXPECT_TRUE(p.functions.count(fn)) << "location names function " << fn;
      location.lines.push_back({fn, std::stoll(line->Get("line", "0"))});
    }
    EXPECT_FALSE(location.lines.empty());
    EXPECT_NE(l->Uint("id"), 0u);
    EXPECT_TRUE(p.locations.emplace(l->Uint("id"), location).second);
  }
  for (const Node* s : root.All("sample")) {
    Profile::Sample sample;
    for (const std::string& id : s->Values("location_id")) {
      sample.locations.push_back(std::stoull(id));
      auto it = p.locations.find(sample.locations.back());
      EXPECT_NE(it, p.locations.end()) << "sample names location " << id;
      if (it == p.locations.end()) continue;
      for (const Profile::Line& line : it->second.lines) {
        const Profile::Function& f = p.functions[line.function];
        std::string frame = f.name;
        if (!f.file.empty()) frame += " " + f.file + ":" + std::to_string(line.line);
        sample.frames.push_back(frame);
      }
    }
    for (const std::string& v : s->Values("value")) sample.values.push_back(std::stoll(v));
    EXPECT_EQ(sample.values.size(), p.sample_types.size());
    for (const Node* label : s->All("label"))
      sample.labels[str(*label, "key")] = str(*label, "str");
    p.samples.push_back(sample);
  }
  for (const std::string& c : root.Values("comment"))
    p.comments.push_back(p.strings[std::stoull(c)]);
  p.time_nanos = std::stoll(root.Get("time_nanos", "0"));
  p.duration_nanos = std::stoll(root.Get("duration_nanos", "0"));
  return p;
}

std::string Export(const Trace& trace, PprofOptions options = {}, PprofStats* stats = nullptr) {
  std::ostringstream out;
  EXPECT_TRUE(WritePprof(BuildLaunchProfile(trace), options, out, stats).ok());
  return out.str();
}

TEST(PprofExport, SampleTypesAndDefaultsFollowTheDesign) {
  TestTrace t;
  t.Process(1, "train");
  const Profile p = Read(Export(t.trace()));
  const std::vector<std::pair<std::string, std::string>> want = {
      {"gpu_time", "nanoseconds"}, {"launches", "count"}, {"cpu_launch_time", "nanoseconds"}};
  EXPECT_EQ(p.sample_types, want);
  EXPECT_EQ(p.default_sample_type, "gpu_time");
  EXPECT_TRUE(p.samples.empty());  // an empty trace is a valid, empty profile
}

TEST(PprofExport, KernelIsTheLeafUnderApiAndCpuStackWithItsCosts) {
  TestTrace t;
  t.Process(1, "train");
  t.Thread(1, 11, "main");
  const StackId s = t.Stack(1, {"main", "train_step", "launch"});
  t.Link(1, 11, 5, s, "cudaLaunchKernel");
  t.Link(1, 11, 6, s, "cudaLaunchKernel");
  t.trace().apis.push_back(
      {1, 11, ApiDomain::kRuntime, 211, t.Str("cudaLaunchKernel"), 1000, 4000, 5, 0});
  t.trace().apis.push_back(
      {1, 11, ApiDomain::kRuntime, 211, t.Str("cudaLaunchKernel"), 5000, 7500, 6, 0});
  t.Kernel(1, "_Z4gemmPfi", 5, 10'000, 10'700, 0, 7);
  t.Kernel(1, "_Z4gemmPfi", 6, 11'000, 11'900, 0, 7);
  PprofStats stats;
  const Profile p = Read(Export(t.trace(), {}, &stats));
  ASSERT_EQ(p.samples.size(), 1u);
  const Profile::Sample& sample = p.samples[0];
  const std::vector<std::string> frames = {"[gpu] gemm", "cudaLaunchKernel", "launch app.cc:10",
                                           "train_step app.cc:10", "main app.cc:10"};
  EXPECT_EQ(sample.frames, frames);
  // GPU time 700 + 900, two launches, CPU 3000 + 2500.
  EXPECT_EQ(sample.values, (std::vector<int64_t>{1600, 2, 5500}));
  const std::map<std::string, std::string> labels = {
      {"pid", "1"}, {"tid", "11"}, {"device", "0"}, {"stream", "7"}};
  EXPECT_EQ(sample.labels, labels);
  EXPECT_EQ(stats.samples, 1u);
  EXPECT_EQ(stats.activities, 2u);

  // The kernel keeps its mangled name as the system name.
  const Profile::Location& leaf = p.locations.at(sample.locations[0]);
  EXPECT_EQ(p.functions.at(leaf.lines[0].function).system_name, "_Z4gemmPfi");
  EXPECT_EQ(leaf.mapping, 0u);
  // Native frames: the PC in the mapping of the module it lies in.
  const Profile::Location& launch = p.locations.at(sample.locations[2]);
  ASSERT_NE(launch.mapping, 0u);
  const Profile::Mapping& mapping = p.mappings.at(launch.mapping);
  EXPECT_EQ(mapping.file, "/opt/app/libapp.so");
  EXPECT_TRUE(mapping.start <= launch.address && launch.address < mapping.limit);
  EXPECT_EQ(launch.address, t.trace().stacks[s].pcs[0]);
  EXPECT_TRUE(mapping.has_functions && mapping.has_inline_frames);
}

TEST(PprofExport, InlinedFramesShareOneLocationInnermostFirst) {
  TestTrace t;
  t.Process(1, "app");
  const StackId s = t.Stack(1, {"main", "run"});
  // "run"'s PC also has "step" inlined into it (symbol frames: innermost first).
  for (SymbolRecord& symbol : t.trace().symbols) {
    if (symbol.pc == t.trace().stacks[s].pcs[0]) {
      symbol.frames.insert(symbol.frames.begin(),
                           SymbolFrame{t.Str("step"), t.Str("step.h"), 3, 0, 0});
    }
  }
  t.Link(1, 1, 1, s, "cudaLaunchKernel");
  t.Kernel(1, "k", 1, 0, 100);
  const Profile p = Read(Export(t.trace()));
  ASSERT_EQ(p.samples.size(), 1u);
  const std::vector<std::string> frames = {"[gpu] k", "cudaLaunchKernel", "step step.h:3",
                                           "run app.cc:10", "main app.cc:10"};
  EXPECT_EQ(p.samples[0].frames, frames);
  ASSERT_EQ(p.samples[0].locations.size(), 4u);  // step and run: one location
  EXPECT_EQ(p.locations.at(p.samples[0].locations[2]).lines.size(), 2u);
}

TEST(PprofExport, PythonFramesAreFunctionsWithFileAndLine) {
  TestTrace t;
  t.Process(1, "python3");
  const StackId s = t.Stack(1, {"__libc_start_main", "python3.11!_PyEval_EvalFrameDefault",
                                "python3.11!_PyObject_MakeTpCall", "launch_op"});
  t.PythonCode(1, 1, "Model.forward", "/src/model.py", 20);
  t.PythonCode(1, 2, "main", "/src/train.py", 4);
  t.AddPythonFrame(s, 1, 3, false);  // line 22
  t.AddPythonFrame(s, 2, 1, true);   // line 5
  t.Link(1, 1, 1, s, "cudaLaunchKernel");
  t.Kernel(1, "gemm", 1, 0, 100);
  const Profile p = Read(Export(t.trace()));
  ASSERT_EQ(p.samples.size(), 1u);
  const std::vector<std::string> frames = {"[gpu] gemm",           "cudaLaunchKernel",
                                           "launch_op app.cc:10",  "Model.forward /src/model.py:22",
                                           "main /src/train.py:5", "__libc_start_main app.cc:10"};
  EXPECT_EQ(p.samples[0].frames, frames);
  const Profile::Location& python = p.locations.at(p.samples[0].locations[3]);
  EXPECT_EQ(python.mapping, 0u);
  EXPECT_EQ(python.address, 0u);

  PprofOptions internals;
  internals.display.python_internals = true;
  const Profile all = Read(Export(t.trace(), internals));
  ASSERT_EQ(all.samples.size(), 1u);
  const std::vector<std::string> all_frames = {"[gpu] gemm",
                                               "cudaLaunchKernel",
                                               "launch_op app.cc:10",
                                               "_PyObject_MakeTpCall app.cc:10",
                                               "Model.forward /src/model.py:22",
                                               "main /src/train.py:5",
                                               "_PyEval_EvalFrameDefault app.cc:10",
                                               "__libc_start_main app.cc:10"};
  EXPECT_EQ(all.samples[0].frames, all_frames);
}

TEST(PprofExport, GraphLaunchCountsItsCallOnceAndUnlinkedWorkIsKept) {
  TestTrace t;
  t.Process(1, "app");
  const StackId s = t.Stack(1, {"main"});
  t.Link(1, 1, 9, s, "cudaGraphLaunch");
  t.trace().apis.push_back(
      {1, 1, ApiDomain::kRuntime, 311, t.Str("cudaGraphLaunch"), 0, 4000, 9, 0});
  t.Kernel(1, "a", 9, 100, 200).graph_id = 3;
  t.Kernel(1, "b", 9, 200, 400).graph_id = 3;
  t.Kernel(1, "lost", 77, 500, 560);  // no link: its launch is unknown
  t.Memcpy(1, MemcpyKind::kHtoD, 78, 600, 700);
  const Profile p = Read(Export(t.trace()));
  const Profile::Sample* a = p.Find("[gpu] a");
  const Profile::Sample* b = p.Find("[gpu] b");
  ASSERT_TRUE(a && b);
  EXPECT_EQ(a->frames, (std::vector<std::string>{"[gpu] a", "[graph 3]", "cudaGraphLaunch",
                                                 "main app.cc:10"}));
  EXPECT_EQ(a->values[2] + b->values[2], 4000) << "one call, counted once";
  const Profile::Sample* lost = p.Find("[gpu] lost");
  ASSERT_NE(lost, nullptr);
  EXPECT_EQ(lost->frames, (std::vector<std::string>{"[gpu] lost", "[unknown launch]"}));
  EXPECT_EQ(lost->labels.count("tid"), 0u);
  ASSERT_NE(p.Find("[gpu] memcpy HtoD"), nullptr);
  bool said = false;
  for (const std::string& c : p.comments) said |= c.find("2 of 4 GPU activities") == 0;
  EXPECT_TRUE(said) << "the unlinked work is counted in a comment";
}

TEST(PprofExport, TraceWithoutStacksStillGivesGpuAndLaunchTime) {
  // What `record --no-stacks` writes: API records and GPU work, no links, no stacks.
  TestTrace t;
  t.Process(1, "app");
  t.trace().apis.push_back(
      {1, 1, ApiDomain::kRuntime, 211, t.Str("cudaLaunchKernel"), 0, 900, 4, 0});
  t.Kernel(1, "k", 4, 1000, 1250);
  const Profile p = Read(Export(t.trace()));
  ASSERT_EQ(p.samples.size(), 1u);
  EXPECT_EQ(p.samples[0].frames, (std::vector<std::string>{"[gpu] k", "[unknown launch]"}));
  EXPECT_EQ(p.samples[0].values, (std::vector<int64_t>{250, 1, 900}));
}

TEST(PprofExport, TotalsMatchTheTraceAndOutputIsDeterministic) {
  const Trace trace = testing::ModelTrace();
  const std::string bytes = Export(trace);
  EXPECT_EQ(bytes, Export(trace));
  const Profile p = Read(bytes);
  int64_t gpu_ns = 0, launches = 0;
  for (const Profile::Sample& s : p.samples) {
    gpu_ns += s.values[0];
    launches += s.values[1];
  }
  int64_t want_ns = 0;
  for (const KernelRecord& k : trace.kernels) want_ns += k.end_ns - k.start_ns;
  for (const MemcpyRecord& m : trace.memcpys) want_ns += m.end_ns - m.start_ns;
  for (const MemsetRecord& m : trace.memsets) want_ns += m.end_ns - m.start_ns;
  EXPECT_EQ(gpu_ns, want_ns);
  EXPECT_EQ(launches, static_cast<int64_t>(trace.kernels.size() + trace.memcpys.size() +
                                           trace.memsets.size()));
  // Every module is a mapping, with its path and range.
  EXPECT_EQ(p.mappings.size(), trace.modules.size());
}

TEST(PprofExport, StreamsAFileAsItExportsATraceInMemory) {
  const Trace trace = testing::ModelTrace();
  testing::TempDir dir;
  testing::WriteTraceFile(trace, dir.File("model.gpt"));
  ReadReport report;
  Result<LaunchProfile> profile = BuildLaunchProfile(dir.File("model.gpt"), &report);
  ASSERT_TRUE(profile.ok()) << profile.status().message();
  std::ostringstream out;
  ASSERT_TRUE(WritePprof(*profile, {}, out).ok());
  EXPECT_EQ(out.str(), Export(trace));
  EXPECT_FALSE(BuildLaunchProfile(dir.File("missing.gpt")).ok());
}

}  // namespace
}  // namespace gpuperf
