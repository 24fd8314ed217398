#include "analyze/join/launch_sink.h"

namespace gpuperf {

LaunchSink::LaunchSink(Correlator& correlator) : correlator_(correlator) {
  strings.assign(1, std::string());
  stacks.assign(1, StackRecord());
}

void LaunchSink::OnString(StringId id, std::string_view text) {
  if (strings.size() <= id) strings.resize(id + 1);
  strings[id] = std::string(text);
}

void LaunchSink::OnStack(const StackRecord& stack) {
  if (stacks.size() <= stack.id) stacks.resize(stack.id + 1);
  stacks[stack.id] = stack;
  correlator_.AddStack(stack.id);
}

void LaunchSink::OnProcess(std::span<const ProcessRecord> records) {
  processes.insert(processes.end(), records.begin(), records.end());
  loss.AddProcesses(records);
}

}  // namespace gpuperf
