// Returns the FAKE_CUPTI_FAIL result of the enclosing entry point `name`, if it has one.
#pragma once

#include "fake_cupti/hw_state.h"

#define FAKE_CUPTI_INJECTED(name) \
  if (CUptiResult injected = fake_cupti::Injected(#name); injected != CUPTI_SUCCESS) return injected
