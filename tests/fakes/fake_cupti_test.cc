// Unit tests of the fake libcupti.so.13: the CUPTI semantics the injection library relies on,
// checked in-process, and a conformance check against the real libcupti where it is installed
// (the parts that work without a driver: record iteration, names, parameter checks).
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <pthread.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "fake_cupti/fake_cupti.h"

namespace {

uint32_t Tid() {
  return static_cast<uint32_t>(syscall(SYS_gettid));
}

// ---- a client of the activity API that keeps every delivered buffer ----
struct Delivery {
  uint32_t tid;
  std::vector<uint8_t> bytes;
};
std::mutex g_mu;
std::condition_variable g_cv;
std::vector<Delivery> g_deliveries;
size_t g_buffer_size = 1 << 16;
size_t g_max_records = 0;
bool g_refuse = false;
std::atomic<int> g_requests{0};

void CUPTIAPI Request(uint8_t** buffer, size_t* size, size_t* max_records) {
  g_requests++;
  *buffer = g_refuse ? nullptr : static_cast<uint8_t*>(aligned_alloc(8, g_buffer_size));
  *size = g_buffer_size;
  *max_records = g_max_records;
}

void CUPTIAPI Complete(CUcontext, uint32_t, uint8_t* buffer, size_t, size_t valid) {
  {
    std::lock_guard<std::mutex> lock(g_mu);
    g_deliveries.push_back({Tid(), std::vector<uint8_t>(buffer, buffer + valid)});
  }
  g_cv.notify_all();
  free(buffer);
}

size_t DeliveryCount() {
  std::lock_guard<std::mutex> lock(g_mu);
  return g_deliveries.size();
}

bool WaitForDeliveries(size_t n, std::chrono::milliseconds timeout) {
  std::unique_lock<std::mutex> lock(g_mu);
  return g_cv.wait_for(lock, timeout, [n] { return g_deliveries.size() >= n; });
}

// Walks one delivered buffer with cuptiActivityGetNextRecord; records point into `bytes`.
std::vector<const CUpti_Activity*> Records(Delivery& delivery) {
  std::vector<const CUpti_Activity*> out;
  CUpti_Activity* record = nullptr;
  CUptiResult status;
  while ((status = cuptiActivityGetNextRecord(delivery.bytes.data(), delivery.bytes.size(),
                                              &record)) == CUPTI_SUCCESS) {
    out.push_back(record);
  }
  EXPECT_EQ(status, CUPTI_ERROR_MAX_LIMIT_REACHED);
  return out;
}

std::vector<const CUpti_Activity*> AllRecords() {
  std::vector<const CUpti_Activity*> out;
  for (auto& delivery : g_deliveries) {
    for (const auto* record : Records(delivery)) out.push_back(record);
  }
  return out;
}

FakeCuptiKernel Kernel(uint32_t correlation_id, const char* name = "_Z1kv") {
  FakeCuptiKernel kernel{};
  kernel.correlation_id = correlation_id;
  kernel.name = name;
  kernel.context_id = 1;
  kernel.stream_id = 7;
  kernel.start = 1000 + correlation_id;
  kernel.end = 2000 + correlation_id;
  return kernel;
}

class FakeCuptiTest : public ::testing::Test {
 protected:
  void SetUp() override {
    fake_cupti_reset();
    g_deliveries.clear();
    g_buffer_size = 1 << 16;
    g_max_records = 0;
    g_refuse = false;
    g_requests = 0;
  }
  void TearDown() override { fake_cupti_reset(); }
  void StartTracing(std::initializer_list<CUpti_ActivityKind> kinds) {
    ASSERT_EQ(cuptiActivityRegisterCallbacks(Request, Complete), CUPTI_SUCCESS);
    for (auto kind : kinds) ASSERT_EQ(cuptiActivityEnable(kind), CUPTI_SUCCESS);
  }
};

TEST_F(FakeCuptiTest, EveryRecordKindParsesBackThroughGetNextRecord) {
  StartTracing({CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_MEMCPY,
                CUPTI_ACTIVITY_KIND_MEMSET, CUPTI_ACTIVITY_KIND_RUNTIME,
                CUPTI_ACTIVITY_KIND_SYNCHRONIZATION, CUPTI_ACTIVITY_KIND_MEMORY2,
                CUPTI_ACTIVITY_KIND_MARKER, CUPTI_ACTIVITY_KIND_OVERHEAD,
                CUPTI_ACTIVITY_KIND_DEVICE, CUPTI_ACTIVITY_KIND_CONTEXT,
                CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION, CUPTI_ACTIVITY_KIND_GRAPH_TRACE});
  FakeCuptiKernel kernel = Kernel(11, "_Z6vecAddPfS_");
  kernel.graph_id = 3;
  kernel.graph_node_id = 99;
  EXPECT_EQ(fake_cupti_emit_kernel(&kernel), 1);
  FakeCuptiMemcpy copy{};
  copy.correlation_id = 12;
  copy.runtime_correlation_id = 10;
  copy.bytes = 4096;
  EXPECT_EQ(fake_cupti_emit_memcpy(&copy), 1);
  FakeCuptiMemset set{};
  set.correlation_id = 13;
  set.bytes = 512;
  EXPECT_EQ(fake_cupti_emit_memset(&set), 1);
  uint32_t api_id = fake_cupti_api_call(CUPTI_CB_DOMAIN_RUNTIME_API,
                                        CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, "k");
  EXPECT_EQ(
      fake_cupti_emit_sync(14, CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE, 1, 7, 5, 6),
      1);
  EXPECT_EQ(fake_cupti_emit_memory(15, CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION,
                                   CUPTI_ACTIVITY_MEMORY_KIND_DEVICE, 0x1000, 256, 0, 1, 9),
            1);
  EXPECT_EQ(fake_cupti_emit_marker(CUPTI_ACTIVITY_FLAG_MARKER_START, 1, "step", "app", 10), 1);
  EXPECT_EQ(fake_cupti_emit_overhead(CUPTI_ACTIVITY_OVERHEAD_CUPTI_BUFFER_FLUSH, 1, 2, 0), 1);
  EXPECT_EQ(fake_cupti_emit_device(0, "gpu0"), 1);
  EXPECT_EQ(fake_cupti_emit_context(1, 0), 1);
  EXPECT_EQ(fake_cupti_emit_external_correlation(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, 77, 16),
            1);
  EXPECT_EQ(fake_cupti_emit_graph_trace(17, 3, 0, 1, 7, 20, 30), 1);
  ASSERT_EQ(cuptiActivityFlushAll(0), CUPTI_SUCCESS);

  auto records = AllRecords();
  std::vector<int> kinds;
  for (const auto* record : records) kinds.push_back(record->kind);
  EXPECT_EQ(kinds, (std::vector<int>{
                       CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_MEMCPY,
                       CUPTI_ACTIVITY_KIND_MEMSET, CUPTI_ACTIVITY_KIND_RUNTIME,
                       CUPTI_ACTIVITY_KIND_SYNCHRONIZATION, CUPTI_ACTIVITY_KIND_MEMORY2,
                       CUPTI_ACTIVITY_KIND_MARKER, CUPTI_ACTIVITY_KIND_OVERHEAD,
                       CUPTI_ACTIVITY_KIND_DEVICE, CUPTI_ACTIVITY_KIND_CONTEXT,
                       CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION, CUPTI_ACTIVITY_KIND_GRAPH_TRACE}));
  ASSERT_EQ(records.size(), 12u);
  for (const auto* record : records) {
    EXPECT_EQ(reinterpret_cast<uintptr_t>(record) % 8, 0u) << "record kind " << record->kind;
  }
  const auto* k = reinterpret_cast<const CUpti_ActivityKernel10*>(records[0]);
  EXPECT_STREQ(k->name, "_Z6vecAddPfS_");
  EXPECT_EQ(k->correlationId, 11u);
  EXPECT_EQ(k->graphId, 3u);
  EXPECT_EQ(k->graphNodeId, 99u);
  EXPECT_EQ(k->completed, k->end);
  const auto* m = reinterpret_cast<const CUpti_ActivityMemcpy6*>(records[1]);
  EXPECT_EQ(m->bytes, 4096u);
  EXPECT_EQ(m->runtimeCorrelationId, 10u);
  const auto* api = reinterpret_cast<const CUpti_ActivityAPI*>(records[3]);
  EXPECT_EQ(api->correlationId, api_id);
  EXPECT_EQ(api->cbid, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000);
  EXPECT_EQ(api->processId, static_cast<uint32_t>(getpid()));
  EXPECT_LE(api->start, api->end);
  EXPECT_STREQ(reinterpret_cast<const CUpti_ActivityMarker2*>(records[6])->name, "step");
  EXPECT_EQ(reinterpret_cast<const CUpti_ActivityExternalCorrelation*>(records[10])->externalId,
            77u);
}

TEST_F(FakeCuptiTest, DisabledKindsAreNotRecorded) {
  StartTracing({CUPTI_ACTIVITY_KIND_MEMCPY});
  FakeCuptiKernel kernel = Kernel(1);
  EXPECT_EQ(fake_cupti_emit_kernel(&kernel), 0);
  EXPECT_EQ(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_INVALID), CUPTI_ERROR_INVALID_KIND);
  EXPECT_EQ(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_COUNT), CUPTI_ERROR_INVALID_KIND);
  // KERNEL (serializing) is honoured too, when CONCURRENT_KERNEL is off.
  ASSERT_EQ(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_KERNEL), CUPTI_SUCCESS);
  EXPECT_EQ(fake_cupti_emit_kernel(&kernel), 1);
  cuptiActivityFlushAll(0);
  auto records = AllRecords();
  ASSERT_EQ(records.size(), 1u);
  EXPECT_EQ(records[0]->kind, CUPTI_ACTIVITY_KIND_KERNEL);
  FakeCuptiStats stats;
  fake_cupti_get_stats(&stats);
  EXPECT_TRUE(stats.kinds_ever_enabled & (1ull << CUPTI_ACTIVITY_KIND_KERNEL));
}

