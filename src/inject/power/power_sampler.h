// GPU power during the recording: a background thread reads each GPU the process uses
// through NVML (base/nvml.h) at a fixed rate (GPUPERF_POWER_HZ, default 20) and hands
// PowerSampleRecords to the writer thread. The NVML energy counter is read at the first
// reading, about once a second and at the end, so that the sampled power can be checked
// against it (docs/energy.md). Without NVML there are no readings and one info counter.
//
// Nothing here runs on an app thread except NotePowerDevice, one atomic OR.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "base/nvml.h"
#include "gpuperf/records.h"

namespace gpuperf::inject {

class WriterThread;

// Device `ordinal` (a CUDA device of this process) has a context: sample it. Any thread;
// ordinals from 64 on are not sampled.
void NotePowerDevice(uint32_t ordinal);

class PowerSampler {
 public:
  // Starts the thread (which loads NVML itself, off the app's path). `hz` 0: nothing.
  void Start(uint32_t hz, uint32_t pid, WriterThread& writer);
  // Takes the final readings, hands them to the writer and ends the thread; waits at most
  // `timeout_ms` (an NVML call that hangs leaves the thread detached, never the app stuck).
  void Stop(uint32_t timeout_ms);

 private:
  struct Sampled {
    uint32_t ordinal = 0;
    void* nvml_device = nullptr;
    uint64_t next_energy_ns = 0;
  };

  void Run();
  void AddNewDevices();
  void ReadAll(uint64_t now_ns, bool final);
  void Hand();  // passes the readings taken so far to the writer

  std::unique_ptr<Nvml> nvml_;   // while the thread reads
  std::string visible_devices_;  // CUDA_VISIBLE_DEVICES, read at Start on the app's thread
  uint32_t pid_ = 0;
  uint64_t period_ns_ = 0;
  WriterThread* writer_ = nullptr;
  std::vector<Sampled> devices_;
  uint64_t known_devices_ = 0;  // bit per ordinal already looked up
  std::vector<PowerSampleRecord> pending_;
  uint64_t next_hand_ns_ = 0;

  std::mutex mutex_;
  std::condition_variable wake_;
  bool stop_ = false;
  bool done_ = false;
  std::thread thread_;
};

}  // namespace gpuperf::inject
