#include "attach/thread_frames.h"

#include <elfutils/libdwfl.h>

#include "attach/proc_view.h"

namespace gpuperf::attach {

#if defined(__x86_64__)

namespace {

// The stack is what matters here; separate debug files are never looked for (no debuginfod
// round trips while a thread of the program is stopped).
int NoDebuginfo(Dwfl_Module*, void**, const char*, Dwarf_Addr, const char*, const char*, GElf_Word,
                char**) {
  return -1;
}

char* g_no_debuginfo_path = nullptr;
const Dwfl_Callbacks kProcessCallbacks = {
    .find_elf = dwfl_linux_proc_find_elf,
    .find_debuginfo = NoDebuginfo,
    .section_address = nullptr,
    .debuginfo_path = &g_no_debuginfo_path,
};

constexpr int kMaxFrames = 512;

}  // namespace

struct FrameWalker::State {
  pid_t pid = 0;
  Dwfl* dwfl = nullptr;
  bool attached = false;
  // The thread being walked.
  pid_t tid = 0;
  const user_regs_struct* regs = nullptr;
  ThreadFrames frames;
};

namespace {

using State = FrameWalker::State;

pid_t NextThread(Dwfl*, void* arg, void** thread_arg) {
  auto* state = static_cast<State*>(arg);
  if (*thread_arg != nullptr) return 0;  // one thread: the one being walked
  *thread_arg = state;
  return state->tid;
}

bool GetThread(Dwfl*, pid_t tid, void* arg, void** thread_arg) {
  auto* state = static_cast<State*>(arg);
  *thread_arg = state;
  return tid == state->tid;
}

bool ReadWord(Dwfl*, Dwarf_Addr address, Dwarf_Word* result, void* arg) {
  return ReadProcessMemory(static_cast<State*>(arg)->pid, address, result, sizeof(*result));
}

// DWARF's x86-64 register numbers: rax, rdx, rcx, rbx, rsi, rdi, rbp, rsp, r8-r15, rip.
bool InitialRegisters(Dwfl_Thread* thread, void* arg) {
  const user_regs_struct& r = *static_cast<State*>(arg)->regs;
  const Dwarf_Word dwarf[17] = {r.rax, r.rdx, r.rcx, r.rbx, r.rsi, r.rdi, r.rbp, r.rsp, r.r8,
                                r.r9,  r.r10, r.r11, r.r12, r.r13, r.r14, r.r15, r.rip};
  return dwfl_thread_state_registers(thread, 0, 17, dwarf);
}

const Dwfl_Thread_Callbacks kThreadCallbacks = {
    .next_thread = NextThread,
    .get_thread = GetThread,
    .memory_read = ReadWord,
    .set_initial_registers = InitialRegisters,
    .detach = nullptr,
    .thread_detach = nullptr,
};

constexpr unsigned kDwarfRsp = 7;

int OnFrame(Dwfl_Frame* frame, void* arg) {
  auto* state = static_cast<State*>(arg);
  Dwarf_Addr pc = 0;
  bool activation = false;
  if (!dwfl_frame_pc(frame, &pc, &activation)) return DWARF_CB_ABORT;
  Dwarf_Word sp = 0;
  if (dwfl_frame_reg(frame, kDwarfRsp, &sp) == 0) state->frames.stopped_sp = sp;
  // The pc itself, as a return address would point: just past it.
  state->frames.pcs.push_back(activation ? pc + 1 : pc);
  return static_cast<int>(state->frames.pcs.size()) < kMaxFrames ? DWARF_CB_OK : DWARF_CB_ABORT;
}

}  // namespace

FrameWalker::FrameWalker(pid_t pid) : state_(std::make_unique<State>()) {
  state_->pid = pid;
  state_->dwfl = dwfl_begin(&kProcessCallbacks);
  if (state_->dwfl == nullptr) return;
  dwfl_report_begin(state_->dwfl);
  const bool reported = dwfl_linux_proc_report(state_->dwfl, pid) == 0;
  dwfl_report_end(state_->dwfl, nullptr, nullptr);
  state_->attached =
      reported && dwfl_attach_state(state_->dwfl, nullptr, pid, &kThreadCallbacks, state_.get());
}

FrameWalker::~FrameWalker() {
  if (state_->dwfl != nullptr) dwfl_end(state_->dwfl);
}

ThreadFrames FrameWalker::Walk(pid_t tid, const user_regs_struct& regs) {
  state_->frames = ThreadFrames{};
  state_->frames.stopped_sp = regs.rsp;
  if (!state_->attached) return state_->frames;
  state_->tid = tid;
  state_->regs = &regs;
  const int result = dwfl_getthread_frames(state_->dwfl, tid, OnFrame, state_.get());
  // 0: the walk reached a frame with no caller. libdw also ends a walk with an error at the
  // outermost frame of some threads; that is no end a caller's word could hide behind only
  // when the last frame is the start of a thread or the program, which the caller's check of
  // the words above it covers either way.
  state_->frames.complete = result == 0;
  return state_->frames;
}

#else

struct FrameWalker::State {};
FrameWalker::FrameWalker(pid_t) : state_(std::make_unique<State>()) {}
FrameWalker::~FrameWalker() = default;
ThreadFrames FrameWalker::Walk(pid_t, const user_regs_struct&) {
  return {};
}

#endif

}  // namespace gpuperf::attach
