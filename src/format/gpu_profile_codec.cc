#include "format/gpu_profile_codec.h"

namespace gpuperf::format {
namespace {

// Only damaged input has more stall reasons on one instruction (CUDA 13 knows about 30).
constexpr uint64_t kMaxStallReasons = 256;

}  // namespace

void EncodePcSamples(std::span<const PcSampleRecord> samples, std::string& out) {
  PutVarint(out, static_cast<uint64_t>(GpuProfileKind::kPcSamples));
  for (const PcSampleRecord& s : samples) {
    PutVarint(out, s.pid);
    PutVarint(out, s.cubin_crc);
    PutVarint(out, s.function);
    PutVarint(out, s.pc_offset);
    PutVarint(out, s.correlation_id);
    PutVarint(out, s.stalls.size());
    for (const PcStallCount& stall : s.stalls) {
      PutVarint(out, stall.reason);
      PutVarint(out, stall.samples);
    }
  }
}

void EncodeCubins(std::span<const CubinRecord> cubins, std::string& out) {
  PutVarint(out, static_cast<uint64_t>(GpuProfileKind::kCubins));
  for (const CubinRecord& c : cubins) {
    PutVarint(out, c.pid);
    PutVarint(out, c.crc);
    PutVarint(out, c.bytes);
    PutVarint(out, c.file);
  }
}

void EncodeSassLines(std::span<const SassLineRecord> lines, std::string& out) {
  PutVarint(out, static_cast<uint64_t>(GpuProfileKind::kSassLines));
  for (const SassLineRecord& l : lines) {
    PutVarint(out, l.cubin_crc);
    PutVarint(out, l.function);
    PutVarint(out, l.pc_offset);
    PutVarint(out, l.file);
    PutVarint(out, l.line);
    PutVarint(out, l.instruction);
  }
}

namespace {

bool DecodePcSamples(ByteCursor& in, uint32_t count, IdMaps& ids,
                     std::vector<PcSampleRecord>& out) {
  out.reserve(count);
  for (uint32_t i = 0; i < count && !in.failed(); ++i) {
    PcSampleRecord s;
    s.pid = static_cast<uint32_t>(in.Varint());
    s.cubin_crc = in.Varint();
    s.function = ids.MapString(in.Varint());
    s.pc_offset = in.Varint();
    s.correlation_id = static_cast<uint32_t>(in.Varint());
    const uint64_t stalls = in.Varint();
    if (stalls > kMaxStallReasons || stalls > in.remaining()) return false;
    s.stalls.resize(stalls);
    for (PcStallCount& stall : s.stalls) {
      stall.reason = ids.MapString(in.Varint());
      stall.samples = in.Varint();
    }
    out.push_back(std::move(s));
  }
  return !in.failed();
}

bool DecodeCubins(ByteCursor& in, uint32_t count, IdMaps& ids, std::vector<CubinRecord>& out) {
  out.reserve(count);
  for (uint32_t i = 0; i < count && !in.failed(); ++i) {
    CubinRecord c;
    c.pid = static_cast<uint32_t>(in.Varint());
    c.crc = in.Varint();
    c.bytes = in.Varint();
    c.file = ids.MapString(in.Varint());
    out.push_back(c);
  }
  return !in.failed();
}

bool DecodeSassLines(ByteCursor& in, uint32_t count, IdMaps& ids,
                     std::vector<SassLineRecord>& out) {
  out.reserve(count);
  for (uint32_t i = 0; i < count && !in.failed(); ++i) {
    SassLineRecord l;
    l.cubin_crc = in.Varint();
    l.function = ids.MapString(in.Varint());
    l.pc_offset = in.Varint();
    l.file = ids.MapString(in.Varint());
    l.line = static_cast<uint32_t>(in.Varint());
    l.instruction = ids.MapString(in.Varint());
    out.push_back(l);
  }
  return !in.failed();
}

}  // namespace

GpuProfileDecode DecodeGpuProfile(ByteCursor& in, uint32_t count, IdMaps& ids,
                                  GpuProfileChunk& out) {
  // Every record takes at least one byte per field: reject absurd counts before reserving.
  if (count > in.remaining()) return GpuProfileDecode::kMalformed;
  const uint64_t kind = in.Varint();
  out.pc_samples.clear();
  out.cubins.clear();
  out.sass_lines.clear();
  bool ok = false;
  switch (kind) {
    case static_cast<uint64_t>(GpuProfileKind::kPcSamples):
      ok = DecodePcSamples(in, count, ids, out.pc_samples);
      break;
    case static_cast<uint64_t>(GpuProfileKind::kCubins):
      ok = DecodeCubins(in, count, ids, out.cubins);
      break;
    case static_cast<uint64_t>(GpuProfileKind::kSassLines):
      ok = DecodeSassLines(in, count, ids, out.sass_lines);
      break;
    default:
      return in.failed() ? GpuProfileDecode::kMalformed : GpuProfileDecode::kUnknownKind;
  }
  out.kind = static_cast<GpuProfileKind>(kind);
  return ok ? GpuProfileDecode::kOk : GpuProfileDecode::kMalformed;
}

}  // namespace gpuperf::format
