#include "analyze/flame/flamegraph_pc_frames.h"

#include <algorithm>
#include <filesystem>
#include <map>
#include <unordered_map>

#include "base/demangle.h"

namespace gpuperf {
namespace {

// One (line, stall) share of a kernel's samples.
struct Part {
  std::string line;
  std::string stall;
  uint64_t samples = 0;
};

// The kernel frame's name without its "[GPUn] " prefix, as GpuFrame shows it.
std::string_view BareName(std::string_view frame) {
  if (frame.starts_with("[GPU")) {
    const size_t close = frame.find("] ");
    if (close != std::string_view::npos) frame.remove_prefix(close + 2);
  }
  return frame;
}

std::string DisplayName(const std::string& mangled, const FlameGraphOptions& options) {
  if (!options.demangle) return mangled;
  const std::string demangled = Demangle(mangled);
  return options.full_names ? demangled : ShortName(demangled);
}

std::vector<Part> Parts(const PcFunction& f) {
  std::vector<Part> parts;
  const std::vector<PcLineRow> lines = f.Lines();
  std::map<std::string, uint64_t> other;
  for (size_t i = 0; i < lines.size(); ++i) {
    const PcLineRow& row = lines[i];
    std::string label;
    if (i >= kPcFrameLines) {
      for (const auto& [stall, n] : row.stalls) other[stall] += n;
      continue;
    }
    if (row.line != 0) {
      label = std::filesystem::path(row.file).filename().string() + ":" + std::to_string(row.line);
    } else {
      char offset[32];
      std::snprintf(offset, sizeof(offset), "+0x%llx",
                    static_cast<unsigned long long>(row.pc_offset));
      label = offset;
    }
    for (const auto& [stall, n] : row.stalls)
      parts.push_back({"[line] " + label, "[stall] " + stall, n});
  }
  for (const auto& [stall, n] : other)
    parts.push_back({"[line] (other lines)", "[stall] " + stall, n});
  return parts;
}

// Splits `total` in proportion to `shares`, the parts adding up to it exactly (largest
// remainders get the rounding).
std::vector<uint64_t> Split(uint64_t total, const std::vector<Part>& parts, uint64_t samples) {
  std::vector<uint64_t> out(parts.size());
  std::vector<std::pair<double, size_t>> remainders;
  uint64_t given = 0;
  for (size_t i = 0; i < parts.size(); ++i) {
    const double exact = static_cast<double>(total) * parts[i].samples / samples;
    out[i] = static_cast<uint64_t>(exact);
    given += out[i];
    remainders.emplace_back(exact - out[i], i);
  }
  std::stable_sort(remainders.begin(), remainders.end(),
                   [](const auto& a, const auto& b) { return a.first > b.first; });
  for (size_t i = 0; given < total && i < remainders.size(); ++i, ++given)
    ++out[remainders[i].second];
  return out;
}

}  // namespace

size_t AddPcFrames(FlameGraph& graph, const PcProfile& profile, const FlameGraphOptions& options) {
  // The parts of each kernel, by the name its frames show.
  std::unordered_map<std::string, std::vector<Part>> parts_by_name;
  std::unordered_map<std::string, uint64_t> samples_by_name;
  for (const PcFunction& f : profile.functions) {
    const std::string name = DisplayName(f.name, options);
    std::vector<Part>& parts = parts_by_name[name];
    for (Part& p : Parts(f)) parts.push_back(std::move(p));
    samples_by_name[name] += f.samples;
  }
  std::map<std::pair<std::string, FlameFrameKind>, uint32_t> index;
  for (uint32_t i = 0; i < graph.frames.size(); ++i)
    index[{graph.frames[i].name, graph.frames[i].kind}] = i;
  auto intern = [&](const std::string& name, FlameFrameKind kind) {
    auto [it, inserted] =
        index.try_emplace({name, kind}, static_cast<uint32_t>(graph.frames.size()));
    if (inserted) graph.frames.push_back({name, kind});
    return it->second;
  };

  size_t extended = 0;
  std::vector<FlameStack> stacks;
  for (FlameStack& stack : graph.stacks) {
    const uint32_t kernel_frame = graph.inverted ? stack.frames.front() : stack.frames.back();
    const FlameFrame& frame = graph.frames[kernel_frame];
    auto parts = parts_by_name.find(std::string(BareName(frame.name)));
    if (frame.kind != FlameFrameKind::kKernel || parts == parts_by_name.end()) {
      stacks.push_back(std::move(stack));
      continue;
    }
    ++extended;
    const uint64_t samples = samples_by_name[parts->first];
    const std::vector<uint64_t> ns = Split(stack.gpu_ns, parts->second, samples);
    const std::vector<uint64_t> counts = Split(stack.count, parts->second, samples);
    for (size_t i = 0; i < parts->second.size(); ++i) {
      if (ns[i] == 0 && counts[i] == 0) continue;
      FlameStack part{stack.frames, ns[i], counts[i]};
      const uint32_t line = intern(parts->second[i].line, FlameFrameKind::kSourceLine);
      const uint32_t stall = intern(parts->second[i].stall, FlameFrameKind::kStall);
      if (graph.inverted) {
        part.frames.insert(part.frames.begin(), {stall, line});
      } else {
        part.frames.push_back(line);
        part.frames.push_back(stall);
      }
      stacks.push_back(std::move(part));
    }
  }
  const auto& frames = graph.frames;
  std::sort(stacks.begin(), stacks.end(), [&frames](const FlameStack& a, const FlameStack& b) {
    return std::lexicographical_compare(a.frames.begin(), a.frames.end(), b.frames.begin(),
                                        b.frames.end(), [&frames](uint32_t x, uint32_t y) {
                                          if (frames[x].name != frames[y].name)
                                            return frames[x].name < frames[y].name;
                                          return frames[x].kind < frames[y].kind;
                                        });
  });
  graph.stacks = std::move(stacks);
  return extended;
}

}  // namespace gpuperf
