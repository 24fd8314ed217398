// Reading fields of a report document back (diff baselines): a field that is missing or of
// the wrong type reads as zero, empty or no rows, as diff has always treated it. Shared by
// every reader of a part of the document (report_json_read.cc, report_hardware_json.cc).
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace gpuperf::json_fields {

using Json = nlohmann::ordered_json;

// j[key], or null when j is not an object or has no such key.
inline const Json& Field(const Json& j, const char* key) {
  static const Json kNull;
  if (!j.is_object()) return kNull;
  auto it = j.find(key);
  return it == j.end() ? kNull : *it;
}

template <class T>
T Number(const Json& j, const char* key) {
  const Json& v = Field(j, key);
  return v.is_number() ? v.get<T>() : T{};
}

inline std::string Text(const Json& j, const char* key) {
  const Json& v = Field(j, key);
  return v.is_string() ? v.get<std::string>() : std::string();
}

// The elements of an array field (none when it is missing or not an array).
inline const Json& Rows(const Json& j, const char* key) {
  static const Json kEmpty = Json::array();
  const Json& v = Field(j, key);
  return v.is_array() ? v : kEmpty;
}

}  // namespace gpuperf::json_fields
