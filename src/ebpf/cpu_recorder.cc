#include "ebpf/cpu_recorder.h"

#include <dirent.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <iterator>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "cpython/python_code_record.h"
#include "ebpf/kernel_symbols.h"
#include "ebpf/leaf_frames.h"
#include "ebpf/proc_maps.h"
#include "ebpf/python_target.h"
#include "ebpf/sample_unwinder.h"
#include "gpuperf/kernel_frame_word.h"
#include "gpuperf/python_frame_word.h"
#include "gpuperf/stats.h"

namespace gpuperf::ebpf {
namespace {

constexpr uint64_t kMapsRefreshNs = 100'000'000;  // a process's maps at most every 100 ms
// ... and, after reads that found nothing new, at most every 200 ms, 400 ms, ... up to 5 s.
constexpr uint64_t kMapsRefreshMaxNs = 5'000'000'000;
// After an exec the maps hold the program and the dynamic loader only; its libraries
// (libpython) follow within milliseconds, so they are read again at the next drain.
constexpr uint64_t kMapsAfterExecNs = 10'000'000;
// A frame-pointer walk ends on a zero return address, or wanders into small integers
// through code without frame pointers: no code lives in the first page.
constexpr bool MayBeCode(uint64_t pc) {
  return pc >= 4096;
}

std::string ReadFirstLine(const std::string& path) {
  std::string text = ReadSmallFile(path);
  text.resize(std::min(text.size(), text.find('\n')));
  return text;
}

// argv joined by spaces, as the injection library records it.
std::string CommandLine(uint32_t pid) {
  std::string raw = ReadSmallFile("/proc/" + std::to_string(pid) + "/cmdline");
  while (!raw.empty() && raw.back() == '\0') raw.pop_back();
  std::replace(raw.begin(), raw.end(), '\0', ' ');
  return raw;
}

uint32_t ParentPid(uint32_t pid) {
  // "pid (comm) state ppid ...": comm may hold spaces and parentheses; the last ')' ends it.
  const std::string stat = ReadFirstLine("/proc/" + std::to_string(pid) + "/stat");
  const size_t close = stat.rfind(')');
  if (close == std::string::npos) return 0;
  std::istringstream rest(stat.substr(close + 1));
  std::string state;
  uint32_t ppid = 0;
  rest >> state >> ppid;
  return ppid;
}

std::string HostName() {
  char host[256] = {};
  gethostname(host, sizeof(host) - 1);
  return host;
}

// Pids that have a GPU trace of their own in `dir` (files NAME.PID.gpt).
std::set<uint32_t> PidsWithTraces(const std::string& dir, const std::string& own_file) {
  std::set<uint32_t> pids;
  DIR* listing = opendir(dir.c_str());
  if (listing == nullptr) return pids;
  while (dirent* entry = readdir(listing)) {
    std::string name = entry->d_name;
    if (name.size() < 5 || name.substr(name.size() - 4) != ".gpt" || name == own_file) continue;
    name.resize(name.size() - 4);
    const size_t dot = name.rfind('.');
    if (dot == std::string::npos) continue;
    try {
      pids.insert(static_cast<uint32_t>(std::stoul(name.substr(dot + 1))));
    } catch (...) {
    }
  }
  closedir(listing);
  return pids;
}

// The tracing machinery's own frames at the top of a kernel stack taken in a tracepoint
// (the BPF program, the tracepoint's dispatch): not the thread's.
bool IsTracingFrame(std::string_view name) {
  return name.starts_with("bpf_") || name.starts_with("__bpf_") ||
         name.starts_with("__traceiter_") || name.starts_with("trace_call_bpf");
}

}  // namespace

// A process whose samples carry Python frames: its interpreter and the code objects named
// so far, by address and key (gp_py_frame), with their code ids.
struct PythonProcess {
  PythonTarget target;
  std::map<std::pair<uint64_t, uint64_t>, uint32_t> codes;
  uint32_t next_code_id = kCpuPythonCodeIdBase;
};

struct CpuRecorder::State {
  CpuRecorderOptions options;
  PythonTargetSink python_targets;
  uint64_t python_samples = 0;
  uint64_t python_off_cpu_stacks = 0;  // off-CPU stacks with Python frames
  uint64_t python_frames_lost = 0;
  uint64_t python_refused = 0;
  // User stacks from the stack copies (sample_unwinder.h): samples walked to the end, those
  // cut at the copy's end (kept too), those left with the frame-pointer stack, and the time.
  SampleUnwinder unwinder;
  uint64_t table_unwound = 0;
  uint64_t table_end_of_copy = 0;
  uint64_t table_fallbacks = 0;
  uint64_t unwind_ns = 0;
  uint64_t unwind_pcs[GP_MAX_STACK_DEPTH];
  std::unordered_set<uint32_t> refusals_said;
  std::vector<uint64_t> python_words;
  std::unique_ptr<TraceWriter> writer;
  std::map<std::string, ElfLayout> elf_cache;
  // Read once the profiler's programs are loaded (LoadKernelSymbols, else at the first
  // kernel frame): they are in kallsyms then, and their own frames (the top of stacks taken
  // in tracepoints) are left out.
  std::optional<KernelSymbols> kernel_symbols;
  MissedFrames missed{[this](uint32_t pid, uint64_t pc) {
    auto it = processes.find(pid);
    return it != processes.end() && Mapped(it->second, pc);
  }};