TEST_F(FakeCuptiTest, FlushAllDeliversOnTheCallingThread) {
  StartTracing({CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL});
  for (uint32_t i = 1; i <= 5; ++i) {
    FakeCuptiKernel kernel = Kernel(i);
    fake_cupti_emit_kernel(&kernel);
  }
  EXPECT_EQ(DeliveryCount(), 0u);  // a partly filled buffer stays with CUPTI
  ASSERT_EQ(cuptiActivityFlushAll(0), CUPTI_SUCCESS);
  ASSERT_EQ(DeliveryCount(), 1u);
  EXPECT_EQ(g_deliveries[0].tid, Tid());
  EXPECT_EQ(AllRecords().size(), 5u);
  ASSERT_EQ(cuptiActivityFlushAll(0), CUPTI_SUCCESS);
  EXPECT_EQ(DeliveryCount(), 1u);  // nothing left, nothing delivered again
}

TEST_F(FakeCuptiTest, FullBuffersArriveOnCuptisWorkerThread) {
  g_buffer_size = 4096;  // 18 kernel records fill it
  StartTracing({CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL});
  for (uint32_t i = 1; i <= 100; ++i) {
    FakeCuptiKernel kernel = Kernel(i);
    fake_cupti_emit_kernel(&kernel);
  }
  ASSERT_TRUE(WaitForDeliveries(5, std::chrono::seconds(5)));
  std::lock_guard<std::mutex> lock(g_mu);
  for (const auto& delivery : g_deliveries) EXPECT_NE(delivery.tid, Tid());
}

