#include "export/flamegraph_svg.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

#include "base/text_escape.h"
#include "base/units.h"
#include "export/flamegraph_palette.h"
#include "export/flamegraph_svg_script.h"

namespace gpuperf {
namespace {

// Geometry, in SVG pixels. Labels use a monospace font so that the exporter can fit them
// without measuring; the script re-fits after zooming with the real glyph width.
// kWidth is the width without the script; with it, the drawing takes the window's width
// and is redrawn when the window is resized. Elements with data-anchor move with the
// width: "middle" stays centred, a number N stays N pixels left of the right margin.
constexpr int kWidth = 1200;
constexpr int kPad = 10;
constexpr int kRow = 17;
constexpr int kFrameHeight = 16;
constexpr int kTop = 100;           // first frame row
constexpr int kFooter = 46;         // legend and hints below the frames
constexpr double kCharWidth = 7.3;  // 12px monospace (DejaVu Sans Mono: 7.22)
constexpr double kTextPad = 3;
constexpr const char* kHighlight = "#e600e6";  // search matches; no palette comes near it

struct Node {
  uint32_t frame = 0;  // index into FlameGraph::frames; unused for the root
  uint64_t value = 0;  // layout weight
  uint64_t ns = 0;     // GPU time
  uint64_t count = 0;
  uint64_t cpu_ns = 0;
  uint64_t offcpu_ns = 0;
  std::vector<uint32_t> children;  // node indexes, alphabetical (stacks come sorted)

  void Add(const FlameStack& stack, uint64_t weight) {
    value += weight;
    ns += stack.gpu_ns;
    count += stack.count;
    cpu_ns += stack.cpu_ns;
    offcpu_ns += stack.offcpu_ns;
  }
};

std::vector<Node> BuildTree(const FlameGraph& graph, FlameWeight weight) {
  std::vector<Node> nodes(1);
  for (const FlameStack& stack : graph.stacks) {
    const uint64_t value = stack.weight(weight);
    if (value == 0) continue;
    uint32_t at = 0;
    nodes[0].Add(stack, value);
    for (uint32_t frame : stack.frames) {
      uint32_t child = 0;
      // Sorted input: a matching child, if any, is the last one added.
      const std::vector<uint32_t>& kids = nodes[at].children;
      for (auto it = kids.rbegin(); it != kids.rend(); ++it) {
        if (nodes[*it].frame == frame) {
          child = *it;
          break;
        }
      }
      if (child == 0) {
        child = static_cast<uint32_t>(nodes.size());
        Node node;
        node.frame = frame;
        nodes.push_back(node);
        nodes[at].children.push_back(child);
      }
      nodes[child].Add(stack, value);
      at = child;
    }
  }
  return nodes;
}

// ---- text ----

// Text as XML character data or attribute value: the display form of base/text_escape.h
// (valid UTF-8, no character XML forbids, nothing hidden), then XML's own escapes.
void AppendXml(std::string& out, std::string_view bytes) {
  std::string storage;
  for (char c : EscapedView(bytes, TextForm::kDisplay, storage)) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&apos;";
        break;
      default:
        out += c;
    }
  }
}

std::string Xml(std::string_view text) {
  std::string out;
  AppendXml(out, text);
  return out;
}

// UTF-8 aware: counts and cuts at code points.
size_t CodePoints(std::string_view text) {
  size_t n = 0;
  for (unsigned char c : text) n += (c & 0xC0) != 0x80;
  return n;
}

std::string_view PrefixCodePoints(std::string_view text, size_t count) {
  size_t seen = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    if ((static_cast<unsigned char>(text[i]) & 0xC0) != 0x80) {
      if (seen == count) return text.substr(0, i);
      ++seen;
    }
  }
  return text;
}

