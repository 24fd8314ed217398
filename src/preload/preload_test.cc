// libgpuperf_preload.so in front of a libcupti that is not in the global scope (loaded
// RTLD_LOCAL, as a dlopen'ed libtorch_cuda.so brings it in): the real functions are still
// found, results pass through unchanged, and only a refusal gpuperf caused is counted and said.
// This binary links the preload library, and dlopens the fake libcupti (tests/fakes) itself.
#include <cupti_callbacks.h>
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "preload/preload_abi.h"

namespace {

void CUPTIAPI Ignore(void*, CUpti_CallbackDomain, CUpti_CallbackId, const void*) {}

unsigned long long Refusals() {
  const auto* counter = static_cast<const std::atomic<unsigned long long>*>(
      dlsym(RTLD_DEFAULT, GPUPERF_PRELOAD_REFUSALS_SYMBOL));
  return counter != nullptr ? counter->load() : ~0ull;
}

// What the code under test writes to stderr while the object lives.
class StderrCapture {
 public:
  StderrCapture() {
    std::fflush(stderr);
    saved_ = dup(STDERR_FILENO);
    file_ = std::tmpfile();
    dup2(fileno(file_), STDERR_FILENO);
  }
  ~StderrCapture() { Restore(); }
  std::string Text() {
    Restore();
    std::string text;
    std::rewind(file_);
    for (int c; (c = std::fgetc(file_)) != EOF;) text.push_back(static_cast<char>(c));
    return text;
  }

 private:
  void Restore() {
    if (saved_ < 0) return;
    std::fflush(stderr);
    dup2(saved_, STDERR_FILENO);
    close(saved_);
    saved_ = -1;
  }
  int saved_ = -1;
  FILE* file_ = nullptr;
};

int Count(const std::string& text, const std::string& needle) {
  int n = 0;
  for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
  return n;
}

class PreloadLookup : public ::testing::Test {
 protected:
  void LoadCuptiLocally() {
    cupti_ = dlopen(FAKE_CUPTI_PATH, RTLD_NOW | RTLD_LOCAL);
    ASSERT_NE(cupti_, nullptr) << dlerror();
    // Not in the global scope: RTLD_NEXT cannot find it, the fallback must.
    ASSERT_EQ(dlsym(RTLD_DEFAULT, "cuptiUnsubscribe"), nullptr);
  }
  CUptiResult SubscribeAsGpuperf(CUpti_SubscriberHandle* handle) {
    CUpti_SubscriberParams params = {};
    params.structSize = CUpti_SubscriberParams_STRUCT_SIZE;
    params.subscriberName = "gpuperf";
    return cuptiSubscribe_v2(handle, Ignore, nullptr, &params);
  }
  void* cupti_ = nullptr;
};

TEST_F(PreloadLookup, WithoutCuptiLoadedItAnswersAnErrorAndDoesNotCrash) {
  CUpti_SubscriberHandle handle = nullptr;
  EXPECT_EQ(cuptiSubscribe(&handle, Ignore, nullptr), CUPTI_ERROR_NOT_INITIALIZED);
  EXPECT_EQ(cuptiSubscribe_v2(&handle, Ignore, nullptr, nullptr), CUPTI_ERROR_NOT_INITIALIZED);
  EXPECT_EQ(Refusals(), 0u);
  // Found once it is loaded: a miss is not remembered.
  LoadCuptiLocally();
  EXPECT_EQ(cuptiSubscribe(&handle, Ignore, nullptr), CUPTI_SUCCESS);
  EXPECT_NE(handle, nullptr);
}

TEST_F(PreloadLookup, RefusalWhileGpuperfHoldsIsCountedAndSaidOnce) {
  LoadCuptiLocally();
  CUpti_SubscriberHandle gpuperf = nullptr;
  ASSERT_EQ(SubscribeAsGpuperf(&gpuperf), CUPTI_SUCCESS);
  StderrCapture capture;
  CUpti_SubscriberHandle other = nullptr;
  EXPECT_EQ(cuptiSubscribe(&other, Ignore, nullptr),
            CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED);
  EXPECT_EQ(cuptiSubscribe(&other, Ignore, nullptr),
            CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED);
  CUpti_SubscriberParams params = {};
  params.structSize = CUpti_SubscriberParams_STRUCT_SIZE;
  params.subscriberName = "kineto";
  EXPECT_EQ(cuptiSubscribe_v2(&other, Ignore, nullptr, &params),
            CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED);
  const std::string text = capture.Text();
  EXPECT_EQ(Refusals(), 3u);
  EXPECT_EQ(Count(text, "\n"), 1) << text;
  const std::string prefix = "gpuperf[" + std::to_string(getpid()) + "]: another CUPTI client";
  EXPECT_EQ(text.rfind(prefix, 0), 0u) << text;
  EXPECT_NE(text.find("use one profiler at a time"), std::string::npos) << text;
  // The handle given back is the real library's: its own cuptiUnsubscribe takes it.
  auto unsubscribe =
      reinterpret_cast<CUptiResult (*)(CUpti_SubscriberHandle)>(dlsym(cupti_, "cuptiUnsubscribe"));
  ASSERT_NE(unsubscribe, nullptr);
  EXPECT_EQ(unsubscribe(gpuperf), CUPTI_SUCCESS);
}

TEST_F(PreloadLookup, QuietLogCountsWithoutSaying) {
  LoadCuptiLocally();
  setenv("GPUPERF_LOG", "quiet", 1);
  CUpti_SubscriberHandle gpuperf = nullptr, other = nullptr;
  ASSERT_EQ(SubscribeAsGpuperf(&gpuperf), CUPTI_SUCCESS);
  StderrCapture capture;
  EXPECT_EQ(cuptiSubscribe(&other, Ignore, nullptr),
            CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED);
  EXPECT_EQ(capture.Text(), "");
  EXPECT_EQ(Refusals(), 1u);
}

TEST_F(PreloadLookup, RefusalsGpuperfDidNotCauseAreNotClaimed) {
  LoadCuptiLocally();
  StderrCapture capture;
  // The program's own client first: gpuperf is refused (its own log says so), then another.
  CUpti_SubscriberHandle own = nullptr, gpuperf = nullptr, other = nullptr;
  ASSERT_EQ(cuptiSubscribe(&own, Ignore, nullptr), CUPTI_SUCCESS);
  EXPECT_EQ(SubscribeAsGpuperf(&gpuperf), CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED);
  EXPECT_EQ(cuptiSubscribe(&other, Ignore, nullptr),
            CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED);
  EXPECT_EQ(capture.Text(), "");
  EXPECT_EQ(Refusals(), 0u);
}

}  // namespace
