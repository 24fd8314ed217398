// Readable names of the record enumerations, for dumps, reports and exports.
#pragma once

#include <string_view>

#include "gpuperf/records.h"

namespace gpuperf {

std::string_view EnumName(ApiDomain value);
std::string_view EnumName(MemcpyKind value);
std::string_view EnumName(MemoryKind value);
std::string_view EnumName(SyncKind value);
std::string_view EnumName(MemoryOp value);
std::string_view EnumName(NvtxKind value);
std::string_view EnumName(OverheadKind value);
std::string_view EnumName(OffCpuReason value);
std::string_view EnumName(MetricRangeKind value);
std::string_view EnumName(PowerSource value);

}  // namespace gpuperf
