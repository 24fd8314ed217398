#include "support/insight_scenario.h"

#include <gtest/gtest.h>

#include "analyze/insights/insights_section.h"
#include "analyze/report/report_model.h"
#include "support/model_trace.h"
#include "support/temp_dir.h"

namespace gpuperf::testing {

InsightScenario::InsightScenario() {
  t_.Process(kPid, "scenario");
  t_.Thread(kPid, kTid, "main");
  DeviceRecord d = H100Device();
  d.pid = kPid;
  d.name = t_.Str("NVIDIA H100 80GB HBM3");
  t_.trace().devices.push_back(d);
}

uint32_t InsightScenario::Call(std::string_view api, double start_us, double us, StackId stack) {
  const uint32_t id = next_correlation_++;
  ApiRecord call;
  call.pid = kPid;
  call.tid = kTid;
  call.domain = ApiDomain::kRuntime;
  call.name = t_.Str(api);
  call.start_ns = Ns(start_us);
  call.end_ns = Ns(start_us + us);
  call.correlation_id = id;
  t_.trace().apis.push_back(call);
  if (stack != 0) t_.Link(kPid, kTid, id, stack, api, call.start_ns);
  return id;
}

KernelRecord& InsightScenario::Launch(StackId stack, std::string_view kernel, double call_us,
                                      double call_duration_us, double kernel_us,
                                      double kernel_duration_us) {
  const uint32_t id = Call("cudaLaunchKernel", call_us, call_duration_us, stack);
  KernelRecord& k =
      t_.Kernel(kPid, kernel, id, Ns(kernel_us), Ns(kernel_us + kernel_duration_us), 0, 7);
  k.block_x = 256;
  k.block_y = k.block_z = 1;
  k.grid_x = 1024;
  k.grid_y = k.grid_z = 1;
  k.registers_per_thread = 32;
  return k;
}

MemcpyRecord& InsightScenario::Copy(StackId stack, MemcpyKind kind, MemoryKind host, uint64_t bytes,
                                    double start_us, double us, std::string_view api) {
  const uint32_t id = Call(api, start_us - 1, us + 1, stack);
  MemcpyRecord& m = t_.Memcpy(kPid, kind, id, Ns(start_us), Ns(start_us + us), 0, 7);
  m.bytes = bytes;
  (kind == MemcpyKind::kHtoD ? m.src_kind : m.dst_kind) = host;
  (kind == MemcpyKind::kHtoD ? m.dst_kind : m.src_kind) = MemoryKind::kDevice;
  return m;
}

void InsightScenario::Allocate(StackId stack, uint64_t address, uint64_t bytes, double at_us) {
  const uint32_t id = Call("cudaMalloc", at_us, 1, stack);
  MemoryRecord m;
  m.pid = kPid;
  m.op = MemoryOp::kAllocation;
  m.memory_kind = MemoryKind::kDevice;
  m.address = address;
  m.bytes = bytes;
  m.timestamp_ns = Ns(at_us);
  m.correlation_id = id;
  t_.trace().memories.push_back(m);
}

void InsightScenario::Free(uint64_t address, double at_us) {
  MemoryRecord m;
  m.pid = kPid;
  m.op = MemoryOp::kRelease;
  m.memory_kind = MemoryKind::kDevice;
  m.address = address;
  m.timestamp_ns = Ns(at_us);
  m.correlation_id = Call("cudaFree", at_us, 1);
  t_.trace().memories.push_back(m);
}

std::vector<Insight> InsightScenario::Insights() {
  TempDir dir;
  WriteTraceFile(t_.trace(), dir.File("scenario.gpt"));
  ReportOptions options;
  options.insights = true;
  auto model = BuildReport(dir.File("scenario.gpt"), options, report::kInsightsSection);
  EXPECT_TRUE(model.ok()) << model.status().message();
  if (!model.ok()) return {};
  EXPECT_TRUE(model->insights_run);
  return model->insights;
}

std::vector<Insight> InsightScenario::Insights(std::string_view rule) {
  std::vector<Insight> out;
  for (Insight& in : Insights()) {
    if (in.rule == rule) out.push_back(std::move(in));
  }
  return out;
}

double EvidenceValue(const Insight& insight, std::string_view name) {
  for (const Evidence& e : insight.evidence) {
    if (e.name == name) return e.value;
  }
  ADD_FAILURE() << insight.rule << " has no evidence named " << name;
  return -1;
}

}  // namespace gpuperf::testing
