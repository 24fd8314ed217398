#include "export/parquet/thrift_compact.h"

namespace gpuperf::parquet {

void ThriftWriter::Varint(uint64_t v) {
  while (v >= 0x80) {
    out_.push_back(static_cast<char>((v & 0x7F) | 0x80));
    v >>= 7;
  }
  out_.push_back(static_cast<char>(v));
}

void ThriftWriter::FieldHeader(int16_t id, ThriftType type) {
  const int delta = id - last_id_;
  if (delta > 0 && delta <= 15) {
    out_.push_back(static_cast<char>((delta << 4) | static_cast<uint8_t>(type)));
  } else {
    out_.push_back(static_cast<char>(type));
    Varint(ZigZag(id));
  }
  last_id_ = id;
}

void ThriftWriter::Integer(int16_t id, ThriftType type, int64_t value) {
  FieldHeader(id, type);
  Varint(ZigZag(value));
}

void ThriftWriter::Bool(int16_t id, bool value) {
  // A boolean field carries its value in the header's type.
  FieldHeader(id, value ? ThriftType::kBoolTrue : ThriftType::kBoolFalse);
}

void ThriftWriter::Binary(int16_t id, std::string_view bytes) {
  FieldHeader(id, ThriftType::kBinary);
  ListBinary(bytes);
}

void ThriftWriter::ListBinary(std::string_view bytes) {
  Varint(bytes.size());
  out_.append(bytes);
}

void ThriftWriter::BeginStruct(int16_t id) {
  FieldHeader(id, ThriftType::kStruct);
  BeginListStruct();
}

void ThriftWriter::BeginList(int16_t id, ThriftType element, size_t size) {
  FieldHeader(id, ThriftType::kList);
  if (size < 15) {
    out_.push_back(static_cast<char>((size << 4) | static_cast<uint8_t>(element)));
  } else {
    out_.push_back(static_cast<char>(0xF0 | static_cast<uint8_t>(element)));
    Varint(size);
  }
}

void ThriftWriter::BeginListStruct() {
  outer_ids_.push_back(last_id_);
  last_id_ = 0;
}

void ThriftWriter::End() {
  out_.push_back(0);  // stop field
  if (!outer_ids_.empty()) {
    last_id_ = outer_ids_.back();
    outer_ids_.pop_back();
  }
}

}  // namespace gpuperf::parquet