  struct Process {
    std::string command;
    uint32_t parent = 0;
    uint64_t first_ns = 0;
    uint64_t last_ns = 0;
    uint64_t maps_read_ns = 0;
    uint64_t maps_refresh_ns = kMapsRefreshNs;           // the least time between two reads now
    std::vector<std::pair<uint64_t, uint64_t>> ranges;   // mapped [start, end), sorted
    std::set<std::pair<std::string, uint64_t>> modules;  // (path, start) already written
    // Pages of user PCs still in no file after the maps were read again for them (code
    // made at run time): they trigger no further reads.
    std::unordered_set<uint64_t> unmapped_pages;
    // A PC fell outside the maps while a read was not yet allowed: ReadDueMaps reads them
    // when it is. Without this, a library loaded just after exec (libpython, before any
    // Python runs) stayed unknown whenever no later new stack came: off-CPU stacks are sent
    // once and then reused, so a process that blocks at a few places sends few.
    bool maps_read_due = false;
    // Its CPython interpreter, once found (python_target.h).
    std::unique_ptr<PythonProcess> python;
    bool python_refused = false;
  };
  std::unordered_map<uint32_t, Process> processes;
  std::set<std::pair<uint32_t, uint32_t>> threads;       // (pid, tid) named
  std::unordered_map<std::string, StackId> stack_ids;    // (pid, pcs) as bytes
  std::unordered_map<uint64_t, StackId> bpf_stacks;      // the programs' stack ids
  std::set<std::pair<uint32_t, uint64_t>> kernel_words;  // to name at the end
  uint64_t unmapped_pcs = 0;
  std::vector<uint64_t> pcs;
  std::string key;

  // Returns how many modules it found that were not known.
  size_t ReadMaps(uint32_t pid, Process& p, uint64_t now) {
    p.maps_read_ns = now;
    size_t added = 0;
    bool interpreter = false;
    const std::vector<MappedModule> modules = ReadProcessModules(pid, elf_cache);
    for (const MappedModule& m : modules) {
      if (!p.modules.emplace(m.path, m.start).second) continue;
      uint32_t major = 0, minor = 0;
      interpreter |= IsPythonInterpreterFile(m.path, &major, &minor);
      ModuleRecord record;
      record.pid = pid;
      record.path = writer->InternString(m.path);
      record.build_id = writer->InternString(m.build_id);
      record.load_bias = m.load_bias;
      record.start = m.start;
      record.end = m.end;
      writer->Add(record);
      unwinder.AddModule(pid, m);
      p.ranges.emplace_back(m.start, m.end);
      ++added;
    }
    std::sort(p.ranges.begin(), p.ranges.end());
    if (interpreter && !p.python && !p.python_refused) FindPython(pid, p, modules);
    return added;
  }

