// The block decoder of fixed-size records against the plain column-by-column decoder: the
// same records, the same end position and the same verdict, on whole payloads and on
// damaged ones (where it hands over to the plain decoder).
#include "format/record_codec.h"

#include <gtest/gtest.h>

#include <span>
#include <string>
#include <vector>

namespace gpuperf::format {
namespace {

template <class T>
std::vector<uint64_t> Values(const std::vector<T>& records) {
  std::vector<uint64_t> values;
  for (const T& record : records) {
    ForEachField(record, [&](const char*, const auto& value, FieldEnc) {
      values.push_back(FieldToU64(value));
    });
  }
  return values;
}

// Kernels with the spread of a real chunk: one-byte and multi-byte values in every column.
std::vector<KernelRecord> Kernels(uint32_t n) {
  std::vector<KernelRecord> kernels(n);
  uint64_t state = 12345;
  uint64_t t = 1'000'000'000'000;
  for (uint32_t i = 0; i < n; ++i) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    KernelRecord& k = kernels[i];
    k.pid = 4242;
    k.name = 1 + (state >> 60);
    k.stream_id = 7 + (state >> 62);
    t += 500 + (state >> 40) % 100000;
    k.start_ns = t;
    k.end_ns = t + (state >> 20) % 5'000'000;
    k.grid_x = 1u << ((state >> 30) % 20);
    k.correlation_id = 2 * i + 1;
    k.graph_node_id = i % 7 == 0 ? (state >> 3) : 0;
  }
  return kernels;
}

struct Decoded {
  bool ok;
  size_t remaining;
  std::vector<uint64_t> values;
};

template <class T>
Decoded InBlocks(std::span<const uint8_t> bytes, uint32_t count) {
  ByteCursor in(bytes.data(), bytes.size());
  std::vector<T> out;
  std::vector<uint64_t> scratch;
  const bool ok = DecodeFixedLocal(in, count, out, scratch);
  return {ok, in.remaining(), Values(out)};
}

template <class T>
Decoded ByColumn(std::span<const uint8_t> bytes, uint32_t count) {
  ByteCursor in(bytes.data(), bytes.size());
  // The count check DecodeFixedLocal makes before decoding either way.
  if (count > in.remaining()) return {false, in.remaining(), {}};
  std::vector<T> out;
  std::vector<uint64_t> scratch;
  out.resize(count);
  const bool ok = codec_detail::DecodeByColumn(in, std::span<T>(out), scratch);
  return {ok, in.remaining(), Values(out)};
}

std::span<const uint8_t> Bytes(const std::string& s) {
  return {reinterpret_cast<const uint8_t*>(s.data()), s.size()};
}

TEST(RecordCodec, BlocksDecodeWhatColumnsDecode) {
  for (uint32_t n : {1u, 255u, 256u, 257u, 1000u, 5000u}) {
    const std::vector<KernelRecord> kernels = Kernels(n);
    std::string payload;
    EncodeFixed<KernelRecord>(kernels, payload);
    payload += "trailing";  // bytes after the records are not the decoder's
    const Decoded blocks = InBlocks<KernelRecord>(Bytes(payload), n);
    const Decoded columns = ByColumn<KernelRecord>(Bytes(payload), n);
    ASSERT_TRUE(blocks.ok) << n;
    EXPECT_EQ(blocks.remaining, 8u) << n;
    EXPECT_EQ(blocks.values, columns.values) << n;
    EXPECT_EQ(blocks.values, Values(kernels)) << n;
  }
}

// Damage anywhere: a flipped byte, a cut, a count that does not match. Whatever the
// outcome, it is the plain decoder's, byte for byte.
TEST(RecordCodec, DamagedPayloadsDecodeAsTheColumnDecoderDecodesThem) {
  const std::vector<KernelRecord> kernels = Kernels(700);
  std::string clean;
  EncodeFixed<KernelRecord>(kernels, clean);
  uint64_t state = 99;
  int failures = 0;
  for (int trial = 0; trial < 300; ++trial) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    std::string payload = clean;
    uint32_t count = 700;
    switch (trial % 4) {
      case 0:
        payload[(state >> 33) % payload.size()] ^= static_cast<char>(1 + (state >> 8) % 255);
        break;
      case 1:
        payload.resize((state >> 33) % payload.size());
        break;
      case 2:
        count = 700 + 1 + (state >> 40) % 50;
        break;
      case 3:  // a run of continuation bytes: a varint longer than any written
        for (size_t i = 0; i < 12; ++i)
          payload[((state >> 33) % (payload.size() - 12)) + i] = '\xff';
        break;
    }
    const Decoded blocks = InBlocks<KernelRecord>(Bytes(payload), count);
    const Decoded columns = ByColumn<KernelRecord>(Bytes(payload), count);
    ASSERT_EQ(blocks.ok, columns.ok) << "trial " << trial;
    ASSERT_EQ(blocks.remaining, columns.remaining) << "trial " << trial;
    ASSERT_EQ(blocks.values, columns.values) << "trial " << trial;
    failures += !blocks.ok;
  }
  EXPECT_GT(failures, 100);  // the damage was real
}

// A kAfter field adds to the previous field's value as decoded; no such field follows a
// string or stack id (those are remapped after decoding, so the sum would use a file-local
// id).
TEST(RecordCodec, NoFieldEncodedAfterAnIdField) {
#define GP_CHECK_AFTER(Type, name, plural, number)                                 \
  {                                                                                \
    Type##Record probe{};                                                          \
    FieldEnc previous = FieldEnc::kPlain;                                          \
    ForEachField(probe, [&](const char* field, const auto&, FieldEnc enc) {        \
      if (enc == FieldEnc::kAfter) {                                               \
        EXPECT_TRUE(previous != FieldEnc::kString && previous != FieldEnc::kStack) \
            << #name << "." << field;                                              \
      }                                                                            \
      previous = enc;                                                              \
    });                                                                            \
  }
  GPUPERF_FIXED_RECORD_TYPES(GP_CHECK_AFTER)
#undef GP_CHECK_AFTER
}

}  // namespace
}  // namespace gpuperf::format
