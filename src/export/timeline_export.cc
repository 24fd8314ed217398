#include "export/timeline_export.h"

#include "export/chrome_json_writer.h"

namespace gpuperf {

std::unique_ptr<TimelineWriter> MakeTimelineWriter(TimelineFormat format, std::ostream& out,
                                                   const PerfettoOptions& perfetto) {
  return format == TimelineFormat::kPerfetto ? MakePerfettoWriter(out, perfetto)
                                             : MakeChromeJsonWriter(out);
}

uint64_t EstimateTimelineBytes(TimelineFormat format, bool gzipped,
                               const TimelineEventCounts& drawn) {
  // Bytes per event: a launch call with its arrow, a piece of GPU work, an NVTX range.
  struct Cost {
    double api, gpu, nvtx;
  };
  const Cost cost = format == TimelineFormat::kPerfetto ? Cost{12, 19, 10}
                    : gzipped                           ? Cost{24, 30, 12}
                                                        : Cost{310, 380, 150};
  return static_cast<uint64_t>(cost.api * static_cast<double>(drawn.api_calls) +
                               cost.gpu *
                                   static_cast<double>(drawn.kernels + drawn.copies + drawn.sets) +
                               cost.nvtx * static_cast<double>(drawn.nvtx));
}

}  // namespace gpuperf