  // Hands the process's interpreter to the BPF program, or says once why it cannot.
  void FindPython(uint32_t pid, Process& p, const std::vector<MappedModule>& modules) {
    if (!python_targets) return;
    PythonTarget target = FindPythonTarget(pid, modules);
    if (target.state == PythonTargetState::kRefused) {
      p.python_refused = true;
      // Once per process, though it is looked at again after an exec.
      if (!refusals_said.insert(pid).second) return;
      ++python_refused;
      std::fprintf(stderr, "gpuperf: note: pid %u: %s; its CPU samples have no Python frames\n",
                   pid, target.why.c_str());
      return;
    }
    if (target.state != PythonTargetState::kReady) return;
    p.python = std::make_unique<PythonProcess>();
    p.python->target = std::move(target);
    python_targets(pid, &p.python->target.bpf);
  }

  void ForgetPython(uint32_t pid, Process& p) {
    if (p.python && python_targets) python_targets(pid, nullptr);
    p.python.reset();
    p.python_refused = false;
  }

  // The id of the code object a frame ran, named (a PythonCodeRecord) the first time. 0
  // when it cannot be read, or its address holds another code object by now.
  uint32_t PythonCodeId(uint32_t pid, PythonProcess& py, const gp_py_frame& frame) {
    auto [it, added] = py.codes.try_emplace({frame.code, frame.key}, 0);
    if (!added) return it->second;
    PyCodeInfo info;
    if (!ReadRemoteCode(pid, py.target, frame.code, frame.key, &info) ||
        py.next_code_id >= kMaxPythonCodeId) {
      py.codes.erase(it);  // perhaps readable next time (a short read)
      return 0;
    }
    const uint32_t id = ++py.next_code_id;
    writer->AddPythonCode(MakePythonCodeRecord(
        pid, id, std::move(info),
        [this](const std::string& text) { return writer->InternString(text); }));
    it->second = id;
    return id;
  }

  // An event's Python frames as stack words (gpuperf/python_frame_word.h), innermost
  // first, in python_words. Returns whether it has any.
  bool PythonWords(uint32_t pid, Process& p, const gp_py_stack& py) {
    python_words.clear();
    const size_t n = std::min<size_t>(py.depth, GP_MAX_PY_FRAMES);
    if (!p.python || py.status == GP_PY_NONE || py.status == GP_PY_NO_THREAD || n == 0) {
      return false;
    }
    bool lost = py.status == GP_PY_FAILED;
    for (size_t i = 0; i < n; ++i) {
      const gp_py_frame& f = py.frames[i];
      const uint32_t id = PythonCodeId(pid, *p.python, f);
      lost |= id == 0;
      python_words.push_back(
          MakePythonFrameWord(id, f.instr_offset, (f.flags & GP_PY_ENTRY) != 0,
                              (f.flags & GP_PY_OWNER_MASK) == GP_PY_GENERATOR_OWNER));
    }
    python_frames_lost += lost;
    return true;
  }

  static bool Mapped(const Process& p, uint64_t pc) {
    const std::pair<uint64_t, uint64_t> probe(pc, UINT64_MAX);
    auto after = std::upper_bound(p.ranges.begin(), p.ranges.end(), probe);
    return after != p.ranges.begin() && pc < (after - 1)->second;
  }

