// How gpuperf writes JSON. Strings are made valid UTF-8 by the rule of base/text_escape.h
// (a byte that is not UTF-8 becomes \xNN text), so recorded bytes can neither make the JSON
// library throw nor the document invalid; and the document's text carries no control
// character raw: C0, DEL, C1 and the other characters the display form hides are written as
// \uXXXX, so JSON on a terminal cannot steer it.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <utility>

#include "base/text_escape.h"

namespace gpuperf {

// Appends `bytes` as a JSON string literal (quotes included).
void AppendJsonString(std::string& out, std::string_view bytes);

// Rewrites the characters of `json_text` (valid UTF-8, as the JSON library writes it) that
// the display form hides, outside ASCII, as \uXXXX. They can only be inside strings.
void EscapeHiddenCharacters(std::string& json_text);

template <class Json>
void MakeJsonStringsUtf8(Json& value) {
  std::string storage;
  if (value.is_string()) {
    auto& text = value.template get_ref<std::string&>();
    if (EscapedView(text, TextForm::kUtf8, storage).data() != text.data()) text = storage;
  } else if (value.is_array()) {
    for (Json& element : value) MakeJsonStringsUtf8(element);
  } else if (value.is_object()) {
    bool keys_valid = true;
    for (auto item : value.items()) {
      MakeJsonStringsUtf8(item.value());
      const std::string& key = item.key();
      keys_valid = keys_valid && EscapedView(key, TextForm::kUtf8, storage).data() == key.data();
    }
    if (keys_valid) return;
    Json fixed = Json::object();
    for (auto item : value.items()) fixed[Utf8Text(item.key())] = std::move(item.value());
    value = std::move(fixed);
  }
}

// `doc` as text, `indent` spaces per level (-1: one line), without a final newline. Never
// throws.
template <class Json>
std::string DumpJson(Json doc, int indent = 2) {
  MakeJsonStringsUtf8(doc);
  // Every string is valid now; `replace` only makes sure no exception could ever escape.
  std::string text = doc.dump(indent, ' ', false, Json::error_handler_t::replace);
  EscapeHiddenCharacters(text);
  return text;
}

}  // namespace gpuperf
