// Who a running process is, from /proc/PID/status: its user and group ids and its
// supplementary groups. Used where gpuperf acts on another process's files (dump-now) or
// trusts what a process wrote (the live pages): what belongs to a process is checked against
// the users it runs as, never against what the process says about itself.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <vector>

namespace gpuperf {

struct ProcessOwner {
  // Real, effective, saved and filesystem ids, in /proc's order.
  uid_t uids[4] = {};
  gid_t gids[4] = {};
  std::vector<gid_t> groups;

  uid_t fs_uid() const { return uids[3]; }
  gid_t fs_gid() const { return gids[3]; }
  // Whether the process runs as `uid` in any of its four ids.
  bool RunsAs(uid_t uid) const;
  // Whether all of its user ids are `uid` (what the kernel asks before it lets that user
  // read the process's environment or memory).
  bool OnlyUser(uid_t uid) const;
};

// nullopt when the process does not exist (or /proc cannot be read).
std::optional<ProcessOwner> ReadProcessOwner(uint32_t pid);

}  // namespace gpuperf