  Process& See(uint32_t pid, uint32_t tid, uint64_t now) {
    auto [it, added] = processes.try_emplace(pid);
    Process& p = it->second;
    if (added) {
      p.command = CommandLine(pid);
      p.parent = ParentPid(pid);
      p.first_ns = now;
      ReadMaps(pid, p, now);
    }
    p.last_ns = std::max(p.last_ns, now);
    if (threads.emplace(pid, tid).second) {
      const std::string name =
          ReadFirstLine("/proc/" + std::to_string(pid) + "/task/" + std::to_string(tid) + "/comm");
      if (!name.empty()) writer->Add(ThreadRecord{pid, tid, writer->InternString(name)});
    }
    return p;
  }

  // Interns kernel + user PCs of one process as a stack; new stacks get their user PCs
  // checked against the process's modules (a dlopen since the last read: read again).
  // Python frames (`python`, stack words) go after the user PCs, as in launch stacks.
  // `unwound`, when not empty, is the user stack from the .eh_frame walk, used instead of
  // the frame-pointer one.
  StackId Intern(uint32_t pid, Process& p, const gp_event_stacks& s, uint64_t now,
                 std::span<const uint64_t> python = {}, std::span<const uint64_t> unwound = {}) {
    const uint16_t kernel_depth = std::min<uint16_t>(s.kernel_depth, GP_MAX_STACK_DEPTH);
    const uint16_t user_depth = std::min<uint16_t>(s.user_depth, GP_MAX_STACK_DEPTH);
    if (kernel_depth + user_depth + python.size() == 0) return 0;
    if (kernel_depth > 0 && !kernel_symbols) kernel_symbols = KernelSymbols::Load();
    uint16_t kernel_from = 0;
    while (kernel_from < kernel_depth &&
           IsTracingFrame(kernel_symbols->Find(s.kernel_pcs[kernel_from]).function)) {
      ++kernel_from;
    }
    pcs.clear();
    for (uint16_t i = kernel_from; i < kernel_depth; ++i) {
      pcs.push_back(MakeKernelFrameWord(s.kernel_pcs[i]));
    }
    const std::span<const uint64_t> walked =
        unwound.empty() ? std::span<const uint64_t>(s.user_pcs, user_depth) : unwound;
    RefreshIfUnmapped(pid, p, walked, now);
    if (unwound.empty()) {
      const std::vector<uint64_t> user = missed.Complete(
          pid, walked, {s.user_top, std::min<size_t>(s.top_words, GP_STACK_TOP_WORDS)});
      std::copy_if(user.begin(), user.end(), std::back_inserter(pcs), MayBeCode);
    } else {
      std::copy_if(unwound.begin(), unwound.end(), std::back_inserter(pcs), MayBeCode);
    }
    pcs.insert(pcs.end(), python.begin(), python.end());
    key.assign(reinterpret_cast<const char*>(&pid), sizeof(pid));
    key.append(reinterpret_cast<const char*>(pcs.data()), pcs.size() * sizeof(uint64_t));
    auto [it, added] = stack_ids.try_emplace(key, 0);
    if (!added) return it->second;
    it->second = static_cast<StackId>(stack_ids.size());
    writer->AddStack(StackRecord{pid, it->second, pcs});
    for (uint64_t pc : pcs) {
      if (IsKernelFrameWord(pc)) kernel_words.emplace(pid, pc);
    }
    for (uint64_t pc : walked) unmapped_pcs += MayBeCode(pc) && !Mapped(p, pc);
    return it->second;
  }

