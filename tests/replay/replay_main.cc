// gpuperf_replay: feeds raw CUPTI activity buffers saved on a GPU machine
// (`gpuperf record --save-buffers`) through the injection library's translator and
// writes a trace, so CI checks the translation of real CUDA 13 records without a GPU.
// Links the real libcupti: cuptiActivityGetNextRecord needs no driver.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <unordered_map>
#include <vector>

#include "gpuperf/trace_writer.h"
#include "inject/cupti/translate.h"
#include "inject/name_table.h"
#include "inject/stats.h"

namespace gpuperf::inject {
std::atomic<uint64_t> g_stats[kStatSlots];
}

namespace {

// "<pointer>\t<text>" lines written beside each buffer.
std::unordered_map<uintptr_t, std::string> ReadNames(const std::string& path) {
  std::unordered_map<uintptr_t, std::string> names;
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    size_t tab = line.find('\t');
    if (tab == std::string::npos) continue;
    names[std::strtoull(line.substr(0, tab).c_str(), nullptr, 16)] = line.substr(tab + 1);
  }
  return names;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace gpuperf;
  if (argc < 3) {
    std::fprintf(stderr, "usage: gpuperf_replay OUT.gpt BUFFER.bin... (PID taken from names)\n");
    return 2;
  }
  auto writer = TraceWriter::Create(argv[1]);
  if (!writer.ok()) {
    std::fprintf(stderr, "gpuperf_replay: %s\n", writer.status().message().c_str());
    return 1;
  }
  inject::NameTable names;
  const uint32_t pid = 1000;  // fixed, so the output does not depend on the recording
  std::unordered_map<uintptr_t, std::string> current_names;
  inject::Translator translator(pid, names, [&current_names](const char* p) -> const char* {
    auto it = current_names.find(reinterpret_cast<uintptr_t>(p));
    return it == current_names.end() ? nullptr : it->second.c_str();
  });
  for (int i = 2; i < argc; ++i) {
    const std::string path = argv[i];
    std::ifstream in(path, std::ios::binary);
    std::stringstream bytes;
    bytes << in.rdbuf();
    const std::string data = bytes.str();
    if (!in || data.empty()) {
      std::fprintf(stderr, "gpuperf_replay: cannot read %s\n", path.c_str());
      return 1;
    }
    // CUPTI records need 8-byte alignment.
    std::vector<uint64_t> aligned((data.size() + 7) / 8);
    std::memcpy(aligned.data(), data.data(), data.size());
    current_names = ReadNames(path.substr(0, path.size() - 4) + ".names");
    inject::RecordBatch batch;
    inject::TranslateCounts counts =
        translator.TranslateBuffer(reinterpret_cast<uint8_t*>(aligned.data()), data.size(), batch);
    std::vector<std::pair<StringId, std::string>> strings;
    names.DrainNew(strings);
    for (const auto& [id, text] : strings) (*writer)->AddString(id, text);
#define GPUPERF_REPLAY_WRITE(Type, name, plural, number) \
  for (const auto& record : batch.plural) (*writer)->Add(record);
    GPUPERF_FIXED_RECORD_TYPES(GPUPERF_REPLAY_WRITE)
#undef GPUPERF_REPLAY_WRITE
    std::printf("%s: %llu records, %llu incomplete, %llu untranslated\n", path.c_str(),
                static_cast<unsigned long long>(counts.records),
                static_cast<unsigned long long>(counts.incomplete),
                static_cast<unsigned long long>(counts.untranslated));
  }
  Status status = (*writer)->Close();
  if (!status.ok()) {
    std::fprintf(stderr, "gpuperf_replay: %s\n", status.message().c_str());
    return 1;
  }
  return 0;
}
