// Which thread of a running program gpuperf attach may borrow to load its library: one that
// waits in a system call the kernel restarts by itself when the thread is stopped (so the
// program never sees EINTR), and whose stack holds no frame of code that keeps a lock the
// library's loading needs: the dynamic loader, the allocator, thread creation, fork, or CUDA
// (its driver, runtime, CUPTI) and gpuperf's own library. The loading calls malloc and takes
// the loader's lock; in a thread that holds either, it would wait for itself forever.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "attach/elf_image.h"
#include "attach/proc_view.h"

namespace gpuperf::attach {

// Why a thread waiting in system call `nr` with `args` may not be borrowed (empty: it may).
// `fd_target` is where args[0] leads when the call reads a descriptor (DescriptorTarget).
//
// Borrowable: futex waits, nanosleep/clock_nanosleep, poll, select, pause, wait4/waitid and a
// read of a pipe, eventfd or terminal: each restarts (or continues its sleep) when the thread
// resumes. Not borrowable: epoll_wait, sigtimedwait, semop and socket calls, which return
// EINTR after a stop (signal(7)); calls that change the signal mask for their duration (ppoll,
// pselect6, epoll_pwait, rt_sigsuspend); and what the loader and allocator themselves wait in
// (mmap, munmap, brk, madvise, mprotect, open, a read of a regular file).
std::string UnborrowableSyscall(int64_t nr, const uint64_t (&args)[6],
                                const std::string& fd_target);

struct CodeRange {
  uint64_t begin = 0;
  uint64_t end = 0;
  std::string what;  // "the dynamic loader", "malloc", "libcuda.so.1"
};

// The code a borrowed thread must not be inside of, in a process with these mappings: whole
// libraries (the loader, CUDA's, gpuperf's), and libc's functions that hold the allocator's,
// the loader's or thread creation's locks (`libc` and `libc_bias`: libc's image and bias).
std::vector<CodeRange> DangerousCode(const std::vector<Mapping>& mappings, const ElfImage* libc,
                                     uint64_t libc_bias);

// The first word of `stack` (the thread's live stack, from its stack pointer up) that points
// into one of `ranges`: a return address into that code, so the thread is inside it. Stale
// words in live frames may point there too: then the thread is passed over, never the
// reverse. Empty when none does.
std::string DangerOnStack(std::span<const uint64_t> stack, const std::vector<CodeRange>& ranges);

}  // namespace gpuperf::attach
