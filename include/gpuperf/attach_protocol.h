// What `gpuperf attach` (src/attach, src/cli/cmd_attach.cc) and the injection library in the
// running process (src/inject/attach_window.cc) agree on: the entry point the injector calls,
// its answers, and the settings it passes (docs/attach.md). Both sides are built together;
// the protocol number keeps a library loaded by another gpuperf from misreading them.
#pragma once

#include <cstdint>

namespace gpuperf {

// int gpuperf_attach_start(const char* settings): one NAME=VALUE per line.
inline constexpr char kAttachEntryPoint[] = "gpuperf_attach_start";
inline constexpr uint32_t kAttachProtocol = 1;

// gpuperf_attach_start's answers.
enum AttachStartResult : int {
  kAttachStarted = 0,
  kAttachRecordedByRecord = 1,  // `gpuperf record` loaded the library: it owns the process
  kAttachWindowOpen = 2,        // another attach window has not ended
  kAttachBadSettings = 3,       // unreadable settings or another protocol version
  kAttachFailed = 4,            // the window's thread could not start
};

// The attach window's own settings, beside record's GPUPERF_* ones.
inline constexpr char kAttachProtocolSetting[] = "GPUPERF_ATTACH_PROTOCOL";
inline constexpr char kAttachStateSetting[] = "GPUPERF_ATTACH_STATE";        // absolute path
inline constexpr char kAttachStopSetting[] = "GPUPERF_ATTACH_STOP";          // absolute path
inline constexpr char kAttachLogSetting[] = "GPUPERF_ATTACH_LOG";            // absolute path
inline constexpr char kAttachInjectorSetting[] = "GPUPERF_ATTACH_INJECTOR";  // pid
inline constexpr char kAttachAtSetting[] = "GPUPERF_ATTACH_AT_NS";  // CLOCK_REALTIME ns, 0: now
inline constexpr char kAttachDurationSetting[] = "GPUPERF_ATTACH_DURATION_MS";  // 0: until stopped
inline constexpr char kAttachGraceSetting[] = "GPUPERF_ATTACH_GRACE_MS";        // attach --grace
// The work launched last gets this long to finish before the window detaches.
inline constexpr uint64_t kDefaultAttachGraceMs = 300;

}  // namespace gpuperf