TEST_F(FakeCuptiTest, MaxNumRecordsCompletesABufferEarly) {
  g_max_records = 3;
  StartTracing({CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL});
  for (uint32_t i = 1; i <= 7; ++i) {
    FakeCuptiKernel kernel = Kernel(i);
    fake_cupti_emit_kernel(&kernel);
  }
  ASSERT_TRUE(WaitForDeliveries(2, std::chrono::seconds(5)));
  cuptiActivityFlushAll(0);
  std::lock_guard<std::mutex> lock(g_mu);
  ASSERT_EQ(g_deliveries.size(), 3u);
  EXPECT_EQ(Records(g_deliveries[0]).size(), 3u);
  EXPECT_EQ(Records(g_deliveries[2]).size(), 1u);
}

TEST_F(FakeCuptiTest, FlushPeriodDeliversFullBuffersOnlyOnItsTick) {
  g_buffer_size = 1024;  // 4 kernel records
  StartTracing({CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL});
  ASSERT_EQ(cuptiActivityFlushPeriod(400), CUPTI_SUCCESS);
  for (uint32_t i = 1; i <= 5; ++i) {  // one full buffer, one with a single record
    FakeCuptiKernel kernel = Kernel(i);
    fake_cupti_emit_kernel(&kernel);
  }
  // The period overrides CUPTI's heuristics: nothing leaves before the tick.
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_EQ(DeliveryCount(), 0u);
  ASSERT_TRUE(WaitForDeliveries(1, std::chrono::seconds(5)));
  std::this_thread::sleep_for(std::chrono::milliseconds(900));  // two more ticks
  {
    std::lock_guard<std::mutex> lock(g_mu);
    ASSERT_EQ(g_deliveries.size(), 1u) << "a partly filled buffer left on a periodic flush";
    EXPECT_NE(g_deliveries[0].tid, Tid());
  }
  cuptiActivityFlushAll(0);
  EXPECT_EQ(DeliveryCount(), 2u);
}

TEST_F(FakeCuptiTest, IncompleteRecordsWaitForAForcedFlush) {
  StartTracing({CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL});
  FakeCuptiKernel kernel = Kernel(1);
  kernel.incomplete = 1;
  fake_cupti_emit_kernel(&kernel);
  cuptiActivityFlushAll(0);
  EXPECT_EQ(DeliveryCount(), 0u);
  cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  ASSERT_EQ(DeliveryCount(), 1u);
  auto records = AllRecords();
  ASSERT_EQ(records.size(), 1u);
  const auto* k = reinterpret_cast<const CUpti_ActivityKernel10*>(records[0]);
  EXPECT_EQ(k->start, 0u);
  EXPECT_EQ(k->end, 0u);
}

TEST_F(FakeCuptiTest, CompletedRecordsLeaveOnADefaultFlush) {
  StartTracing({CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL});
  FakeCuptiKernel kernel = Kernel(1);
  kernel.incomplete = 1;
  fake_cupti_emit_kernel(&kernel);
  fake_cupti_complete_pending(500, 900);
  cuptiActivityFlushAll(0);
  auto records = AllRecords();
  ASSERT_EQ(records.size(), 1u);
  const auto* k = reinterpret_cast<const CUpti_ActivityKernel10*>(records[0]);
  EXPECT_EQ(k->start, 500u);
  EXPECT_EQ(k->end, 900u);
}

TEST_F(FakeCuptiTest, DroppedRecordsAreCountedAndTheCounterResetsWhenRead) {
  g_refuse = true;
  StartTracing({CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL});
  for (uint32_t i = 1; i <= 4; ++i) {
    FakeCuptiKernel kernel = Kernel(i);
    EXPECT_EQ(fake_cupti_emit_kernel(&kernel), -1);
  }
  fake_cupti_drop_records(3);
  size_t dropped = 0;
  ASSERT_EQ(cuptiActivityGetNumDroppedRecords(nullptr, 0, &dropped), CUPTI_SUCCESS);
  EXPECT_EQ(dropped, 7u);
  ASSERT_EQ(cuptiActivityGetNumDroppedRecords(nullptr, 0, &dropped), CUPTI_SUCCESS);
  EXPECT_EQ(dropped, 0u);
  EXPECT_EQ(cuptiActivityGetNumDroppedRecords(nullptr, 0, nullptr), CUPTI_ERROR_INVALID_PARAMETER);
  FakeCuptiStats stats;
  fake_cupti_get_stats(&stats);
  EXPECT_EQ(stats.records_dropped, 7u);
}

