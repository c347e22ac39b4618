// Test-client plumbing shared by the SPDY and WebSocket clients: URL parsing, a TCP connect to
// the server, and the HTTP/1.1 upgrade request/response for SPDY.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "berth/status.h"
#include "berth/unique_fd.h"

namespace berth::test {

struct Url {
  std::string host;  // without brackets
  std::string port;
  std::string target;  // path and query
};
Result<Url> parse_url(const std::string& url);

Result<UniqueFd> tcp_connect(const Url& url);

// A non-101 answer becomes a Status whose message starts with "http <code>: ".
Status http_refusal(int code, const std::string& body);
// The HTTP status of such a refusal (0 when the Status is not one).
int refusal_code(const Status& s);

struct SpdyUpgrade {
  UniqueFd fd;
  std::string protocol;  // X-Stream-Protocol-Version of the 101 response
  std::string leftover;  // bytes after the response headers (already SPDY frames)
};
Result<SpdyUpgrade> spdy_upgrade(const std::string& url, const std::vector<std::string>& protocols,
                                 std::chrono::milliseconds timeout);

}  // namespace berth::test
