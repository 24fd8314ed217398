#include "cli/quantity_options.h"

#include <cstdio>
#include <functional>
#include <utility>

namespace gpuperf::cli {
namespace {

// A transform: the typed text becomes the number CLI11 then stores; a bad one becomes
// CLI11's "NAME: message" error (our parsers leave the name to it).
template <class T>
CLI::Option* Transform(CLI::Option* option, const char* type_name,
                       std::function<Result<T>(std::string_view)> parse,
                       std::function<std::string(T)> text) {
  option->type_name(type_name);
  return option->transform(CLI::Validator(
      [parse = std::move(parse), text = std::move(text)](std::string& value) -> std::string {
        Result<T> parsed = parse(value);
        if (!parsed.ok()) return parsed.status().message();
        value = text(*parsed);
        return "";
      },
      ""));
}

std::string Whole(uint64_t value) {
  return std::to_string(value);
}

}  // namespace

CLI::Option* TakesDuration(CLI::Option* option, uint64_t unit_ns, const DurationSpec& spec) {
  return Transform<uint64_t>(
      option, "DURATION", [spec](std::string_view text) { return ParseDurationNs("", text, spec); },
      [unit_ns](uint64_t ns) { return Whole(CeilDiv(ns, unit_ns)); });
}

CLI::Option* TakesSize(CLI::Option* option, uint64_t unit_bytes, const SizeSpec& spec) {
  return Transform<uint64_t>(
      option, "SIZE", [spec](std::string_view text) { return ParseBytes("", text, spec); },
      [unit_bytes](uint64_t bytes) { return Whole(CeilDiv(bytes, unit_bytes)); });
}

CLI::Option* TakesCount(CLI::Option* option, const CountSpec& spec) {
  return Transform<uint64_t>(
      option, "N", [spec](std::string_view text) { return ParseCount("", text, spec); }, Whole);
}

CLI::Option* TakesPercent(CLI::Option* option, const PercentSpec& spec) {
  return Transform<double>(
      option, "PERCENT", [spec](std::string_view text) { return ParsePercent("", text, spec); },
      [](double percent) {
        char text[32];
        std::snprintf(text, sizeof(text), "%.17g", percent);
        return std::string(text);
      });
}

}  // namespace gpuperf::cli