// The name with its leftmost part dropped, for a label that does not fit: first a GPU
// frame's "[GPU<n>] " prefix, then a signature's return type or one namespace/class qualifier
// (template arguments included) at a time, so the end of a name, which says what runs,
// stays readable. Empty when nothing more can be dropped (the argument list and
// bracketed names like "[unknown launch]" are never entered). The same rule as the script's
// dropLeft().
std::string_view DropLeft(std::string_view name) {
  if (name.starts_with("[GPU")) {
    size_t i = 4;
    while (i < name.size() && name[i] >= '0' && name[i] <= '9') ++i;
    if (i > 4 && name.substr(i).starts_with("] ") && i + 2 < name.size()) return name.substr(i + 2);
  }
  int depth = 0;
  for (size_t i = 0; i + 1 < name.size(); ++i) {
    char c = name[i];
    if (c == '(' && depth == 0 && !name.substr(i).starts_with("(anonymous namespace)")) break;
    if (c == '<' || c == '(' || c == '[') ++depth;
    if ((c == '>' || c == ')' || c == ']') && depth > 0) --depth;
    if (depth != 0) continue;
    // A space before the argument list ends a return type ("void f(int)"); in other
    // names ("memcpy HtoD") it is part of the name.
    if (c == ' ' && name.find('(', i) != std::string_view::npos) return name.substr(i + 1);
    if (c == ':' && name[i + 1] == ':' && i + 2 < name.size()) return name.substr(i + 2);
  }
  return {};
}

// The label for `width` pixels: the whole name, else the name with parts dropped from
// the left (DropLeft) until it fits, else that cut at the end with an ellipsis. The same
// rule as the script's fitLabel().
std::string FitLabel(std::string_view name, double width) {
  const double room = (width - 2 * kTextPad) / kCharWidth;
  if (room < 0) return "";
  const auto chars = static_cast<size_t>(room);
  if (CodePoints(name) <= chars) return std::string(name);
  if (chars < 3) return "";
  for (std::string_view shorter = DropLeft(name); !shorter.empty(); shorter = DropLeft(name)) {
    name = shorter;
    if (CodePoints(name) <= chars) return std::string(name);
  }
  return std::string(PrefixCodePoints(name, chars - 1)) + "\u2026";
}

std::string Fixed1(double v) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.1f", v);
  return buf;
}

const char* WeightName(FlameWeight weight) {
  switch (weight) {
    case FlameWeight::kCount:
      return "count";
    case FlameWeight::kCpuTime:
      return "cpu";
    case FlameWeight::kOffCpuTime:
      return "offcpu";
    case FlameWeight::kAll:
      return "all";
    case FlameWeight::kEnergy:
      return "energy";
    case FlameWeight::kGpuTime:
      break;
  }
  return "time";
}

std::string Plural(uint64_t n, const char* one, const char* many) {
  return FormatCount(n) + " " + (n == 1 ? one : many);
}

std::string DefaultTitle(const FlameGraphOptions& options) {
  switch (options.weight) {
    case FlameWeight::kCpuTime:
      return "On-CPU time by call stack";
    case FlameWeight::kOffCpuTime:
      return "Off-CPU (blocked) time by call stack";
    case FlameWeight::kAll:
      return "GPU, on-CPU and off-CPU time by call stack";
    case FlameWeight::kGpuTime:
    case FlameWeight::kCount:
    case FlameWeight::kEnergy:
      break;
  }
  std::string what = options.weight == FlameWeight::kCount    ? "GPU activities"
                     : options.weight == FlameWeight::kEnergy ? "GPU energy (estimate)"
                                                              : "GPU time";
  if (options.inverted) return what + " by kernel, then the CPU call stacks that launched it";
  return what + " by launching CPU call stack";
}

std::string Totals(const FlameSummary& s) {
  std::string out = FormatDuration(s.gpu_ns) + " GPU time";
  if (s.has_cpu()) {
    out += " \u00b7 " + FormatDuration(s.cpu_ns) + " on CPU (" +
           Plural(s.cpu_samples, "sample", "samples") + ") \u00b7 " + FormatDuration(s.offcpu_ns) +
           " off CPU";
    if (s.gpu_wait_ns + s.gpu_spin_ns > 0) {
      out += " (" + FormatDuration(s.gpu_wait_ns + s.gpu_spin_ns) + " waiting for the GPU)";
    }
  }
  out += " \u00b7 " + Plural(s.kernels, "kernel", "kernels");
  if (s.memcpys > 0) out += " \u00b7 " + Plural(s.memcpys, "copy", "copies");
  if (s.memsets > 0) out += " \u00b7 " + Plural(s.memsets, "set", "sets");
  out += " \u00b7 " + Plural(s.processes, "process", "processes");
  out += " \u00b7 " + Plural(s.devices, "device", "devices");
  if (s.unmatched == 0) {
    out += " \u00b7 every activity joined to its launch stack";
  } else {
    out += " \u00b7 " + FormatCount(s.unmatched) + " without launch stack (" +
           FormatPercent(s.gpu_ns ? static_cast<double>(s.unmatched_ns) / s.gpu_ns : 0) +
           " of GPU time)";
  }
  return out;
}