TEST_F(FakeCuptiTest, BuffersArePerThreadByDefaultAndGlobalOnRequest) {
  StartTracing({CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL});
  auto emit_from_two_threads = [] {
    for (int t = 0; t < 2; ++t) {
      std::thread([t] {
        FakeCuptiKernel kernel = Kernel(static_cast<uint32_t>(t + 1));
        fake_cupti_emit_kernel(&kernel);
      }).join();
    }
  };
  emit_from_two_threads();
  EXPECT_EQ(g_requests.load(), 2);
  cuptiActivityFlushAll(0);  // records of threads that have exited are still delivered
  EXPECT_EQ(AllRecords().size(), 2u);

  uint8_t per_thread = 0;
  size_t size = sizeof(per_thread);
  ASSERT_EQ(
      cuptiActivitySetAttribute(CUPTI_ACTIVITY_ATTR_PER_THREAD_ACTIVITY_BUFFER, &size, &per_thread),
      CUPTI_SUCCESS);
  g_requests = 0;
  emit_from_two_threads();
  EXPECT_EQ(g_requests.load(), 1);
}

TEST_F(FakeCuptiTest, AttributesRoundTripAndCheckSizes) {
  uint8_t per_thread = 0;
  size_t size = sizeof(per_thread);
  ASSERT_EQ(
      cuptiActivityGetAttribute(CUPTI_ACTIVITY_ATTR_PER_THREAD_ACTIVITY_BUFFER, &size, &per_thread),
      CUPTI_SUCCESS);
  EXPECT_EQ(per_thread, 1);  // CUDA 13's default
  size_t value = 32 << 20;
  size = sizeof(value);
  ASSERT_EQ(cuptiActivitySetAttribute(CUPTI_ACTIVITY_ATTR_DEVICE_BUFFER_SIZE, &size, &value),
            CUPTI_SUCCESS);
  size_t read = 0;
  size = sizeof(read);
  ASSERT_EQ(cuptiActivityGetAttribute(CUPTI_ACTIVITY_ATTR_DEVICE_BUFFER_SIZE, &size, &read),
            CUPTI_SUCCESS);
  EXPECT_EQ(read, value);
  uint8_t small = 0;
  size = sizeof(small);
  EXPECT_EQ(cuptiActivityGetAttribute(CUPTI_ACTIVITY_ATTR_DEVICE_BUFFER_SIZE, &size, &small),
            CUPTI_ERROR_PARAMETER_SIZE_NOT_SUFFICIENT);
}

TEST_F(FakeCuptiTest, FlushWithoutBufferCallbacksIsAnInvalidOperation) {
  EXPECT_EQ(cuptiActivityFlushAll(0), CUPTI_ERROR_INVALID_OPERATION);
  EXPECT_EQ(cuptiGetLastError(), CUPTI_ERROR_INVALID_OPERATION);
  EXPECT_EQ(cuptiGetLastError(), CUPTI_SUCCESS);  // reset once read
  EXPECT_EQ(cuptiActivityRegisterCallbacks(nullptr, Complete), CUPTI_ERROR_INVALID_PARAMETER);
}

// ---- callbacks ----
struct Seen {
  CUpti_CallbackDomain domain;
  CUpti_CallbackId cbid;
  CUpti_ApiCallbackSite site;
  uint32_t correlation_id;
  uint64_t* correlation_data;
  std::string function_name;
  std::string symbol_name;
};
std::vector<Seen> g_seen;

void CUPTIAPI Record(void*, CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void* data) {
  const auto* info = static_cast<const CUpti_CallbackData*>(data);
  g_seen.push_back({domain, cbid, info->callbackSite, info->correlationId, info->correlationData,
                    info->functionName ? info->functionName : "",
                    info->symbolName ? info->symbolName : ""});
}