  // Reads the process's maps again when a PC is in none of them (a dlopen since), at most
  // every kMapsRefreshNs, and less often while the reads find nothing new.
  //
  // A PC in code made at run time stays unmapped whatever is read: without remembering it,
  // every new stack through it read the maps again, up to every 100 ms for the whole run.
  // Remembering pages is not enough where frame-pointer walks stray through libraries
  // without frame pointers (libtorch): their "PCs" are heap and stack words, new pages all
  // the time, so PyTorch's ~2,000-line maps were read 10 times a second for nothing; hence
  // the back-off.
  //
  // `sooner` divides the wait: a return address an .eh_frame walk found is code, not a
  // stray word, so a library loaded since is worth looking for sooner (a process is often
  // first seen while the loader maps its libraries; 100 ms of samples would then keep
  // their frame-pointer stacks).
  void RefreshIfUnmapped(uint32_t pid, Process& p, std::span<const uint64_t> pcs, uint64_t now,
                         uint64_t sooner = 1) {
    for (uint64_t pc : pcs) {
      if (!MayBeCode(pc) || Mapped(p, pc) || p.unmapped_pages.contains(pc >> 12)) continue;
      if (now - p.maps_read_ns < p.maps_refresh_ns / sooner) {
        p.maps_read_due = true;
        return;
      }
      ReadMapsAgain(pid, p, now);
      for (uint64_t again : pcs) {
        if (!Mapped(p, again)) p.unmapped_pages.insert(again >> 12);
      }
      return;
    }
  }

  // Reads a process's maps again, backing off while the reads find nothing new (from the
  // usual pace: the short wait after an exec is for one read, not where doubling starts).
  void ReadMapsAgain(uint32_t pid, Process& p, uint64_t now) {
    const size_t added = ReadMaps(pid, p, now);
    const uint64_t after_nothing =
        std::min(2 * std::max(p.maps_refresh_ns, kMapsRefreshNs), kMapsRefreshMaxNs);
    p.maps_refresh_ns = added > 0 ? kMapsRefreshNs : after_nothing;
    p.maps_read_due = false;
  }

  // The sample's user stack from its stack copy, or empty when there is none or its walk
  // stopped before the end (the frame-pointer stack stays then).
  std::span<const uint64_t> UnwindCopy(uint32_t pid, Process& p, const gp_user_stack_copy& copy,
                                       uint64_t now) {
    if (copy.size == 0) return {};
    const auto began = std::chrono::steady_clock::now();
    TableWalkResult walk = unwinder.Unwind(pid, copy, unwind_pcs, GP_MAX_STACK_DEPTH);
    if (walk.stop == TableWalkStop::kUnknownModule && walk.depth > 0) {
      // A library loaded since the maps were read (they are read when a process is first
      // seen, often while the loader still maps its libraries): read them again (as often
      // as RefreshIfUnmapped allows) and walk again.
      const uint64_t pc = unwind_pcs[walk.depth - 1];
      RefreshIfUnmapped(pid, p, {&pc, 1}, now, /*sooner=*/10);
      if (Mapped(p, pc)) walk = unwinder.Unwind(pid, copy, unwind_pcs, GP_MAX_STACK_DEPTH);
    }
    unwind_ns += static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                           std::chrono::steady_clock::now() - began)
                                           .count());
    if (walk.complete()) {
      ++table_unwound;
    } else if (walk.stop == TableWalkStop::kEndOfCopy) {
      ++table_unwound;
      ++table_end_of_copy;
    } else {
      ++table_fallbacks;
      return {};
    }
    return {unwind_pcs, static_cast<size_t>(walk.depth)};
  }

  void NameKernelFrames() {
    if (kernel_words.empty()) return;
    const KernelSymbols& symbols = *kernel_symbols;
    const StringId kernel = writer->InternString("[kernel]");
    for (const auto& [pid, word] : kernel_words) {
      const uint64_t pc = KernelFramePc(word);
      const KernelSymbols::Lookup found = symbols.Find(pc);
      SymbolRecord record;
      record.pid = pid;
      record.pc = word;
      const StringId module = found.module.empty()
                                  ? kernel
                                  : writer->InternString("[" + std::string(found.module) + "]");
      record.frames.push_back(
          {found.function.empty() ? 0 : writer->InternString(found.function), 0, 0, module, pc});
      writer->AddSymbol(record);
    }
  }
};

CpuRecorder::CpuRecorder(std::unique_ptr<State> state) : state_(std::move(state)) {}
CpuRecorder::~CpuRecorder() = default;

