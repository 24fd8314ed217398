// The edge between CUPTI and gpuperf: CUpti_Activity* records in, our plain records
// out. Everything else in gpuperf is CUPTI-free.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <unordered_map>

#include "inject/name_table.h"
#include "inject/record_batch.h"

namespace gpuperf::inject {

struct TranslateCounts {
  uint64_t records = 0;
  uint64_t incomplete = 0;    // no timestamps: never completed (forced flush)
  uint64_t untranslated = 0;  // kinds we do not keep
};

class Translator {
 public:
  // `resolve_name` maps a name pointer found in a record to readable text. In a live
  // process it is the identity; replaying saved buffers maps recorded pointers to the
  // strings saved beside them.
  using NameResolver = std::function<const char*(const char*)>;

  Translator(uint32_t pid, NameTable& names, NameResolver resolve_name = nullptr)
      : pid_(pid), names_(names), resolve_name_(std::move(resolve_name)) {}

  // Translates every record of one CUPTI buffer into `batch`. Not thread-safe: callers
  // serialize (CUPTI may complete buffers on several threads).
  TranslateCounts TranslateBuffer(uint8_t* buffer, size_t valid_size, RecordBatch& batch);

  // Name of a runtime (domain 1) / driver (domain 2) API by callback id:
  // "cudaLaunchKernel". Requires the NameTable lock (names.Lock()).
  StringId ApiName(uint32_t domain, uint32_t cbid);

 private:
  struct OpenMarker {
    uint64_t start_ns;
    StringId name;
    StringId domain;
    uint32_t tid;
  };
  void ReserveForBuffer(uint8_t* buffer, size_t valid_size, RecordBatch& batch);
  void Translate(const void* record, RecordBatch& batch, TranslateCounts& counts);
  StringId Name(const char* text);

  uint32_t pid_;
  NameTable& names_;
  NameResolver resolve_name_;
  std::unordered_map<uint32_t, OpenMarker> open_markers_;  // NVTX ranges by marker id
  std::unordered_map<uint64_t, StringId> api_names_;       // (domain << 32 | cbid)
};

// "cudaLaunchKernel_v7000" -> "cudaLaunchKernel": CUPTI appends the version in which
// an API appeared, which users never type.
std::string CleanApiName(const char* name);

// The same on a view: drops one trailing "_v<digits>".
std::string_view StripVersionSuffix(std::string_view name);

}  // namespace gpuperf::inject