TEST_F(FakeCuptiTest, NestedCallsIssueEnterAndExitInOrderWithDistinctIds) {
  g_seen.clear();
  CUpti_SubscriberHandle subscriber = nullptr;
  ASSERT_EQ(cuptiSubscribe(&subscriber, Record, nullptr), CUPTI_SUCCESS);
  ASSERT_EQ(cuptiEnableDomain(1, subscriber, CUPTI_CB_DOMAIN_RUNTIME_API), CUPTI_SUCCESS);
  ASSERT_EQ(cuptiEnableCallback(1, subscriber, CUPTI_CB_DOMAIN_DRIVER_API,
                                CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel),
            CUPTI_SUCCESS);
  FakeCuptiApiFrame runtime, driver;
  uint32_t outer =
      fake_cupti_api_enter(&runtime, CUPTI_CB_DOMAIN_RUNTIME_API,
                           CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, "_Z3foov", nullptr);
  uint32_t inner = fake_cupti_api_enter(&driver, CUPTI_CB_DOMAIN_DRIVER_API,
                                        CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, "_Z3foov", nullptr);
  fake_cupti_api_exit(&driver, 0);
  fake_cupti_api_exit(&runtime, 0);
  // A driver call not enabled: no callback.
  fake_cupti_api_call(CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuMemAlloc_v2, nullptr);

  EXPECT_NE(outer, inner);
  ASSERT_EQ(g_seen.size(), 4u);
  EXPECT_EQ(g_seen[0].site, CUPTI_API_ENTER);
  EXPECT_EQ(g_seen[0].correlation_id, outer);
  EXPECT_EQ(g_seen[0].function_name, "cudaLaunchKernel");
  EXPECT_EQ(g_seen[0].symbol_name, "_Z3foov");
  EXPECT_EQ(g_seen[1].site, CUPTI_API_ENTER);
  EXPECT_EQ(g_seen[1].function_name, "cuLaunchKernel");
  EXPECT_EQ(g_seen[1].correlation_id, inner);
  EXPECT_EQ(g_seen[2].site, CUPTI_API_EXIT);
  EXPECT_EQ(g_seen[2].correlation_id, inner);
  EXPECT_EQ(g_seen[2].correlation_data, g_seen[1].correlation_data);
  EXPECT_EQ(g_seen[3].site, CUPTI_API_EXIT);
  EXPECT_EQ(g_seen[3].correlation_id, outer);
  EXPECT_EQ(g_seen[3].correlation_data, g_seen[0].correlation_data);
  uint32_t enabled = 7;
  ASSERT_EQ(cuptiGetCallbackState(&enabled, subscriber, CUPTI_CB_DOMAIN_DRIVER_API,
                                  CUPTI_DRIVER_TRACE_CBID_cuMemAlloc_v2),
            CUPTI_SUCCESS);
  EXPECT_EQ(enabled, 0u);
}

TEST_F(FakeCuptiTest, OnlyOneSubscriberAndV2NamesTheHolder) {
  CUpti_SubscriberHandle first = nullptr, second = nullptr;
  CUpti_SubscriberParams params{};
  params.structSize = CUpti_SubscriberParams_STRUCT_SIZE;
  params.subscriberName = "gpuperf";
  ASSERT_EQ(cuptiSubscribe_v2(&first, Record, nullptr, &params), CUPTI_SUCCESS);

  char holder[CUPTI_OLD_SUBSCRIBER_NAME_MIN_LEN] = "";
  CUpti_SubscriberParams again{};
  again.structSize = CUpti_SubscriberParams_STRUCT_SIZE;
  again.oldSubscriberName = holder;
  again.oldSubscriberSize = sizeof(holder);
  EXPECT_EQ(cuptiSubscribe_v2(&second, Record, nullptr, &again),
            CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED);
  EXPECT_STREQ(holder, "CUPTI for gpuperf");
  EXPECT_EQ(cuptiSubscribe(&second, Record, nullptr),
            CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED);
  EXPECT_EQ(cuptiGetLastError(), CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED);

  CUpti_SubscriberParams no_size{};
  EXPECT_EQ(cuptiSubscribe_v2(&second, Record, nullptr, &no_size), CUPTI_ERROR_INVALID_PARAMETER);
  ASSERT_EQ(cuptiUnsubscribe(first), CUPTI_SUCCESS);
  EXPECT_EQ(cuptiUnsubscribe(first), CUPTI_ERROR_INVALID_PARAMETER);
  EXPECT_EQ(cuptiSubscribe(&second, Record, nullptr), CUPTI_SUCCESS);
}

TEST_F(FakeCuptiTest, AnotherToolHoldingTheSlotIsReportedByName) {
  ASSERT_EQ(fake_cupti_set_second_subscriber("Nsight Systems"), 0);
  CUpti_SubscriberHandle handle = nullptr;
  char holder[CUPTI_OLD_SUBSCRIBER_NAME_MIN_LEN] = "";
  CUpti_SubscriberParams params{};
  params.structSize = CUpti_SubscriberParams_STRUCT_SIZE;
  params.oldSubscriberName = holder;
  params.oldSubscriberSize = 12;  // truncated, still terminated
  EXPECT_EQ(cuptiSubscribe_v2(&handle, Record, nullptr, &params),
            CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED);
  EXPECT_STREQ(holder, "CUPTI for N");
}

TEST_F(FakeCuptiTest, ApiRecordsFollowTheKindAndThePerCbidSwitches) {
  StartTracing({CUPTI_ACTIVITY_KIND_RUNTIME});
  ASSERT_EQ(cuptiActivityEnableRuntimeApi(CUPTI_RUNTIME_TRACE_CBID_cudaGetDevice_v3020, 0),
            CUPTI_SUCCESS);
  ASSERT_EQ(cuptiActivityEnableDriverApi(CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, 1), CUPTI_SUCCESS);
  fake_cupti_api_call(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaGetDevice_v3020,
                      nullptr);
  fake_cupti_api_call(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaMalloc_v3020,
                      nullptr);
  fake_cupti_api_call(CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, nullptr);
  fake_cupti_api_call(CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuMemAlloc_v2, nullptr);
  cuptiActivityFlushAll(0);
  std::vector<uint32_t> cbids;
  for (const auto* record : AllRecords()) {
    cbids.push_back(reinterpret_cast<const CUpti_ActivityAPI*>(record)->cbid);
  }
  EXPECT_EQ(cbids, (std::vector<uint32_t>{CUPTI_RUNTIME_TRACE_CBID_cudaMalloc_v3020,
                                          CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel}));
}