std::string Notes(const FlameGraphOptions& options, const FlameGraphSvgOptions& svg,
                  const FlameSummary& s, uint64_t pruned) {
  std::string out;
  switch (options.weight) {
    case FlameWeight::kCount:
      out = "Width: number of GPU activities";
      break;
    case FlameWeight::kCpuTime:
      out = "Width: on-CPU time, summed over threads";
      break;
    case FlameWeight::kOffCpuTime:
      out = "Width: time blocked, summed over threads";
      break;
    case FlameWeight::kAll:
      out = "Width: GPU + on-CPU + off-CPU time, summed over threads and activities";
      break;
    case FlameWeight::kEnergy:
      out =
          "Width: kernel energy, estimated from NVML power readings shared among the kernels "
          "running at each moment";
      break;
    case FlameWeight::kGpuTime:
      out = "Width: GPU time, summed over activities (concurrent kernels add up)";
      break;
  }
  if (pruned > 0) {
    char threshold[32];
    std::snprintf(threshold, sizeof(threshold), "%g%%", svg.min_width_fraction * 100);
    out += " \u00b7 " + Plural(pruned, "frame", "frames") + " narrower than " + threshold +
           " not drawn";
  }
  std::string filters;
  if (options.pid) filters += "pid " + std::to_string(*options.pid);
  if (options.tid) {
    if (!filters.empty()) filters += ", ";
    filters += "tid " + std::to_string(*options.tid);
  }
  if (!options.kernel_regex.empty()) {
    if (!filters.empty()) filters += ", ";
    filters += "kernel /" + options.kernel_regex + "/";
  }
  if (!filters.empty()) {
    out += " \u00b7 filter: " + filters + " (" + FormatCount(s.filtered_out) + " left out)";
  }
  return out;
}

class SvgWriter {
 public:
  SvgWriter(const FlameGraph& graph, const FlameGraphOptions& options,
            const FlameGraphSvgOptions& svg)
      : graph_(graph),
        options_(options),
        svg_(svg),
        nodes_(BuildTree(graph, options.weight)),
        cpu_(graph.summary.has_cpu()) {}

  std::string Render() {
    const Node& root = nodes_[0];
    threshold_ = static_cast<double>(root.value) * svg_.min_width_fraction;
    Measure(0, 0);
    rows_ = std::max(rows_, 1);
    const int height = kTop + rows_ * kRow + kFooter;

    out_.reserve(1 << 20);
    Header(height);
    Emit(0, 0, 0);
    Footer(height);
    out_ += "<script type=\"text/ecmascript\"><![CDATA[";
    out_ += kFlamegraphScript;
    out_ += "]]></script>\n</svg>\n";
    return std::move(out_);
  }

 private:
  bool Drawn(const Node& node) const {
    return node.value > 0 && static_cast<double>(node.value) >= threshold_;
  }

  // Counts rows and the frames too narrow to draw.
  void Measure(uint32_t index, int depth) {
    rows_ = std::max(rows_, depth + 1);
    for (uint32_t child : nodes_[index].children) {
      if (Drawn(nodes_[child])) {
        Measure(child, depth + 1);
      } else {
        pruned_ += Subtree(child);
      }
    }
  }
  uint64_t Subtree(uint32_t index) const {
    uint64_t n = 1;
    for (uint32_t child : nodes_[index].children) n += Subtree(child);
    return n;
  }

