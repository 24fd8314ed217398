// The CUPTI callback API: one subscriber at a time, per-domain/per-cbid enable switches.
#include <cupti.h>

#include <algorithm>
#include <cstring>

#include "fake_cupti/fake_cupti.h"
#include "fake_cupti/state.h"

using fake_cupti::Fail;
using fake_cupti::G;
using fake_cupti::kMaxCbid;

namespace {

CUpti_Subscriber_st* NewSubscriber(CUpti_CallbackFunc callback, void* userdata, const char* name) {
  auto* subscriber = new CUpti_Subscriber_st();
  subscriber->callback = callback;
  subscriber->userdata = userdata;
  // "CUPTI adds a 10 byte prefix" and keeps at most CUPTI_SUBSCRIBER_NAME_MAX_LEN of the name.
  std::string given = name != nullptr ? name : "";
  if (given.size() > CUPTI_SUBSCRIBER_NAME_MAX_LEN) given.resize(CUPTI_SUBSCRIBER_NAME_MAX_LEN);
  subscriber->name = "CUPTI for " + given;
  for (auto& table : subscriber->enabled) {
    table.reset(new std::atomic<uint8_t>[kMaxCbid]);
    for (uint32_t i = 0; i < kMaxCbid; ++i) table[i] = 0;
  }
  return subscriber;
}

// Installs `subscriber` unless the slot is taken; on failure reports the holder's name.
CUptiResult Install(CUpti_Subscriber_st* subscriber, CUpti_SubscriberParams* params) {
  fake_cupti::State& g = G();
  g.counters.subscribe_calls++;
  CUpti_Subscriber_st* expected = nullptr;
  if (g.subscriber.compare_exchange_strong(expected, subscriber)) return CUPTI_SUCCESS;
  g.counters.subscribe_rejected++;
  if (params != nullptr && params->oldSubscriberName != nullptr && params->oldSubscriberSize > 0) {
    size_t n = std::min(expected->name.size(), params->oldSubscriberSize - 1);
    std::memcpy(params->oldSubscriberName, expected->name.data(), n);
    params->oldSubscriberName[n] = '\0';
  }
  delete subscriber;
  return Fail(CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED);
}

bool ValidHandle(CUpti_SubscriberHandle subscriber) {
  return subscriber != nullptr && subscriber == G().subscriber.load();
}

bool ValidDomain(CUpti_CallbackDomain domain) {
  return domain > CUPTI_CB_DOMAIN_INVALID && domain < CUPTI_CB_DOMAIN_SIZE;
}

}  // namespace

