#include "base/hardware_advice.h"

namespace gpuperf {
namespace {

struct Advice {
  std::string_view why;
  std::string_view fix;
};

Advice AdviceFor(int code) {
  switch (static_cast<CuptiCode>(code)) {
    case CuptiCode::kInsufficientPrivileges:
      return {"GPU performance counters are restricted to admin users",
              "run as root, or load the NVIDIA driver with NVreg_RestrictProfilingToAdminUsers=0 "
              "(options nvidia NVreg_RestrictProfilingToAdminUsers=0 in /etc/modprobe.d, then "
              "reload the driver; /proc/driver/nvidia/params shows RmProfilingAdminOnly)"};
    case CuptiCode::kVirtualizedDeviceInsufficientPrivileges:
      return {"this vGPU does not let guests read counters",
              "enable profiling for the VM on the vGPU host (its vGPU profiling policy)"};
    case CuptiCode::kHardwareBusy:
      return {
          "the counters are in use by another profiler (DCGM profiling metrics, Nsight, or "
          "another CUPTI tool)",
          "pause DCGM with 'dcgmi profile --pause' (resume with --resume) or stop the other "
          "profiler for the run"};
    case CuptiCode::kOldProfilerApiInitialized:
      return {"another tool in this process already uses CUPTI's older profiler API",
              "profile without that tool (e.g. torch.profiler's CUPTI metrics)"};
    case CuptiCode::kNotInitialized:
      return {"PC sampling and hardware counters cannot share one process",
              "run 'gpuperf metrics' and 'gpuperf record --pc-sampling' as separate runs"};
    case CuptiCode::kMultipleSubscribers:
      return {"another profiler holds CUPTI's callbacks (Nsight Systems, Kineto)",
              "run without the other profiler"};
    case CuptiCode::kMigDeviceNotSupported:
      return {"profiling a MIG instance is not supported", "run on a GPU without MIG"};
    case CuptiCode::kVirtualizedDeviceNotSupported:
      return {"this virtual GPU does not support profiling", "run on a physical GPU"};
    case CuptiCode::kConfidentialComputingNotSupported:
      return {"profiling is off in confidential computing mode", "run outside CC mode"};
    case CuptiCode::kCmpDeviceNotSupported:
      return {"crypto-mining processors do not support profiling", "run on another GPU"};
    case CuptiCode::kSliDeviceNotSupported:
      return {"profiling is not supported with SLI", "turn SLI off"};
    case CuptiCode::kWslDeviceNotSupported:
      return {"profiling is not supported under WSL on this driver", "run on Linux"};
    case CuptiCode::kInvalidChipName:
      return {"this CUPTI does not know the GPU's chip",
              "use the CUPTI of a CUDA toolkit at least as new as the GPU"};
    case CuptiCode::kNotSupported:
      return {"this GPU or system does not support it",
              "use a GPU of compute capability 7.0 or newer, not a vGPU or MIG instance"};
  }
  return {"CUPTI refused", "run with -v for CUPTI's calls; check the driver and CUDA versions"};
}

std::string Join(std::string_view feature, std::string_view where, std::string_view why,
                 std::string_view detail, std::string_view fix) {
  std::string line(feature);
  line += " unavailable";
  if (!where.empty()) line += " on " + std::string(where);
  line += ": " + std::string(why);
  if (!detail.empty()) line += " (" + std::string(detail) + ")";
  line += "; fix: " + std::string(fix) + "; the rest of the recording goes on";
  return line;
}

}  // namespace

std::string HardwareFailureLine(std::string_view feature, std::string_view where, int cupti_code,
                                std::string_view cupti_text) {
  const Advice advice = AdviceFor(cupti_code);
  return Join(feature, where, advice.why, cupti_text, advice.fix);
}

std::string UnsupportedDeviceLine(std::string_view feature, std::string_view where,
                                  std::string_view reason) {
  if (reason == "architecture") {
    return Join(feature, where, "the GPU is too old (compute capability 7.0 or newer is needed)",
                "", "run on a Volta or newer GPU");
  }
  if (reason.empty() || reason == "this configuration") {
    return Join(feature, where, "profiling is not supported in this GPU's configuration", "",
                "run on a GPU without vGPU, MIG, confidential computing or SLI");
  }
  return Join(feature, where, "the GPU's configuration does not support profiling",
              std::string(reason) + " not supported",
              "run on a GPU without " + std::string(reason));
}

std::string NoLineInfoLine(std::string_view kernel) {
  return "kernel " + std::string(kernel) +
         " has no line information: its samples are shown by SASS offset; rebuild with nvcc "
         "-lineinfo to see source lines";
}

}  // namespace gpuperf
