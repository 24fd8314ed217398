// CPU time (`record --cpu/--off-cpu`): per thread, how long it ran, blocked and waited for
// the GPU; the functions with the most on-CPU time; the places threads blocked longest.
#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <unordered_map>

#include "analyze/join/cpu_time.h"
#include "analyze/report/report_builder.h"
#include "base/demangle.h"
#include "format/enum_names.h"

namespace gpuperf::report {
namespace {

std::string FunctionName(const Frame& f) {
  return f.kind == FrameKind::kPython ? FrameWithLocation(f) : ShortName(f.function);
}

// The C library's system call wrappers (and the vDSO) block on behalf of their caller: a
// blocking site is told by the first frame above them.
bool IsSystemWrapper(const Frame& f) {
  std::string_view m = f.module;
  if (const size_t slash = m.rfind('/'); slash != std::string_view::npos)
    m.remove_prefix(slash + 1);
  return m.starts_with("libc.so") || m.starts_with("libc-") || m.starts_with("libpthread") ||
         m.starts_with("ld-linux") || m == "[vdso]";
}

class CpuSection final : public ReportSection {
 public:
  explicit CpuSection(ReportContext& context) : context_(context), collector_(context.strings()) {}

  void OnApiCalls(std::span<const ApiRecord> records) override { collector_.AddApis(records); }
  void OnSyncs(std::span<const SyncRecord> records) override { collector_.AddSyncs(records); }
  void OnCpuSamples(std::span<const CpuSampleRecord> records) override {
    collector_.AddSamples(records);
  }
  void OnOffCpu(std::span<const OffCpuRecord> records) override { collector_.AddOffCpu(records); }

  void Finish(ReportModel& model) override {
    if (collector_.empty()) return;
    CpuReport& cpu = model.cpu;
    std::map<std::pair<uint32_t, uint32_t>, CpuThreadRow> threads;
    std::map<std::pair<uint32_t, uint32_t>, std::map<std::string, uint64_t>> thread_self;
    std::unordered_map<std::string, CpuFunctionRow> functions;
    std::map<std::tuple<uint32_t, uint32_t, std::string, std::vector<std::string>>, CpuBlockRow>
        blocked;
    std::set<std::string> seen;
    std::vector<Frame> frames;
    for (const CpuTimeEntry& e : collector_.Finish()) {
      frames.clear();
      context_.ResolveStack(e.stack, e.tid, frames);
      bool gpu_wait = e.gpu_wait;
      seen.clear();
      std::vector<std::string> user;  // innermost first, from the caller of libc on
      for (size_t i = frames.size(); i-- > 0;) {
        const std::string name = FunctionName(frames[i]);
        gpu_wait = gpu_wait || IsGpuSyncFunction(name);
        const bool wrapper = user.empty() && IsSystemWrapper(frames[i]);
        if (!IsKernelFrame(frames[i]) && !wrapper &&
            user.size() < context_.options().stack_frames) {
          user.push_back(FrameWithLocation(frames[i]));
        }
        if (!seen.insert(name).second) continue;  // recursion counts once
        CpuFunctionRow& f = functions[name];
        (e.kind == CpuTimeKind::kOnCpu ? f.on_cpu_ns : f.off_cpu_ns) += e.ns;
      }
      CpuThreadRow& t = threads[{e.pid, e.tid}];
      if (gpu_wait) t.gpu_wait_ns += e.ns;
      if (e.kind == CpuTimeKind::kOnCpu) {
        cpu.on_cpu_ns += e.ns;
        cpu.samples += e.count;
        t.on_cpu_ns += e.ns;
        if (gpu_wait) cpu.gpu_spin_ns += e.ns;
        if (!frames.empty()) {
          const std::string self = FunctionName(frames.back());
          functions[self].self_ns += e.ns;
          thread_self[{e.pid, e.tid}][self] += e.ns;
        }
        continue;
      }
      cpu.off_cpu_ns += e.ns;
      cpu.intervals += e.count;
      t.off_cpu_ns += e.ns;
      if (e.reason == OffCpuReason::kPreempted) t.preempted_ns += e.ns;
      if (gpu_wait) cpu.gpu_wait_ns += e.ns;
      const std::string reason = gpu_wait ? "GPU sync" : std::string(EnumName(e.reason));
      CpuBlockRow& b = blocked[{e.pid, e.tid, reason, user}];
      b.off_cpu_ns += e.ns;
      b.intervals += e.count;
    }
    for (auto& [key, row] : threads) {
      row.pid = key.first;
      row.tid = key.second;
      row.name = context_.ThreadName(key.first, key.second);
      const auto& self = thread_self[key];
      auto top = std::max_element(self.begin(), self.end(),
                                  [](const auto& a, const auto& b) { return a.second < b.second; });
      if (top != self.end()) row.top_function = top->first;
      cpu.threads.push_back(std::move(row));
    }
    std::stable_sort(cpu.threads.begin(), cpu.threads.end(),
                     [](const CpuThreadRow& a, const CpuThreadRow& b) {
                       return a.on_cpu_ns + a.off_cpu_ns > b.on_cpu_ns + b.off_cpu_ns;
                     });
    for (auto& [name, row] : functions) {
      if (row.on_cpu_ns == 0) continue;  // blocked only: the blocking sites list them
      row.function = name;
      cpu.functions.push_back(std::move(row));
    }
    std::sort(cpu.functions.begin(), cpu.functions.end(),
              [](const CpuFunctionRow& a, const CpuFunctionRow& b) {
                return std::tie(b.self_ns, b.on_cpu_ns, a.function) <
                       std::tie(a.self_ns, a.on_cpu_ns, b.function);
              });
    for (auto& [key, row] : blocked) {
      row.pid = std::get<0>(key);
      row.tid = std::get<1>(key);
      row.reason = std::get<2>(key);
      row.stack = std::get<3>(key);
      cpu.blocked.push_back(std::move(row));
    }
    std::stable_sort(
        cpu.blocked.begin(), cpu.blocked.end(),
        [](const CpuBlockRow& a, const CpuBlockRow& b) { return a.off_cpu_ns > b.off_cpu_ns; });
  }

 private:
  ReportContext& context_;
  CpuTimeCollector collector_;
};

}  // namespace

std::unique_ptr<ReportSection> MakeCpuSection(ReportContext& context) {
  return std::make_unique<CpuSection>(context);
}

}  // namespace gpuperf::report