extern "C" {

CUptiResult CUPTIAPI cuptiSubscribe(CUpti_SubscriberHandle* subscriber, CUpti_CallbackFunc callback,
                                    void* userdata) {
  if (subscriber == nullptr) return Fail(CUPTI_ERROR_INVALID_PARAMETER);
  CUpti_Subscriber_st* created = NewSubscriber(callback, userdata, nullptr);
  CUptiResult result = Install(created, nullptr);
  if (result == CUPTI_SUCCESS) *subscriber = created;
  return result;
}

CUptiResult CUPTIAPI cuptiSubscribe_v2(CUpti_SubscriberHandle* subscriber,
                                       CUpti_CallbackFunc callback, void* userdata,
                                       CUpti_SubscriberParams* params) {
  if (subscriber == nullptr) return Fail(CUPTI_ERROR_INVALID_PARAMETER);
  if (params != nullptr && params->structSize == 0) return Fail(CUPTI_ERROR_INVALID_PARAMETER);
  CUpti_Subscriber_st* created =
      NewSubscriber(callback, userdata, params != nullptr ? params->subscriberName : nullptr);
  CUptiResult result = Install(created, params);
  if (result == CUPTI_SUCCESS) *subscriber = created;
  return result;
}

CUptiResult CUPTIAPI cuptiUnsubscribe(CUpti_SubscriberHandle subscriber) {
  if (!ValidHandle(subscriber)) return Fail(CUPTI_ERROR_INVALID_PARAMETER);
  CUpti_Subscriber_st* expected = subscriber;
  if (!G().subscriber.compare_exchange_strong(expected, nullptr)) {
    return Fail(CUPTI_ERROR_INVALID_PARAMETER);
  }
  // Not freed: a callback may still be running on another thread with this handle.
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiGetCallbackState(uint32_t* enable, CUpti_SubscriberHandle subscriber,
                                           CUpti_CallbackDomain domain, CUpti_CallbackId cbid) {
  if (enable == nullptr || !ValidHandle(subscriber) || !ValidDomain(domain) || cbid >= kMaxCbid) {
    return Fail(CUPTI_ERROR_INVALID_PARAMETER);
  }
  *enable = subscriber->enabled[domain][cbid].load();
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiEnableCallback(uint32_t enable, CUpti_SubscriberHandle subscriber,
                                         CUpti_CallbackDomain domain, CUpti_CallbackId cbid) {
  if (!ValidHandle(subscriber) || !ValidDomain(domain) || cbid >= kMaxCbid) {
    return Fail(CUPTI_ERROR_INVALID_PARAMETER);
  }
  const bool was_on = subscriber->enabled[domain][cbid].exchange(enable != 0);
  // Measured on the H200 (CUDA 13.0, driver 580; tests/gpu/cupti_cycle.c): a runtime or
  // driver callback switched off by id, and cuptiFinalize later, crashes a PyTorch process
  // (segfault or heap corruption within a few cycles), even through another subscriber in
  // between; switched on by id and left on, or by whole domains, it does not. Kept until the
  // finalize, and counted there.
  if (was_on && enable == 0 &&
      (domain == CUPTI_CB_DOMAIN_RUNTIME_API || domain == CUPTI_CB_DOMAIN_DRIVER_API)) {
    G().api_callback_switched_off = true;
  }
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiEnableDomain(uint32_t enable, CUpti_SubscriberHandle subscriber,
                                       CUpti_CallbackDomain domain) {
  if (!ValidHandle(subscriber) || !ValidDomain(domain)) {
    return Fail(CUPTI_ERROR_INVALID_PARAMETER);
  }
  for (uint32_t cbid = 0; cbid < kMaxCbid; ++cbid) subscriber->enabled[domain][cbid] = enable != 0;
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiEnableAllDomains(uint32_t enable, CUpti_SubscriberHandle subscriber) {
  if (!ValidHandle(subscriber)) return Fail(CUPTI_ERROR_INVALID_PARAMETER);
  for (int domain = CUPTI_CB_DOMAIN_INVALID + 1; domain < CUPTI_CB_DOMAIN_SIZE; ++domain) {
    cuptiEnableDomain(enable, subscriber, static_cast<CUpti_CallbackDomain>(domain));
  }
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiSupportedDomains(size_t* domain_count, CUpti_DomainTable* domain_table) {
  static CUpti_CallbackDomain kDomains[] = {CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_CB_DOMAIN_RUNTIME_API,
                                            CUPTI_CB_DOMAIN_RESOURCE,   CUPTI_CB_DOMAIN_SYNCHRONIZE,
                                            CUPTI_CB_DOMAIN_NVTX,       CUPTI_CB_DOMAIN_STATE};
  if (domain_count == nullptr || domain_table == nullptr) {
    return Fail(CUPTI_ERROR_INVALID_PARAMETER);
  }
  *domain_count = sizeof(kDomains) / sizeof(kDomains[0]);
  *domain_table = kDomains;
  return CUPTI_SUCCESS;
}

int fake_cupti_set_second_subscriber(const char* name) {
  CUpti_Subscriber_st* foreign = NewSubscriber(nullptr, nullptr, name);
  foreign->foreign = true;
  CUpti_Subscriber_st* expected = nullptr;
  if (G().subscriber.compare_exchange_strong(expected, foreign)) return 0;
  delete foreign;
  return -1;
}

}  // extern "C"
