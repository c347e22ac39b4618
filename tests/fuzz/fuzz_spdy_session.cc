// Fuzz target: a server SPDY/3.1 connection (streaming/spdy_session.h, spdy_dispatch.cc) fed a
// client's frames: stream life cycle, header decompression in step, RST_STREAM, SETTINGS, PING,
// GOAWAY, and the stream and session windows. The handler behind it echoes each stream's data
// (so the send scheduler and flow control run), refuses streams whose "streamtype" is "refuse" and
// closes the connection on "close". The input is everything the client sent after the upgrade.
#include <signal.h>
#include <spdlog/spdlog.h>
#include <sys/socket.h>
#include <unistd.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/strand.hpp>
#include <chrono>
#include <vector>

#include "berth/unique_fd.h"
#include "fuzz_support.h"
#include "spdy_session.h"

namespace asio = boost::asio;
using namespace berth;
using namespace berth::streaming;

namespace {

class EchoHandler : public SpdyHandler {
 public:
  std::weak_ptr<SpdyConnection> conn;
  std::vector<std::shared_ptr<SpdyStream>> streams;
  bool closed = false;

  bool on_stream(const std::shared_ptr<SpdyStream>& s) override {
    FUZZ_CHECK(!closed);
    std::string type = s->header("streamtype");
    if (type == "refuse") return false;
    if (type == "close") {
      if (auto c = conn.lock()) c->close();
      return true;
    }
    std::weak_ptr<SpdyStream> weak = s;
    s->on_receive(
        [weak](std::string_view d, std::function<void()> consumed) {
          auto st = weak.lock();
          if (!st) return consumed();
          st->send(std::string(d.substr(0, 8192)), [consumed](bool) { consumed(); });
        },
        [weak] {
          if (auto st = weak.lock()) st->finish();
        });
    streams.push_back(s);
    return true;
  }
  void on_goaway() override {
    if (auto c = conn.lock()) c->close();
  }
  void on_closed(bool) override {
    FUZZ_CHECK(!closed);  // once
    closed = true;
    streams.clear();
  }
};

}  // namespace

BERTH_FUZZ_TARGET(spdy_session) {
  static const bool quiet = [] {
    signal(SIGPIPE, SIG_IGN);
    spdlog::set_level(spdlog::level::off);
    return true;
  }();
  (void)quiet;
  int sv[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0, sv) != 0) abort();
  UniqueFd client(sv[1]);
  auto handler = std::make_shared<EchoHandler>();
  {
    asio::io_context ioc;
    asio::ip::tcp::socket socket(asio::make_strand(ioc));
    socket.assign(asio::ip::tcp::v4(), sv[0]);
    auto conn = std::make_shared<SpdyConnection>(
        std::move(socket), std::string(reinterpret_cast<const char*>(data), size), std::chrono::milliseconds(0));
    handler->conn = conn;
    conn->start(handler);
    conn.reset();
    // The client reads everything and says nothing more than the input; once the connection has
    // nothing left to do it hangs up, which must end the connection whatever state it is in.
    for (;;) {
      berth::fuzz::drain(client.get());
      if (ioc.poll_one() > 0) continue;
      break;
    }
    shutdown(client.get(), SHUT_WR);
    ioc.restart();
    for (;;) {
      berth::fuzz::drain(client.get());
      if (ioc.run_one_for(std::chrono::milliseconds(2)) > 0) continue;
      if (ioc.stopped()) break;
    }
  }
  // The client's end of stream ends the connection, whatever state it was left in.
  FUZZ_CHECK(handler->closed && handler->streams.empty());
  return 0;
}
