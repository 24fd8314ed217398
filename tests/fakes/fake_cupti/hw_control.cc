// Failure injection, the fake counter values, and the control API of the hardware profilers
// (modules, PC samples, NVTX callbacks).
#include <generated_nvtx_meta.h>
#include <nvtx3/nvToolsExt.h>

#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>

#include "fake_cupti/fake_cupti.h"
#include "fake_cupti/hw_state.h"
#include "fake_cupti/state.h"

namespace fake_cupti {
namespace {

std::map<std::string, CUptiResult> ParseFailures() {
  std::map<std::string, CUptiResult> failures;
  const char* text = std::getenv("FAKE_CUPTI_FAIL");
  std::string list = text ? text : "";
  size_t pos = 0;
  while (pos < list.size()) {
    size_t comma = list.find(',', pos);
    if (comma == std::string::npos) comma = list.size();
    const std::string item = list.substr(pos, comma - pos);
    const size_t eq = item.find('=');
    if (eq != std::string::npos) {
      failures[item.substr(0, eq)] =
          static_cast<CUptiResult>(std::strtol(item.c_str() + eq + 1, nullptr, 10));
    }
    pos = comma + 1;
  }
  return failures;
}

bool Contains(const std::string& text, const char* part) {
  return text.find(part) != std::string::npos;
}

}  // namespace

CUptiResult Injected(const char* function) {
  static const std::map<std::string, CUptiResult> failures = ParseFailures();
  auto it = failures.find(function);
  return it == failures.end() ? CUPTI_SUCCESS : Fail(it->second);
}

double FakeMetricValue(const std::string& metric, const std::string& range) {
  // Three profiles: memory bound (a copy), compute bound (FMA chains), latency bound.
  const int profile = Contains(range, "copy") ? 0 : Contains(range, "fma") ? 1 : 2;
  auto pick = [profile](double copy, double fma, double other) {
    return profile == 0 ? copy : profile == 1 ? fma : other;
  };
  if (Contains(metric, "sm__throughput")) return pick(21.5, 92.25, 9.5);
  if (Contains(metric, "gpu__compute_memory_throughput")) return pick(93.0, 6.0, 8.0);
  if (Contains(metric, "gpu__dram_throughput")) return pick(92.0, 0.5, 3.0);
  if (Contains(metric, "dram__bytes.sum.per_second")) return pick(3.082e12, 1.675e10, 1.005e11);
  if (Contains(metric, "dram__bytes_read")) return pick(268435456.0, 4096.0, 65536.0);
  if (Contains(metric, "dram__bytes_write")) return pick(268435456.0, 1024.0, 4096.0);
  if (Contains(metric, "sm__warps_active")) return pick(85.0, 95.5, 6.25);
  if (Contains(metric, "l1tex__t_sector_hit_rate")) return pick(0.0, 100.0, 50.0);
  if (Contains(metric, "lts__t_sector_hit_rate")) return pick(12.0, 99.0, 40.0);
  if (Contains(metric, "tensor")) return 0.0;
  if (Contains(metric, "gpu__time_duration"))
    return 100000.0 + 1000.0 * static_cast<double>(range.size());
  if (Contains(metric, "sm__cycles_active")) return pick(60.0, 99.0, 20.0);
  if (Contains(metric, "smsp__issue_active")) return pick(15.0, 90.0, 5.0);
  return 1.0;
}

uint64_t FakeCubinCrc(const void* data, size_t size) {
  uint64_t hash = 0xcbf29ce484222325ull;
  const auto* bytes = static_cast<const uint8_t*>(data);
  for (size_t i = 0; i < size; ++i) hash = (hash ^ bytes[i]) * 0x100000001b3ull;
  return hash;
}

}  // namespace fake_cupti

extern "C" {

uint64_t fake_cupti_load_module(uint32_t context_id, const void* cubin, size_t size) {
  static uint32_t next_module = 1;
  CUpti_ModuleResourceData module{};
  module.moduleId = next_module++;
  module.cubinSize = size;
  module.pCubin = static_cast<const char*>(cubin);
  CUpti_ResourceData data{};
  data.context = fake_cupti_context_handle(context_id);
  data.resourceDescriptor = &module;
  fake_cupti::IssueCallback(CUPTI_CB_DOMAIN_RESOURCE, CUPTI_CBID_RESOURCE_MODULE_LOADED, &data);
  return fake_cupti::FakeCubinCrc(cubin, size);
}

void fake_cupti_nvtx_push(const char* name) {
  nvtxRangePushA_params params{name};
  CUpti_NvtxData data{"nvtxRangePushA", &params, nullptr};
  fake_cupti::IssueCallback(CUPTI_CB_DOMAIN_NVTX, CUPTI_CBID_NVTX_nvtxRangePushA, &data);
}

void fake_cupti_nvtx_pop(void) {
  CUpti_NvtxData data{"nvtxRangePop", nullptr, nullptr};
  fake_cupti::IssueCallback(CUPTI_CB_DOMAIN_NVTX, CUPTI_CBID_NVTX_nvtxRangePop, &data);
}

}  // extern "C"