  void Header(int height) {
    const FlameSummary& s = graph_.summary;
    char layout[400];
    // Graphs with CPU samples tell the script to split tooltips into the three kinds of time.
    std::snprintf(layout, sizeof(layout),
                  "{\"width\":%d,\"height\":%d,\"pad\":%d,\"top\":%d,\"row\":%d,\"rows\":%d,"
                  "\"inverted\":%s,\"weight\":\"%s\",\"textPad\":%g,\"charWidth\":%g%s}",
                  kWidth, height, kPad, kTop, kRow, rows_, graph_.inverted ? "true" : "false",
                  WeightName(options_.weight), kTextPad, kCharWidth, cpu_ ? ",\"cpu\":true" : "");
    out_ += "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
    out_ += "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"" +
            std::to_string(kWidth) + "\" height=\"" + std::to_string(height) + "\" viewBox=\"0 0 " +
            std::to_string(kWidth) + " " + std::to_string(height) + "\" data-layout='" + layout +
            "'>\n";
    out_ += "<style>\n";
    out_ +=
        R"CSS(text { font-family: "DejaVu Sans", "Helvetica Neue", Arial, sans-serif; fill: #1d1d1f; }
.title { font-size: 18px; font-weight: 600; }
.sub { font-size: 12.5px; fill: #3a3a3c; }
.note { font-size: 11.5px; fill: #6e6e73; }
.f text, .probe { font-family: "DejaVu Sans Mono", Menlo, Consolas, "Liberation Mono", monospace; font-size: 12px; fill: #111; pointer-events: none; }
.f { cursor: pointer; }
.f rect { stroke: #fff; stroke-width: 0.6; }
.f:hover rect { stroke: #111; stroke-width: 1.2; }
.f.hl rect { fill: )CSS";
    out_ += kHighlight;
    out_ += R"CSS(; }
.f.hl text { fill: #fff; }
.f.anc rect { fill-opacity: 0.55; }
.f.anc text { fill: #444; }
.f.zoomed rect { stroke: #111; stroke-width: 1.2; }
.hide { display: none; }
.btn { cursor: pointer; }
.btn rect { fill: #f2f2f7; stroke: #c7c7cc; }
.btn:hover rect { fill: #e5e5ea; }
.btn text { font-size: 12px; }
#matched { font-size: 12.5px; font-weight: 600; fill: #9c009c; }
#matched.bad { fill: #c00; }
.tip rect { fill: #1d1d1f; fill-opacity: 0.93; }
.tip text { font-size: 12px; fill: #f5f5f7; pointer-events: none; }
.tip .tip-name { font-weight: 600; fill: #fff; }
.legend text { font-size: 11.5px; fill: #3a3a3c; }
input { font: 12.5px "DejaVu Sans", Arial, sans-serif; width: 100%; height: 22px; box-sizing: border-box; padding: 2px 8px; border: 1px solid #c7c7cc; border-radius: 6px; background: #fff; }
input:focus { outline: 2px solid #b300b3; outline-offset: -1px; }
)CSS";
    out_ += "</style>\n";
    out_ += "<rect x=\"0\" y=\"0\" width=\"100%\" height=\"100%\" fill=\"#ffffff\"/>\n";

    const std::string title = svg_.title.empty() ? DefaultTitle(options_) : svg_.title;
    out_ += "<text class=\"title\" data-anchor=\"middle\" x=\"" + std::to_string(kWidth / 2) +
            "\" y=\"28\" text-anchor=\"middle\">" + Xml(title) + "</text>\n";
    out_ += "<text class=\"sub\" id=\"subtitle\" data-anchor=\"middle\" x=\"" +
            std::to_string(kWidth / 2) + "\" y=\"49\" text-anchor=\"middle\">" + Xml(Totals(s)) +
            "</text>\n";
    out_ += "<text class=\"note\" id=\"notes\" data-anchor=\"middle\" x=\"" +
            std::to_string(kWidth / 2) + "\" y=\"67\" text-anchor=\"middle\">" +
            Xml(Notes(options_, svg_, s, pruned_)) + "</text>\n";
    // Loss is said where the eye goes first, in the row of the controls (left of them
    // is only the reset button, shown while zoomed); undamaged traces draw nothing here.
    if (!svg_.data_loss.empty()) {
      out_ +=
          "<text class=\"sub\" id=\"data-loss\" data-anchor=\"middle\" "
          "style=\"fill:#c00;font-weight:600\" x=\"" +
          std::to_string(kWidth / 2) + "\" y=\"89\" text-anchor=\"middle\">" + Xml(svg_.data_loss) +
          "</text>\n";
    }
    // Controls: reset (shown while zoomed), the matched share, the search box.
    out_ += "<g id=\"reset\" class=\"btn hide\"><rect x=\"" + std::to_string(kPad) +
            "\" y=\"73\" width=\"86\" height=\"22\" rx=\"6\"/><text x=\"" +
            std::to_string(kPad + 43) +
            "\" y=\"88\" text-anchor=\"middle\">Reset zoom</text></g>\n";
    out_ += "<text id=\"matched\" data-anchor=\"262\" x=\"" + std::to_string(kWidth - kPad - 262) +
            "\" y=\"89\" text-anchor=\"end\"></text>\n";
    out_ += "<foreignObject data-anchor=\"250\" x=\"" + std::to_string(kWidth - kPad - 250) +
            "\" y=\"73\" width=\"250\" height=\"22\"><input xmlns=\"http://www.w3.org/1999/xhtml\" "
            "id=\"search\" type=\"search\" placeholder=\"Search (regex), Ctrl-F\" "
            "spellcheck=\"false\" autocomplete=\"off\"/></foreignObject>\n";
  }

  int RowY(int depth) const {
    return graph_.inverted ? kTop + depth * kRow : kTop + (rows_ - 1 - depth) * kRow;
  }

  void Emit(uint32_t index, int depth, uint64_t offset) {
    const Node& node = nodes_[index];
    const uint64_t total = nodes_[0].value;
    const double span = kWidth - 2 * kPad;
    const double x = kPad + (total ? span * static_cast<double>(offset) / total : 0);
    const double w = total ? span * static_cast<double>(node.value) / total : span;
    const bool is_root = index == 0;
    // Escaped before it is fitted, so the label is cut to the width of what shows.
    const std::string name = is_root ? "all" : DisplayText(graph_.frames[node.frame].name);

    out_ += "<g class=\"f ";
    out_ += is_root ? 'r' : KindClass(graph_.frames[node.frame].kind);
    out_ += "\" data-o=\"" + std::to_string(offset) + "\" data-v=\"" + std::to_string(node.value) +
            "\" data-t=\"" + std::to_string(node.ns) + "\" data-n=\"" + std::to_string(node.count) +
            (cpu_ ? "\" data-c=\"" + std::to_string(node.cpu_ns) + "\" data-w=\"" +
                        std::to_string(node.offcpu_ns)
                  : std::string()) +
            "\" data-d=\"" + std::to_string(depth) + "\"><title>";
    AppendXml(out_, name);
    out_ += "</title><rect x=\"" + Fixed1(x) + "\" y=\"" + std::to_string(RowY(depth)) +
            "\" width=\"" + Fixed1(w) + "\" height=\"" + std::to_string(kFrameHeight) +
            "\" rx=\"2\" fill=\"" +
            (is_root ? std::string("#d5d8dd") : FrameColour(graph_.frames[node.frame])) + "\"/>";
    out_ += "<text x=\"" + Fixed1(x + kTextPad) + "\" y=\"" +
            std::to_string(RowY(depth) + kFrameHeight - 4) + "\">";
    AppendXml(out_, FitLabel(name, w));
    out_ += "</text></g>\n";

    uint64_t child_offset = offset;
    for (uint32_t child : node.children) {
      if (Drawn(nodes_[child])) Emit(child, depth + 1, child_offset);
      child_offset += nodes_[child].value;
    }
  }

  void Footer(int height) {
    struct Entry {
      const char* label;
      FlameFrameKind kind;
      const char* sample;
    };
    const Entry entries[] = {
        {"CPU frame", FlameFrameKind::kCpu, "main"},
        {"launch API", FlameFrameKind::kLaunchApi, "cudaLaunchKernel"},
        {"CUDA graph", FlameFrameKind::kGraph, "[graph 1]"},
        {"GPU kernel", FlameFrameKind::kKernel, "gemm"},
        {"memcpy", FlameFrameKind::kMemcpy, "memcpy HtoD"},
        {"memset", FlameFrameKind::kMemset, "memset"},
        {"context", FlameFrameKind::kContext, "[unknown launch]"},
        {"Python frame", FlameFrameKind::kPython, "main"},
        {"kernel function", FlameFrameKind::kKernelCode, "schedule"},
        {"on-CPU", FlameFrameKind::kOnCpu, "[cpu]"},
        {"off-CPU", FlameFrameKind::kOffCpu, "[off-cpu]"},
        {"GPU wait", FlameFrameKind::kGpuWait, "[wait: GPU sync]"},
        {"source line", FlameFrameKind::kSourceLine, "[line] a.cu:1"},
        {"stall reason", FlameFrameKind::kStall, "[stall] long_scoreboard"},
    };
    auto has_kind = [this](FlameFrameKind kind) {
      return std::any_of(graph_.frames.begin(), graph_.frames.end(),
                         [kind](const FlameFrame& f) { return f.kind == kind; });
    };
    auto optional_kind = [](FlameFrameKind kind) {
      return kind == FlameFrameKind::kPython || kind == FlameFrameKind::kKernelCode ||
             kind == FlameFrameKind::kOnCpu || kind == FlameFrameKind::kOffCpu ||
             kind == FlameFrameKind::kGpuWait || kind == FlameFrameKind::kSourceLine ||
             kind == FlameFrameKind::kStall;
    };
    const int y = height - kFooter + 20;
    out_ += "<g class=\"legend\">";
    int x = kPad;
    for (const Entry& e : entries) {
      // Python, CPU-sample and PC-sample kinds only where the graph has them; with CPU
      // samples the legend is long, so only the kinds the graph has at all.
      if ((optional_kind(e.kind) || cpu_) && !has_kind(e.kind)) continue;
      out_ += "<rect x=\"" + std::to_string(x) + "\" y=\"" + std::to_string(y - 10) +
              "\" width=\"12\" height=\"12\" rx=\"2\" fill=\"" +
              FrameColour(FlameFrame{e.sample, e.kind}) + "\"/><text x=\"" +
              std::to_string(x + 17) + "\" y=\"" + std::to_string(y) + "\">" + e.label + "</text>";
      x += 17 + static_cast<int>(std::string_view(e.label).size() * 6.5) + 20;
    }
    out_ += "<text data-anchor=\"0\" x=\"" + std::to_string(kWidth - kPad) + "\" y=\"" +
            std::to_string(y) +
            "\" text-anchor=\"end\">click a frame to zoom \u00b7 Esc resets \u00b7 "
            "gpuperf</text></g>\n";
    out_ +=
        "<g id=\"tip\" class=\"tip\" visibility=\"hidden\" pointer-events=\"none\"><rect "
        "rx=\"5\" width=\"10\" height=\"10\"/><text></text></g>\n";
  }

  const FlameGraph& graph_;
  const FlameGraphOptions& options_;
  const FlameGraphSvgOptions& svg_;
  std::vector<Node> nodes_;
  bool cpu_;  // the graph has CPU samples: tooltips and legend show the three kinds of time
  double threshold_ = 0;
  int rows_ = 0;
  uint64_t pruned_ = 0;
  std::string out_;
};

}  // namespace

Status ExportFlamegraphSvg(const FlameGraph& graph, const FlameGraphOptions& options,
                           const FlameGraphSvgOptions& svg, std::ostream& out) {
  if (!(svg.min_width_fraction >= 0 && svg.min_width_fraction < 1)) {
    return Error(StatusCode::kInvalidArgument, "minimum frame width must be in [0, 1)");
  }
  SvgWriter writer(graph, options, svg);
  out << writer.Render();
  out.flush();
  if (!out) return Error(StatusCode::kIoError, "could not write the flame graph");
  return Status::Ok();
}

Status ExportFlamegraphSvg(const Trace& trace, const FlameGraphOptions& options,
                           const FlameGraphSvgOptions& svg, std::ostream& out) {
  GP_ASSIGN_OR_RETURN(FlameGraph graph, BuildFlameGraph(trace, options));
  FlameGraphSvgOptions with_loss = svg;
  if (with_loss.data_loss.empty()) {
    with_loss.data_loss = SummarizeDataLoss(trace.read_report, graph.recording_loss).line;
  }
  return ExportFlamegraphSvg(graph, options, with_loss, out);
}

}  // namespace gpuperf
