// NriPlugins against peers that misbehave at the byte level (the well-behaved plugin of the e2e
// tests is Python, tests/nri): a registration under a bad name is refused naming the field, a
// peer that never registers is cut off after the registration timeout, one that sends a frame
// over the bound is disconnected, and none of them keeps berth from taking the next plugin.
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include "berth/nri_mux.h"
#include "berth/nri_plugins.h"
#include "berth/test/temp_dir.h"
#include "berth/ttrpc_wire.h"
#include "berth/unique_fd.h"

namespace berth::nri {
namespace {

using namespace std::chrono_literals;

class RawPeer {
 public:
  explicit RawPeer(const std::string& path) : fd_(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) {
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    path.copy(addr.sun_path, sizeof addr.sun_path - 1);
    connected_ = ::connect(fd_.get(), reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
  }
  bool connected() const { return connected_; }
  void send_bytes(const std::string& b) {
    ASSERT_EQ(::send(fd_.get(), b.data(), b.size(), MSG_NOSIGNAL), ssize_t(b.size()));
  }
  void call_runtime(uint32_t stream, const std::string& method, const std::string& payload) {
    auto req = ttrpc::encode_request(
        {.stream_id = stream, .service = "nri.pkg.api.v1alpha1.Runtime", .method = method, .payload = payload});
    ASSERT_TRUE(req.ok());
    send_bytes(nri_mux::encode(nri_mux::kRuntimeServiceConn, *req));
  }
  // The next answer on the Runtime connection; nullopt when the socket ends first or in `wait`.
  std::optional<ttrpc::Answer> answer(std::chrono::milliseconds wait = 5s) {
    auto deadline = std::chrono::steady_clock::now() + wait;
    for (;;) {
      for (auto piece = demux_.next(); piece.ok() && piece->has_value(); piece = demux_.next())
        if ((*piece)->conn == nri_mux::kRuntimeServiceConn) frames_.feed((*piece)->payload);
      if (auto f = frames_.next()) {
        auto a = ttrpc::decode_response(*f);
        if (a.ok()) return *a;
      }
      if (!read_some(deadline)) return std::nullopt;
    }
  }
  // True when berth closes the socket within `wait`.
  bool closed_by_berth(std::chrono::milliseconds wait) {
    auto deadline = std::chrono::steady_clock::now() + wait;
    while (read_some(deadline)) {
    }
    return eof_;
  }

 private:
  bool read_some(std::chrono::steady_clock::time_point deadline) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0 || eof_) return false;
    pollfd p{fd_.get(), POLLIN, 0};
    if (::poll(&p, 1, static_cast<int>(left.count())) <= 0) return false;
    char buf[4096];
    ssize_t n = ::read(fd_.get(), buf, sizeof buf);
    if (n <= 0) {
      eof_ = true;
      return false;
    }
    demux_.feed(std::string_view(buf, static_cast<size_t>(n)));
    return true;
  }
  UniqueFd fd_;
  bool connected_ = false, eof_ = false;
  nri_mux::Demux demux_;
  ttrpc::FrameReader frames_;
};

class NriPluginsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto started =
        NriPlugins::start({.socket_path = dir_ / "nri.sock", .registration_timeout = 300ms, .request_timeout = 300ms});
    ASSERT_TRUE(started.ok()) << started.status().message();
    plugins_ = std::move(*started);
  }
  std::string register_request(const std::string& name, const std::string& idx) {
    api::RegisterPluginRequest r;
    r.set_plugin_name(name);
    r.set_plugin_idx(idx);
    return r.SerializeAsString();
  }
  test::TempDir dir_{"berth-nri-unit"};
  std::unique_ptr<NriPlugins> plugins_;
};

TEST_F(NriPluginsTest, ARegistrationUnderABadNameOrIndexIsRefusedNamingTheField) {
  RawPeer peer(dir_ / "nri.sock");
  ASSERT_TRUE(peer.connected());
  peer.call_runtime(1, "RegisterPlugin", register_request("bad name", "10"));
  auto a = peer.answer();
  ASSERT_TRUE(a);
  EXPECT_EQ(a->status.code(), Code::invalid_argument);
  EXPECT_NE(a->status.message().find("plugin_name \"bad name\""), std::string::npos) << a->status.message();
  peer.call_runtime(3, "RegisterPlugin", register_request("good", "1"));
  a = peer.answer();
  ASSERT_TRUE(a);
  EXPECT_NE(a->status.message().find("plugin_idx \"1\": not two digits"), std::string::npos) << a->status.message();
  // Unknown methods of the Runtime service are UNIMPLEMENTED, as ttrpc answers them.
  peer.call_runtime(5, "Nonsense", "");
  a = peer.answer();
  ASSERT_TRUE(a);
  EXPECT_EQ(a->status.code(), Code::unimplemented);
  // Never registered: cut off at the registration timeout, and never listed.
  EXPECT_TRUE(peer.closed_by_berth(3s));
  EXPECT_TRUE(plugins_->plugins().empty());
}

TEST_F(NriPluginsTest, APeerThatNeverRegistersIsCutOff) {
  RawPeer peer(dir_ / "nri.sock");
  ASSERT_TRUE(peer.connected());
  EXPECT_TRUE(peer.closed_by_berth(3s));
}

TEST_F(NriPluginsTest, AFrameOverTheBoundEndsTheConnectionAndBerthTakesTheNext) {
  RawPeer peer(dir_ / "nri.sock");
  ASSERT_TRUE(peer.connected());
  // A multiplexer header announcing 64 MiB: berth refuses it before reading any of it.
  std::string header = {0, 0, 0, 2, 4, 0, 0, 0};
  peer.send_bytes(header);
  EXPECT_TRUE(peer.closed_by_berth(3s));
  // A registration that answers nothing further is still answered on a new connection.
  RawPeer next(dir_ / "nri.sock");
  ASSERT_TRUE(next.connected());
  next.call_runtime(1, "RegisterPlugin", register_request("next", "20"));
  auto a = next.answer();
  ASSERT_TRUE(a);
  EXPECT_TRUE(a->status.ok()) << a->status.message();
  // It registered but does not answer Configure: gone after the request timeout, never listed.
  EXPECT_TRUE(next.closed_by_berth(3s));
  EXPECT_TRUE(plugins_->plugins().empty());
}

TEST(NriPluginsStart, AMisnamedProgramInThePluginDirectoryFailsTheStart) {
  test::TempDir dir("berth-nri-unit");
  test::write_file(dir / "no-index", "#!/bin/sh\n", 0755);
  auto started = NriPlugins::start({.plugin_dir = dir.path()});
  ASSERT_FALSE(started.ok());
  EXPECT_NE(started.status().message().find("no-index: not named NN-name"), std::string::npos)
      << started.status().message();
}

}  // namespace
}  // namespace berth::nri
