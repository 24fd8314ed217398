#include "analyze/flame/flamegraph_names.h"

#include "analyze/join/cpu_time.h"
#include "analyze/ranks/rank_scan.h"
#include "base/text_escape.h"
#include "format/enum_names.h"

namespace gpuperf::flame {
namespace {

std::string Abbreviate(std::string_view text, size_t max_chars) {
  if (text.size() <= max_chars) return std::string(text);
  // Not inside a UTF-8 character: back off its continuation bytes (10xxxxxx).
  while (max_chars > 0 && (static_cast<unsigned char>(text[max_chars]) & 0xC0) == 0x80) {
    --max_chars;
  }
  return std::string(text.substr(0, max_chars)) + "...";
}

}  // namespace

std::string Sanitize(std::string_view name) {
  std::string out = DisplayText(name);
  for (char& c : out) {
    if (c == ';') c = ':';
  }
  return out;
}

uint32_t GraphResolver::Intern(std::string name, FlameFrameKind kind) {
  name = Sanitize(name);
  auto key = std::make_pair(name, kind);
  auto it = index_.find(key);
  if (it != index_.end()) return it->second;
  const auto id = static_cast<uint32_t>(graph_.frames.size());
  graph_.frames.push_back({name, kind});
  index_.emplace(std::move(key), id);
  return id;
}

const GraphResolver::Resolved& GraphResolver::Resolve(StackId stack_id, uint32_t tid) {
  const uint64_t key = uint64_t{stack_id} << 32 | tid;
  auto it = cpu_frames_.find(key);
  if (it != cpu_frames_.end()) return it->second;
  Resolved& resolved = cpu_frames_[key];
  frames_.clear();
  if (stack_id < names_.stacks.size())
    names_.symbols.ResolveStack(names_.stacks[stack_id], frames_, tid);
  for (const Frame& f : frames_) {
    switch (f.kind) {
      case FrameKind::kNative: {
        std::string name = options_.full_names ? std::string(f.function) : ShortName(f.function);
        resolved.gpu_wait = resolved.gpu_wait || IsGpuSyncFunction(name);
        resolved.frames.push_back(Intern(std::move(name), IsKernelFrame(f)
                                                              ? FlameFrameKind::kKernelCode
                                                              : FlameFrameKind::kCpu));
        break;
      }
      case FrameKind::kPython:  // qualified names are short already
        resolved.frames.push_back(Intern(FrameWithLocation(f), FlameFrameKind::kPython));
        break;
      case FrameKind::kLabel:
        resolved.frames.push_back(Intern(std::string(f.function), FlameFrameKind::kContext));
        break;
    }
  }
  return resolved;
}

const std::vector<uint32_t>& GraphResolver::CpuFrames(StackId stack_id, uint32_t tid) {
  return Resolve(stack_id, tid).frames;
}

bool GraphResolver::NamesGpuWait(StackId stack_id, uint32_t tid) {
  return Resolve(stack_id, tid).gpu_wait;
}

uint32_t GraphResolver::GpuFrame(GpuActivityKind activity, uint32_t name_id, uint32_t device,
                                 std::string* bare) {
  std::string name;
  FlameFrameKind kind = FlameFrameKind::kKernel;
  switch (activity) {
    case GpuActivityKind::kKernel: {
      std::string_view mangled = names_.Str(name_id);
      if (mangled.empty()) {
        name = "[unnamed kernel]";
      } else if (!options_.demangle) {
        name = std::string(mangled);
      } else {
        const std::string& demangled = demangle_.Get(mangled);
        name = options_.full_names ? demangled : ShortName(demangled);
      }
      break;
    }
    case GpuActivityKind::kMemcpy:
      name = "memcpy " + std::string(EnumName(static_cast<MemcpyKind>(name_id)));
      kind = FlameFrameKind::kMemcpy;
      break;
    case GpuActivityKind::kMemset:
      name = "memset";
      kind = FlameFrameKind::kMemset;
      break;
  }
  *bare = Sanitize(name);
  return Intern("[GPU" + std::to_string(device) + "] " + name, kind);
}

std::string GraphResolver::ProcessLabel(uint32_t pid) const {
  for (const ProcessRecord& p : names_.processes) {
    if (p.pid == pid && p.command != 0) {
      return "[pid " + std::to_string(pid) + "] " + Abbreviate(names_.Str(p.command), 60);
    }
  }
  return "[pid " + std::to_string(pid) + "]";
}

std::string GraphResolver::RankLabel(uint32_t pid) const {
  ProcessIdentity identity;
  identity.pid = pid;
  for (const RankRecord& r : names_.ranks) {
    if (r.pid == pid) identity.rank = r.rank;
  }
  for (const ProcessRecord& p : names_.processes) {
    if (p.pid == pid) identity.hostname = std::string(names_.Str(p.hostname));
  }
  auto it = devices_of_pid_.find(pid);
  if (it != devices_of_pid_.end()) identity.devices.assign(it->second.begin(), it->second.end());
  return "[" + identity.Label() + "]";
}

std::string GraphResolver::ThreadLabel(uint32_t pid, uint32_t tid, bool known) const {
  if (!known) return "[thread unknown]";
  for (const ThreadRecord& t : names_.threads) {
    if (t.pid == pid && t.tid == tid && t.name != 0) {
      return "[thread " + std::to_string(tid) + " " + std::string(names_.Str(t.name)) + "]";
    }
  }
  return "[thread " + std::to_string(tid) + "]";
}

FlameStack& PathIndex::At(const std::vector<uint32_t>& path, FlameGraph& graph) {
  auto [it, inserted] = index_.emplace(path, graph.stacks.size());
  if (inserted) {
    FlameStack stack;
    stack.frames = path;
    graph.stacks.push_back(std::move(stack));
  }
  return graph.stacks[it->second];
}

}  // namespace gpuperf::flame