Result<std::unique_ptr<CpuRecorder>> CpuRecorder::Create(const CpuRecorderOptions& options) {
  auto state = std::make_unique<State>();
  state->options = options;
  GP_ASSIGN_OR_RETURN(state->writer, TraceWriter::Create(options.path));
  return std::unique_ptr<CpuRecorder>(new CpuRecorder(std::move(state)));
}

void CpuRecorder::OnCpuSample(const gp_on_cpu_event& e) {
  State& s = *state_;
  State::Process& p = s.See(e.header.pid, e.header.tid, e.header.time_ns);
  CpuSampleRecord record;
  record.pid = e.header.pid;
  record.tid = e.header.tid;
  record.timestamp_ns = e.header.time_ns;
  s.python_samples += s.PythonWords(e.header.pid, p, e.py);
  const std::span<const uint64_t> unwound =
      s.UnwindCopy(e.header.pid, p, e.user_stack, e.header.time_ns);
  record.stack_id = s.Intern(e.header.pid, p, e.stacks, e.header.time_ns, s.python_words, unwound);
  record.cpu = e.header.cpu;
  record.weight_ns = e.weight_ns;
  s.writer->Add(record);
  ++totals_.samples;
  totals_.on_cpu_ns += e.weight_ns;
}

void CpuRecorder::OnStacks(const gp_stacks_event& e) {
  State& s = *state_;
  State::Process& p = s.See(e.header.pid, e.header.tid, e.header.time_ns);
  s.python_off_cpu_stacks += s.PythonWords(e.header.pid, p, e.py);
  s.bpf_stacks[e.stack_id] = s.Intern(e.header.pid, p, e.stacks, e.header.time_ns, s.python_words);
}

void CpuRecorder::ReadDueMaps() {
  State& s = *state_;
  timespec now{};
  clock_gettime(CLOCK_MONOTONIC, &now);
  const uint64_t now_ns = uint64_t(now.tv_sec) * 1000000000 + uint64_t(now.tv_nsec);
  for (auto& [pid, p] : s.processes) {
    if (p.maps_read_due && now_ns - p.maps_read_ns >= p.maps_refresh_ns) {
      s.ReadMapsAgain(pid, p, now_ns);
    }
  }
}

void CpuRecorder::SetPythonTargetSink(PythonTargetSink sink) {
  state_->python_targets = std::move(sink);
}

void CpuRecorder::LoadKernelSymbols() {
  state_->kernel_symbols = KernelSymbols::Load();
}

void CpuRecorder::OnExec(const gp_event_header& e) {
  State& s = *state_;
  s.missed.ForgetProcess(e.pid);
  s.unwinder.ForgetProcess(e.pid);
  auto it = s.processes.find(e.pid);
  if (it == s.processes.end()) return;  // read when first seen
  State::Process& p = it->second;
  s.ForgetPython(e.pid, p);
  p.command = CommandLine(e.pid);
  p.ranges.clear();
  p.modules.clear();
  p.unmapped_pages.clear();
  s.ReadMaps(e.pid, p, e.time_ns);
  p.maps_refresh_ns = kMapsAfterExecNs;
  p.maps_read_due = true;
}

void CpuRecorder::OnOffCpu(const gp_off_cpu_event& e) {
  State& s = *state_;
  s.See(e.header.pid, e.header.tid, e.header.time_ns);
  OffCpuRecord record;
  record.pid = e.header.pid;
  record.tid = e.header.tid;
  record.start_ns = e.start_ns;
  record.end_ns = e.header.time_ns;
  record.blocked_ns = e.blocked_ns;
  record.count = e.count;
  auto stack = s.bpf_stacks.find(e.stack_id);
  record.stack_id = stack == s.bpf_stacks.end() ? 0 : stack->second;
  record.reason = static_cast<OffCpuReason>(e.reason <= 3 ? e.reason : 0);
  s.writer->Add(record);
  ++totals_.off_cpu_records;
  totals_.off_cpu_intervals += e.count;
  totals_.off_cpu_ns += e.blocked_ns;
}