TEST_F(FakeCuptiTest, ExternalCorrelationRecordsPrecedeTheApiRecord) {
  StartTracing({CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION});
  ASSERT_EQ(cuptiActivityPushExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, 5),
            CUPTI_SUCCESS);
  ASSERT_EQ(cuptiActivityPushExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM1, 6),
            CUPTI_SUCCESS);
  uint32_t id = fake_cupti_api_call(CUPTI_CB_DOMAIN_RUNTIME_API,
                                    CUPTI_RUNTIME_TRACE_CBID_cudaMalloc_v3020, nullptr);
  uint64_t last = 0;
  EXPECT_EQ(cuptiActivityPopExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM1, &last),
            CUPTI_SUCCESS);
  EXPECT_EQ(last, 6u);
  EXPECT_EQ(cuptiActivityPopExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM1, &last),
            CUPTI_ERROR_QUEUE_EMPTY);
  EXPECT_EQ(cuptiActivityPushExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_INVALID, 1),
            CUPTI_ERROR_INVALID_PARAMETER);
  cuptiActivityFlushAll(0);
  auto records = AllRecords();
  ASSERT_EQ(records.size(), 3u);
  const auto* a = reinterpret_cast<const CUpti_ActivityExternalCorrelation*>(records[0]);
  const auto* b = reinterpret_cast<const CUpti_ActivityExternalCorrelation*>(records[1]);
  EXPECT_EQ(a->externalKind, CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0);
  EXPECT_EQ(a->externalId, 5u);
  EXPECT_EQ(b->externalId, 6u);
  EXPECT_EQ(a->correlationId, id);
  EXPECT_EQ(records[2]->kind, CUPTI_ACTIVITY_KIND_RUNTIME);
}

std::atomic<uint64_t> g_clock{1000};
uint64_t CUPTIAPI TestClock() {
  return g_clock += 10;
}

TEST_F(FakeCuptiTest, TimestampCallbackIsTheClockAndLateRegistrationIsCounted) {
  ASSERT_EQ(cuptiActivityRegisterTimestampCallback(TestClock), CUPTI_SUCCESS);
  StartTracing({CUPTI_ACTIVITY_KIND_DRIVER});
  uint64_t now = 0;
  ASSERT_EQ(cuptiGetTimestamp(&now), CUPTI_SUCCESS);
  EXPECT_EQ(now, g_clock.load());
  fake_cupti_api_call(CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuCtxSynchronize,
                      nullptr);
  cuptiActivityFlushAll(0);
  auto records = AllRecords();
  ASSERT_EQ(records.size(), 1u);
  const auto* api = reinterpret_cast<const CUpti_ActivityAPI*>(records[0]);
  EXPECT_GT(api->start, now);
  EXPECT_LE(api->end, g_clock.load());
  FakeCuptiStats stats;
  fake_cupti_get_stats(&stats);
  EXPECT_EQ(stats.timestamp_callback_late, 0u);
  EXPECT_EQ(cuptiActivityRegisterTimestampCallback(TestClock), CUPTI_SUCCESS);
  fake_cupti_get_stats(&stats);
  EXPECT_EQ(stats.timestamp_callback_late, 1u);
  EXPECT_EQ(cuptiActivityRegisterTimestampCallback(nullptr), CUPTI_ERROR_INVALID_PARAMETER);
}

TEST_F(FakeCuptiTest, ThreadIdFollowsTheThreadIdType) {
  StartTracing({CUPTI_ACTIVITY_KIND_RUNTIME});
  fake_cupti_api_call(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaFree_v3020,
                      nullptr);
  ASSERT_EQ(cuptiSetThreadIdType(CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM), CUPTI_SUCCESS);
  fake_cupti_api_call(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaFree_v3020,
                      nullptr);
  CUpti_ActivityThreadIdType type;
  ASSERT_EQ(cuptiGetThreadIdType(&type), CUPTI_SUCCESS);
  EXPECT_EQ(type, CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM);
  cuptiActivityFlushAll(0);
  auto records = AllRecords();
  ASSERT_EQ(records.size(), 2u);
  EXPECT_EQ(reinterpret_cast<const CUpti_ActivityAPI*>(records[0])->threadId,
            static_cast<uint32_t>(reinterpret_cast<uintptr_t>(pthread_self())));
  EXPECT_EQ(reinterpret_cast<const CUpti_ActivityAPI*>(records[1])->threadId, Tid());
}

TEST_F(FakeCuptiTest, ResourceCallbacksCarryTheContext) {
  g_seen.clear();
  static std::vector<std::pair<CUpti_CallbackId, CUcontext>> events;
  events.clear();
  CUpti_SubscriberHandle subscriber = nullptr;
  ASSERT_EQ(cuptiSubscribe(
                &subscriber,
                [](void*, CUpti_CallbackDomain, CUpti_CallbackId cbid, const void* data) {
                  events.push_back({cbid, static_cast<const CUpti_ResourceData*>(data)->context});
                },
                nullptr),
            CUPTI_SUCCESS);
  ASSERT_EQ(cuptiEnableDomain(1, subscriber, CUPTI_CB_DOMAIN_RESOURCE), CUPTI_SUCCESS);
  uint32_t context = fake_cupti_create_context(0);
  fake_cupti_destroy_context(context);
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[0].first, CUPTI_CBID_RESOURCE_CONTEXT_CREATED);
  EXPECT_EQ(events[1].first, CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING);
  uint32_t id = 0;
  ASSERT_EQ(cuptiGetContextId(events[0].second, &id), CUPTI_SUCCESS);
  EXPECT_EQ(id, context);
}

