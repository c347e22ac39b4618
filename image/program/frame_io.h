// Whole frames of the pull protocol (pull_worker_protocol.h) read from and written to a socket:
// berthd's connection on fd 0, and the fetcher's socketpair inside a helper.
#pragma once

#include <optional>
#include <string>

namespace berth::pull_protocol {

// The next whole frame from `fd`, bytes past it kept in `buffer`; nullopt at EOF or on an error.
std::optional<std::string> read_frame(int fd, std::string& buffer);

// False when the peer is gone.
bool send_frame(int fd, const std::string& payload);

}  // namespace berth::pull_protocol
