// live_page_holder DIR MODE: a process that writes a live page with the injection library's
// own writer code (one kernel published) and then stops inside a write of its counters
// block, the seqlock left odd, as a writer killed or stopped mid-write leaves it:
//   die    SIGKILL itself while inside the write
//   stop   SIGSTOP itself while inside the write (the test continues or kills it)
// It prints "holding PID" just before.
// live_page_holder DIR forge PID: writes a complete page that names process PID (its pid and
// start time, as a page of that process would), leaves it and exits: a page a user can make
// for a process that is not theirs (tests/e2e/live_other_users_test.sh).
#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>

#include "format/live_accumulator.h"
#include "format/live_dir.h"
#include "format/live_page_file.h"
#include "format/live_text.h"

int main(int argc, char** argv) {
  using namespace gpuperf::live;
  const bool forge = argc == 4 && std::strcmp(argv[2], "forge") == 0;
  if (!forge &&
      (argc != 3 || (std::strcmp(argv[2], "die") != 0 && std::strcmp(argv[2], "stop") != 0))) {
    std::fprintf(stderr, "usage: live_page_holder DIR die|stop, live_page_holder DIR forge PID\n");
    return 2;
  }
  timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  const uint64_t now_ns = static_cast<uint64_t>(now.tv_sec) * 1000000000ull + now.tv_nsec;
  Identity identity;
  identity.pid =
      forge ? static_cast<uint32_t>(std::atoi(argv[3])) : static_cast<uint32_t>(getpid());
  identity.start_ticks = ProcessStartTicks(identity.pid);
  identity.start_monotonic_ns = now_ns;
  CopyText(identity.command, std::string("live_page_holder ") + argv[2]);
  auto file = LivePageFile::Create(argv[1], identity);
  if (!file.ok()) {
    std::fprintf(stderr, "live_page_holder: %s\n", file.status().message().c_str());
    return 1;
  }
  LiveAccumulator accumulator([](gpuperf::StringId) { return std::string("_Z4holdv"); });
  gpuperf::KernelRecord kernel;
  kernel.name = 1;
  kernel.start_ns = now_ns - 1000;
  kernel.end_ns = now_ns;
  accumulator.AddKernel(kernel);
  accumulator.Publish((*file)->page(), now_ns, true);
  if (forge) _exit(0);  // without the destructor, which would remove the page
  // Where SeqlockWrite would be copying: the sequence is odd.
  (*file)->page().counters.lock.sequence.fetch_add(1);
  std::printf("holding %d\n", static_cast<int>(getpid()));
  std::fflush(stdout);
  raise(std::strcmp(argv[2], "die") == 0 ? SIGKILL : SIGSTOP);
  // Continued after a stop: still inside the write, until killed.
  for (;;) pause();
}