TEST_F(FakeCuptiTest, AForkedChildInheritsPendingBuffersAndCanStillFlush) {
  StartTracing({CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL});
  FakeCuptiKernel kernel = Kernel(1);
  fake_cupti_emit_kernel(&kernel);
  pid_t child = fork();
  if (child == 0) {
    // The child holds a copy of the parent's buffer: flushing it delivers the record again,
    // the duplicate an injection must avoid by not flushing in a forked child.
    cuptiActivityFlushAll(0);
    _exit(static_cast<int>(DeliveryCount()));
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 1);
  cuptiActivityFlushAll(0);
  EXPECT_EQ(DeliveryCount(), 1u);
}

TEST_F(FakeCuptiTest, FinalizeDetachesEverything) {
  CUpti_SubscriberHandle subscriber = nullptr;
  ASSERT_EQ(cuptiSubscribe(&subscriber, Record, nullptr), CUPTI_SUCCESS);
  StartTracing({CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL});
  ASSERT_EQ(cuptiFinalize(), CUPTI_SUCCESS);
  FakeCuptiKernel kernel = Kernel(1);
  EXPECT_EQ(fake_cupti_emit_kernel(&kernel), 0);
  EXPECT_EQ(cuptiSubscribe(&subscriber, Record, nullptr), CUPTI_SUCCESS);
}

TEST_F(FakeCuptiTest, VersionAndNames) {
  uint32_t version = 0;
  ASSERT_EQ(cuptiGetVersion(&version), CUPTI_SUCCESS);
  EXPECT_EQ(version, static_cast<uint32_t>(CUPTI_API_VERSION));
  const char* name = nullptr;
  ASSERT_EQ(cuptiGetCallbackName(CUPTI_CB_DOMAIN_RUNTIME_API,
                                 CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, &name),
            CUPTI_SUCCESS);
  EXPECT_STREQ(name, "cudaLaunchKernel_v7000");
  EXPECT_STREQ(fake_cupti_function_name(CUPTI_CB_DOMAIN_RUNTIME_API,
                                        CUPTI_RUNTIME_TRACE_CBID___cudaLaunchKernel_v13000),
               "__cudaLaunchKernel");
  EXPECT_STREQ(
      fake_cupti_function_name(CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuMemcpyHtoD_v2),
      "cuMemcpyHtoD_v2");
  ASSERT_EQ(cuptiGetResultString(CUPTI_ERROR_MAX_LIMIT_REACHED, &name), CUPTI_SUCCESS);
  EXPECT_STREQ(name, "CUPTI_ERROR_MAX_LIMIT_REACHED");
}

// ---- conformance with the real libcupti (no driver needed for these calls) ----
class RealCuptiTest : public FakeCuptiTest {
 protected:
  void SetUp() override {
    FakeCuptiTest::SetUp();
    std::string path = std::string(GPUPERF_CUDA_ROOT) + "/lib64/libcupti.so.13";
    // Loaded by path and RTLD_LOCAL next to the fake (same SONAME, different file): the real
    // library is linked -Bsymbolic, so its own calls stay inside it.
    real_ = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (real_ == nullptr) GTEST_SKIP() << "no real libcupti: " << dlerror();
  }
  template <typename F>
  F* Real(const char* name) {
    auto* f = reinterpret_cast<F*>(dlsym(real_, name));
    EXPECT_NE(f, nullptr) << name;
    return f;
  }
  void* real_ = nullptr;
};

TEST_F(RealCuptiTest, RealGetNextRecordWalksTheFakesBuffers) {
  auto* real_next = Real<decltype(cuptiActivityGetNextRecord)>("cuptiActivityGetNextRecord");
  ASSERT_NE(real_next, nullptr);
  StartTracing({CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_MEMCPY,
                CUPTI_ACTIVITY_KIND_MEMSET, CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_ACTIVITY_KIND_DRIVER,
                CUPTI_ACTIVITY_KIND_SYNCHRONIZATION, CUPTI_ACTIVITY_KIND_MEMORY2,
                CUPTI_ACTIVITY_KIND_MARKER, CUPTI_ACTIVITY_KIND_OVERHEAD,
                CUPTI_ACTIVITY_KIND_DEVICE, CUPTI_ACTIVITY_KIND_CONTEXT,
                CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION, CUPTI_ACTIVITY_KIND_GRAPH_TRACE});
  FakeCuptiKernel kernel = Kernel(1);
  fake_cupti_emit_kernel(&kernel);
  FakeCuptiMemcpy copy{};
  fake_cupti_emit_memcpy(&copy);
  FakeCuptiMemset set{};
  fake_cupti_emit_memset(&set);
  fake_cupti_api_call(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaFree_v3020,
                      nullptr);
  fake_cupti_api_call(CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuMemFree_v2, nullptr);
  fake_cupti_emit_sync(1, CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_CONTEXT_SYNCHRONIZE, 1, 0, 1, 2);
  fake_cupti_emit_memory(1, CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_RELEASE,
                         CUPTI_ACTIVITY_MEMORY_KIND_DEVICE, 1, 2, 0, 1, 3);
  fake_cupti_emit_marker(CUPTI_ACTIVITY_FLAG_MARKER_INSTANTANEOUS, 1, "m", "d", 4);
  fake_cupti_emit_overhead(CUPTI_ACTIVITY_OVERHEAD_DRIVER_COMPILER, 1, 2, 0);
  fake_cupti_emit_device(0, "gpu");
  fake_cupti_emit_context(1, 0);
  fake_cupti_emit_external_correlation(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM2, 1, 2);
  fake_cupti_emit_graph_trace(1, 1, 0, 1, 0, 1, 2);
  cuptiActivityFlushAll(0);
  ASSERT_EQ(DeliveryCount(), 1u);
  auto& delivery = g_deliveries[0];
  auto ours = Records(delivery);
  ASSERT_EQ(ours.size(), 13u);
  std::vector<const CUpti_Activity*> theirs;
  CUpti_Activity* record = nullptr;
  CUptiResult status;
  while ((status = real_next(delivery.bytes.data(), delivery.bytes.size(), &record)) ==
         CUPTI_SUCCESS) {
    theirs.push_back(record);
  }
  EXPECT_EQ(status, CUPTI_ERROR_MAX_LIMIT_REACHED);
  EXPECT_EQ(theirs, ours);
}