Status CpuRecorder::Finish(const CpuProfileCounters& c, const std::string& output_dir,
                           uint32_t stats_pid) {
  State& s = *state_;
  s.NameKernelFrames();
  const std::string own_file = s.options.path.substr(s.options.path.rfind('/') + 1);
  const std::set<uint32_t> traced = PidsWithTraces(output_dir, own_file);
  const StringId host = s.writer->InternString(HostName());
  const StringId version = s.writer->InternString(GPUPERF_VERSION);
  for (const auto& [pid, p] : s.processes) {
    if (traced.count(pid) != 0) continue;  // its own trace says who it is
    ProcessRecord record;
    record.pid = pid;
    record.parent_pid = p.parent;
    record.command = s.writer->InternString(p.command);
    record.hostname = host;
    record.gpuperf_version = version;
    record.start_ns = p.first_ns;
    record.end_ns = std::max(p.last_ns, p.first_ns + 1);  // complete: nothing lost at its end
    s.writer->Add(record);
  }
  const std::pair<StatId, uint64_t> stats[] = {
      {StatId::cpu_samples, totals_.samples},
      {StatId::off_cpu_intervals, totals_.off_cpu_intervals},
      {StatId::cpu_events_lost, c[GP_COUNT_RINGBUF_FULL]},
      {StatId::cpu_stacks_truncated, c[GP_COUNT_USER_STACK_TRUNCATED]},
      {StatId::cpu_stacks_failed, c[GP_COUNT_KERNEL_STACK_FAILED] + c[GP_COUNT_USER_STACK_FAILED]},
      {StatId::off_cpu_untimed,
       c[GP_COUNT_THREAD_STATE_FAILED] + c[GP_COUNT_CLOCK_BACKWARDS] + c[GP_COUNT_SWITCHES_MISSED]},
      {StatId::off_cpu_switches_repaired, c[GP_COUNT_SWITCH_INS_REPAIRED]},
      {StatId::off_cpu_stack_reuse_wrong, c[GP_COUNT_REUSE_MISMATCHES]},
      {StatId::cpu_processes_followed, c[GP_COUNT_PROCESSES_FOLLOWED]},
      {StatId::cpu_unmapped_pcs, s.unmapped_pcs},
      {StatId::off_cpu_stack_walks, c[GP_COUNT_STACK_WALKS]},
      {StatId::cpu_python_samples, s.python_samples},
      {StatId::cpu_python_frames_lost, s.python_frames_lost},
      {StatId::cpu_python_truncated, c[GP_COUNT_PY_TRUNCATED]},
      {StatId::cpu_python_refused, s.python_refused},
      {StatId::cpu_stacks_unwound, s.table_unwound},
      {StatId::cpu_stacks_unwind_fallback, s.table_fallbacks},
      {StatId::cpu_stacks_end_of_copy, s.table_end_of_copy},
      {StatId::cpu_stack_copy_failed, c[GP_COUNT_STACK_COPY_FAILED]},
      {StatId::cpu_unwind_ns, s.unwind_ns},  // the rules are compiled inside the walks
      {StatId::off_cpu_python_stacks, s.python_off_cpu_stacks},
  };
  for (const auto& [id, value] : stats) {
    if (value != 0) s.writer->Add(StatRecord{stats_pid, static_cast<uint32_t>(id), value});
  }
  totals_.stacks = s.stack_ids.size();
  totals_.processes = static_cast<uint32_t>(s.processes.size());
  totals_.threads = static_cast<uint32_t>(s.threads.size());
  totals_.unwound = s.table_unwound;
  totals_.unwind_tables = s.unwinder.tables_built();
  totals_.unwind_fdes = s.unwinder.fdes_compiled();
  totals_.unwind_tables_ns = s.unwinder.build_ns();  // part of unwind_ns
  totals_.unwind_ns = s.unwind_ns;
  return s.writer->Close();
}

}  // namespace gpuperf::ebpf
