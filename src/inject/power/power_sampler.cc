#include "inject/power/power_sampler.h"

#include <dlfcn.h>
#include <signal.h>

#include <cstdlib>
#include <memory>

#include "inject/log.h"
#include "inject/record_batch.h"
#include "inject/recorder.h"
#include "inject/stats.h"
#include "inject/writer_thread.h"

namespace gpuperf::inject {
namespace {

std::atomic<uint64_t> g_devices_in_use{0};

constexpr uint64_t kEnergyEveryNs = 1'000'000'000;  // the counter costs ~ms per read
constexpr uint64_t kHandEveryNs = 500'000'000;      // the writer's flush period

// "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx" of CUDA device `ordinal`, from the libcuda the
// process already loaded (never loads one); empty when there is none.
std::string CudaDeviceUuid(uint32_t ordinal) {
  struct Uuid {
    uint8_t bytes[16];
  };
  using UuidFn = int (*)(Uuid*, int);
  void* cuda = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
  if (cuda == nullptr) return {};
  auto get = reinterpret_cast<UuidFn>(dlsym(cuda, "cuDeviceGetUuid_v2"));
  if (get == nullptr) get = reinterpret_cast<UuidFn>(dlsym(cuda, "cuDeviceGetUuid"));
  Uuid uuid{};
  const int result = get != nullptr ? get(&uuid, static_cast<int>(ordinal)) : -1;
  dlclose(cuda);  // a NOLOAD handle: only our reference goes
  if (result != 0) return {};
  return UuidText(uuid.bytes);
}

// Entry `ordinal` of CUDA_VISIBLE_DEVICES ("2,3" or "GPU-...,GPU-..."); empty when unset.
std::string VisibleDeviceEntry(const std::string& visible, uint32_t ordinal) {
  size_t start = 0;
  for (uint32_t i = 0; start <= visible.size(); ++i) {
    size_t comma = visible.find(',', start);
    if (comma == std::string::npos) comma = visible.size();
    if (i == ordinal) return visible.substr(start, comma - start);
    start = comma + 1;
  }
  return {};
}

}  // namespace

void NotePowerDevice(uint32_t ordinal) {
  if (ordinal < 64) g_devices_in_use.fetch_or(uint64_t{1} << ordinal, std::memory_order_relaxed);
}

void PowerSampler::Start(uint32_t hz, uint32_t pid, WriterThread& writer) {
  if (hz == 0) return;
  pid_ = pid;
  period_ns_ = 1'000'000'000ull / hz;
  writer_ = &writer;
  if (const char* visible = std::getenv("CUDA_VISIBLE_DEVICES")) visible_devices_ = visible;
  thread_ = std::thread([this] { Run(); });
}

void PowerSampler::Stop(uint32_t timeout_ms) {
  if (!thread_.joinable()) return;
  std::unique_lock<std::mutex> lock(mutex_);
  stop_ = true;
  wake_.notify_all();
  const bool done =
      wake_.wait_for(lock, std::chrono::milliseconds(timeout_ms), [this] { return done_; });
  lock.unlock();
  if (done) {
    thread_.join();
  } else {
    thread_.detach();
  }
}

void PowerSampler::Run() {
  sigset_t all;  // the app's signals are not ours
  sigfillset(&all);
  pthread_sigmask(SIG_BLOCK, &all, nullptr);
  std::unique_lock<std::mutex> lock(mutex_);
  // NVML is loaded once a GPU is in use: a process that never makes a context on one (a
  // launcher asking how many GPUs there are) never pays for it.
  while (!stop_ && g_devices_in_use.load(std::memory_order_relaxed) == 0) {
    wake_.wait_for(lock, std::chrono::nanoseconds(period_ns_), [this] { return stop_; });
  }
  const bool wanted = g_devices_in_use.load(std::memory_order_relaxed) != 0;
  lock.unlock();
  std::string why;
  if (wanted) nvml_ = Nvml::Open(&why);
  const bool loaded = nvml_ != nullptr;
  if (wanted && !loaded) {
    CountStat(StatId::power_unavailable);
    LogVerbose("no GPU power readings: %s", why.c_str());
  }
  lock.lock();
  uint64_t next = MonotonicNs();
  if (loaded && !stop_) {  // the first reading at once, where the GPU's use starts
    lock.unlock();
    AddNewDevices();
    ReadAll(next, false);
    lock.lock();
  }
  while (loaded && !stop_) {
    next += period_ns_;
    const uint64_t now = MonotonicNs();
    if (next < now) next = now;  // starved: keep the rate, not a burst of catch-up readings
    wake_.wait_for(lock, std::chrono::nanoseconds(next - now), [this] { return stop_; });
    if (stop_) break;
    lock.unlock();
    AddNewDevices();
    ReadAll(MonotonicNs(), false);
    lock.lock();
  }
  lock.unlock();
  if (loaded) {
    AddNewDevices();
    ReadAll(MonotonicNs(), true);
    Hand();
    nvml_.reset();
  }
  lock.lock();
  done_ = true;
  wake_.notify_all();
}

void PowerSampler::AddNewDevices() {
  const uint64_t in_use = g_devices_in_use.load(std::memory_order_relaxed);
  for (uint32_t ordinal = 0; ordinal < 64; ++ordinal) {
    const uint64_t bit = uint64_t{1} << ordinal;
    if (!(in_use & bit) || (known_devices_ & bit)) continue;
    known_devices_ |= bit;
    Nvml::Device device = nullptr;
    if (const std::string uuid = CudaDeviceUuid(ordinal); !uuid.empty()) {
      device = nvml_->ByUuid(uuid);
    }
    if (device == nullptr) {
      // No UUID from libcuda: CUDA_VISIBLE_DEVICES names the GPU, by index or UUID.
      const std::string entry = VisibleDeviceEntry(visible_devices_, ordinal);
      if (entry.rfind("GPU-", 0) == 0) {
        device = nvml_->ByUuid(entry);
      } else {
        char* end = nullptr;
        const unsigned long index = entry.empty() ? ordinal : std::strtoul(entry.c_str(), &end, 10);
        if (entry.empty() || (end != nullptr && *end == '\0')) {
          device = nvml_->ByIndex(static_cast<uint32_t>(index));
        }
      }
      if (device != nullptr) CountStat(StatId::power_matched_by_index);
    }
    if (device == nullptr) {
      CountStat(StatId::power_device_unmatched);
      LogOnce("no power readings for GPU %u: NVML does not know it", ordinal);
      continue;
    }
    devices_.push_back(Sampled{ordinal, device, 0});
  }
}

void PowerSampler::ReadAll(uint64_t now_ns, bool final) {
  for (Sampled& d : devices_) {
    const uint64_t begin = MonotonicNs();
    PowerSampleRecord sample;
    sample.pid = pid_;
    sample.device_id = d.ordinal;
    uint32_t milliwatts = 0;
    bool instant = false;
    if (nvml_->ReadPower(d.nvml_device, &milliwatts, &instant)) {
      sample.power_mw = milliwatts;
      sample.source = instant ? PowerSource::kInstant : PowerSource::kAveraged;
    } else {
      CountStat(StatId::power_read_failed);
    }
    const uint64_t read = MonotonicNs();
    if (final || now_ns >= d.next_energy_ns) {
      if (nvml_->ReadEnergy(d.nvml_device, &sample.energy_mj)) {
        d.next_energy_ns = now_ns + kEnergyEveryNs;
      }
    }
    // The power reading's moment: the middle of its NVML call.
    sample.timestamp_ns = begin + (read - begin) / 2;
    CountStat(StatId::power_read_ns, MonotonicNs() - begin);
    if (sample.source == PowerSource::kNone && sample.energy_mj == 0) continue;
    CountStat(StatId::power_samples);
    pending_.push_back(sample);
  }
  if (now_ns >= next_hand_ns_) {
    Hand();
    next_hand_ns_ = now_ns + kHandEveryNs;
  }
}

void PowerSampler::Hand() {
  if (pending_.empty()) return;
  auto batch = std::make_unique<RecordBatch>();
  batch->power_samples.swap(pending_);
  writer_->Enqueue(std::move(batch));
}

}  // namespace gpuperf::inject