TEST_F(RealCuptiTest, ResultStringsMatch) {
  auto* real = Real<decltype(cuptiGetResultString)>("cuptiGetResultString");
  ASSERT_NE(real, nullptr);
  for (int code = 0; code <= 1100; ++code) {
    const char* a = nullptr;
    const char* b = nullptr;
    CUptiResult ra = cuptiGetResultString(static_cast<CUptiResult>(code), &a);
    CUptiResult rb = real(static_cast<CUptiResult>(code), &b);
    EXPECT_EQ(ra, rb) << code;
    EXPECT_STREQ(a, b) << code;
  }
}

TEST_F(RealCuptiTest, CallbackNamesMatch) {
  auto* real = Real<decltype(cuptiGetCallbackName)>("cuptiGetCallbackName");
  ASSERT_NE(real, nullptr);
  for (auto [domain, limit] :
       {std::pair{CUPTI_CB_DOMAIN_RUNTIME_API, 530u}, std::pair{CUPTI_CB_DOMAIN_DRIVER_API, 820u},
        std::pair{CUPTI_CB_DOMAIN_RESOURCE, 30u}}) {
    for (uint32_t cbid = 0; cbid <= limit; ++cbid) {
      const char* a = nullptr;
      const char* b = nullptr;
      CUptiResult ra = cuptiGetCallbackName(domain, cbid, &a);
      CUptiResult rb = real(domain, cbid, &b);
      ASSERT_EQ(ra, rb) << "domain " << domain << " cbid " << cbid;
      if (ra == CUPTI_SUCCESS) {
        EXPECT_STREQ(a, b) << "domain " << domain << " cbid " << cbid;
      }
    }
  }
}

TEST_F(RealCuptiTest, ParameterChecksMatch) {
  auto* subscribe_v2 = Real<decltype(cuptiSubscribe_v2)>("cuptiSubscribe_v2");
  auto* dropped =
      Real<decltype(cuptiActivityGetNumDroppedRecords)>("cuptiActivityGetNumDroppedRecords");
  auto* register_callbacks =
      Real<decltype(cuptiActivityRegisterCallbacks)>("cuptiActivityRegisterCallbacks");
  auto* register_clock = Real<decltype(cuptiActivityRegisterTimestampCallback)>(
      "cuptiActivityRegisterTimestampCallback");
  auto* push = Real<decltype(cuptiActivityPushExternalCorrelationId)>(
      "cuptiActivityPushExternalCorrelationId");
  auto* next = Real<decltype(cuptiActivityGetNextRecord)>("cuptiActivityGetNextRecord");
  ASSERT_TRUE(subscribe_v2 && dropped && register_callbacks && register_clock && push && next);
  CUpti_SubscriberHandle handle = nullptr;
  CUpti_SubscriberParams no_size{};
  EXPECT_EQ(cuptiSubscribe_v2(&handle, Record, nullptr, &no_size),
            subscribe_v2(&handle, Record, nullptr, &no_size));
  EXPECT_EQ(cuptiActivityGetNumDroppedRecords(nullptr, 0, nullptr), dropped(nullptr, 0, nullptr));
  EXPECT_EQ(cuptiActivityRegisterCallbacks(nullptr, Complete),
            register_callbacks(nullptr, Complete));
  EXPECT_EQ(cuptiActivityRegisterTimestampCallback(nullptr), register_clock(nullptr));
  auto bad_kind = static_cast<CUpti_ExternalCorrelationKind>(99);
  EXPECT_EQ(cuptiActivityPushExternalCorrelationId(bad_kind, 1), push(bad_kind, 1));
  alignas(8) uint8_t zeros[64] = {};
  CUpti_Activity* a = nullptr;
  CUpti_Activity* b = nullptr;
  EXPECT_EQ(cuptiActivityGetNextRecord(zeros, sizeof(zeros), &a), next(zeros, sizeof(zeros), &b));
  EXPECT_EQ(cuptiActivityGetNextRecord(zeros, 0, &a), next(zeros, 0, &b));
  EXPECT_EQ(cuptiActivityGetNextRecord(nullptr, 8, &a), next(nullptr, 8, &b));
}

}  // namespace
