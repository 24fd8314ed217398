#include "export/flamegraph_palette.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace gpuperf {
namespace {

uint32_t Fnv1a(std::string_view text) {
  uint32_t h = 2166136261u;
  for (unsigned char c : text) {
    h ^= c;
    h *= 16777619u;
  }
  return h;
}

std::string HslHex(double hue, double saturation, double lightness) {
  const double c = (1 - std::fabs(2 * lightness - 1)) * saturation;
  const double hp = std::fmod(hue, 360.0) / 60.0;
  const double x = c * (1 - std::fabs(std::fmod(hp, 2.0) - 1));
  double r = 0, g = 0, b = 0;
  if (hp < 1) {
    r = c, g = x;
  } else if (hp < 2) {
    r = x, g = c;
  } else if (hp < 3) {
    g = c, b = x;
  } else if (hp < 4) {
    g = x, b = c;
  } else if (hp < 5) {
    r = x, b = c;
  } else {
    r = c, b = x;
  }
  const double m = lightness - c / 2;
  auto channel = [m](double v) {
    return static_cast<int>(std::lround(std::clamp(v + m, 0.0, 1.0) * 255));
  };
  char buf[8];
  std::snprintf(buf, sizeof(buf), "#%02x%02x%02x", channel(r), channel(g), channel(b));
  return buf;
}

// The GPU frames' "[GPU0] " prefix does not take part, so a kernel keeps its colour on
// every device.
std::string_view ColourKey(const FlameFrame& frame) {
  std::string_view name = frame.name;
  if (frame.kind == FlameFrameKind::kKernel || frame.kind == FlameFrameKind::kMemcpy ||
      frame.kind == FlameFrameKind::kMemset) {
    size_t close = name.find("] ");
    if (name.starts_with("[GPU") && close != std::string_view::npos) name.remove_prefix(close + 2);
  }
  return name;
}

}  // namespace

std::string FrameColour(const FlameFrame& frame) {
  const uint32_t h = Fnv1a(ColourKey(frame));
  const double a = (h & 0xffff) / 65535.0;  // hue position within the palette
  const double b = (h >> 16) / 65535.0;     // lightness jitter
  switch (frame.kind) {
    case FlameFrameKind::kCpu:  // warm: red through orange to amber
      return HslHex(4 + 42 * a, 0.78, 0.58 + 0.08 * b);
    case FlameFrameKind::kLaunchApi:  // soft violet
      return HslHex(268 + 16 * a, 0.42, 0.74 + 0.05 * b);
    case FlameFrameKind::kGraph:  // deeper violet
      return HslHex(250 + 12 * a, 0.45, 0.66 + 0.04 * b);
    case FlameFrameKind::kKernel:  // green to teal
      return HslHex(128 + 46 * a, 0.52, 0.52 + 0.10 * b);
    case FlameFrameKind::kMemcpy:  // sky blue
      return HslHex(198 + 14 * a, 0.78, 0.64 + 0.06 * b);
    case FlameFrameKind::kMemset:  // periwinkle
      return HslHex(226 + 10 * a, 0.62, 0.72 + 0.04 * b);
    case FlameFrameKind::kContext:
      return HslHex(210, 0.06, 0.76 + 0.06 * b);
    case FlameFrameKind::kPython:  // yellow, past the CPU frames' amber
      return HslHex(54 + 10 * a, 0.85, 0.62 + 0.06 * b);
    case FlameFrameKind::kKernelCode:  // brown: the operating system
      return HslHex(24 + 12 * a, 0.42, 0.56 + 0.06 * b);
    case FlameFrameKind::kOnCpu:  // the three kinds of time: red, blue, and the kernels' green
      return "#e8372c";
    case FlameFrameKind::kOffCpu:
      return "#3f7fd9";
    case FlameFrameKind::kGpuWait:  // pink: the CPU waits for the GPU
      return HslHex(334, 0.70, 0.70);
    case FlameFrameKind::kSourceLine:  // pale green, the kernels' family
      return HslHex(96 + 20 * a, 0.45, 0.70 + 0.06 * b);
    case FlameFrameKind::kStall:  // orchid: where warps wait (apart from the CPU's pink wait)
      return HslHex(300 + 14 * a, 0.50, 0.74 + 0.05 * b);
  }
  return "#cccccc";
}

char KindClass(FlameFrameKind kind) {
  switch (kind) {
    case FlameFrameKind::kContext:
      return 'x';
    case FlameFrameKind::kCpu:
      return 'c';
    case FlameFrameKind::kLaunchApi:
      return 'a';
    case FlameFrameKind::kGraph:
      return 'g';
    case FlameFrameKind::kKernel:
      return 'k';
    case FlameFrameKind::kMemcpy:
      return 'm';
    case FlameFrameKind::kMemset:
      return 's';
    case FlameFrameKind::kPython:
      return 'p';
    case FlameFrameKind::kKernelCode:
      return 'e';
    case FlameFrameKind::kOnCpu:
      return 'u';
    case FlameFrameKind::kOffCpu:
      return 'o';
    case FlameFrameKind::kGpuWait:
      return 'w';
    case FlameFrameKind::kSourceLine:
      return 'l';
    case FlameFrameKind::kStall:
      return 't';
  }
  return 'x';
}

}  // namespace gpuperf
