#include "base/ordered_work.h"

#include <sched.h>

namespace gpuperf {

unsigned ProcessorCount() {
  cpu_set_t cpus;
  if (sched_getaffinity(0, sizeof(cpus), &cpus) == 0) {
    return static_cast<unsigned>(std::max(CPU_COUNT(&cpus), 1));
  }
  return std::max(std::thread::hardware_concurrency(), 1u);
}

}  // namespace gpuperf
