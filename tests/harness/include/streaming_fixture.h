// The fixture of the streaming end-to-end tests: a real StreamingServer with real host processes
// behind it (ProcessBackend), and helpers for the test client's options.
#pragma once
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>

#include <future>
#include <thread>

#include "berth/netns_connect.h"
#include "berth/streaming_server.h"
#include "berth/test/streaming_client.h"
#include "process_backend.h"
#include "test_servers.h"

using namespace std::chrono_literals;

namespace berth::test {

inline constexpr auto kWait = 60s;

// Polls `cond` until it holds or a generous deadline passes (no timing is asserted).
template <class F>
bool eventually(F cond, std::chrono::milliseconds limit = kWait) {
  auto deadline = std::chrono::steady_clock::now() + limit;
  while (!cond()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(10ms);
  }
  return true;
}

class StreamingTest : public ::testing::Test {
 protected:
  void SetUp() override { start({}); }
  void TearDown() override {
    if (server_) {
      EXPECT_TRUE(eventually([&] { return server_->active_sessions() == 0; }));
    }
    server_.reset();
  }
  void start(StreamingServerConfig cfg) {
    server_.reset();
    auto s = StreamingServer::start(cfg, backend_);
    ASSERT_TRUE(s.ok()) << s.status().message();
    server_ = std::move(*s);
  }
  std::string exec_url(std::vector<std::string> cmd, bool in, bool out, bool err, bool tty = false) {
    ExecTarget t{"c0", std::move(cmd), tty, in, out, err};
    auto url = server_->register_exec(t);
    EXPECT_TRUE(url.ok()) << url.status().message();
    return url.ok() ? *url : "";
  }
  std::string sh(const std::string& script) { return exec_url({"/bin/sh", "-c", script}, false, true, true); }

  ProcessBackend backend_;
  std::unique_ptr<StreamingServer> server_;
};

inline StreamOptions spdy(std::string version) {
  StreamOptions o;
  o.protocols = {std::move(version)};
  return o;
}
inline StreamOptions websocket(std::vector<std::string> protocols) {
  StreamOptions o;
  o.transport = Transport::websocket;
  o.protocols = std::move(protocols);
  return o;
}

}  // namespace berth::test
