// `gpuperf record --pc-sampling`: CUPTI's PC sampling (cupti_pcsampling.h) on every context, in
// continuous mode (kernels stay concurrent; samples carry no correlation id), and every loaded
// cubin saved beside the trace by its CRC so that `record` can map PCs to source lines after
// the run (cubin_lines.h).
//
// Sampling is enabled and configured in the context-created callback (as NVIDIA's samples do);
// the writer thread collects the samples every flush period with cuptiPCSamplingGetData, which
// never synchronizes the device. Callbacks never wait on the writer: they only try its lock.
#pragma once

#include <cstdint>

namespace gpuperf::inject {

struct Recorder;

bool StartPcSampling(Recorder& recorder);
void PcSamplingCallback(int domain, uint32_t cbid, const void* data);
// Writer thread, each period: samples since the last call go to the writer.
void CollectPcSamples();
// Process exit: the last samples, then sampling is disabled.
void FinishPcSampling();

}  // namespace gpuperf::inject
