// Decoding our protobuf outputs in tests: protoc --decode against a schema in tests/proto
// (written from the formats' public specifications), and its text output parsed into a
// tree that tests can query.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace gpuperf::testing {

// protoc's text output, parsed into a tree.
struct Node {
  std::multimap<std::string, std::string> fields;
  std::multimap<std::string, Node> children;

  std::string Get(const std::string& name, const std::string& fallback = "") const {
    auto it = fields.find(name);
    return it == fields.end() ? fallback : it->second;
  }
  uint64_t Uint(const std::string& name) const { return std::stoull(Get(name, "0")); }
  bool Has(const std::string& name) const { return fields.count(name) || children.count(name); }
  const Node* Child(const std::string& name) const {
    auto it = children.find(name);
    return it == children.end() ? nullptr : &it->second;
  }
  std::vector<const Node*> All(const std::string& name) const {
    std::vector<const Node*> out;
    for (auto [it, end] = children.equal_range(name); it != end; ++it) out.push_back(&it->second);
    return out;
  }
  std::vector<std::string> Values(const std::string& name) const {
    std::vector<std::string> out;
    for (auto [it, end] = fields.equal_range(name); it != end; ++it) out.push_back(it->second);
    return out;
  }
};

Node ParseTextFormat(const std::string& text);

// `bytes` decoded as `message` of tests/proto/`proto_file` by protoc, in text format; a
// failed decode fails the calling test.
std::string ProtocDecode(const std::string& bytes, const std::string& proto_file,
                         const std::string& message);

// A Perfetto trace with its zstd bundles (TracePacket.zstd_compressed_packets) replaced
// by the packets they hold, as trace processor reads them; a damaged bundle fails the
// calling test.
std::string UnpackPerfettoTrace(const std::string& bytes);

}  // namespace gpuperf::testing
