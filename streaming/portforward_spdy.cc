// Port forwarding over SPDY (portforward.k8s.io): every forwarded connection is a pair of client
// streams with the same requestID header — streamType "error" and "data" — and a port header.
// A pair whose second stream does not come in time is dropped with an error; the connection ends
// when the client closes it (or sends GOAWAY and its pairs are done).
#include <spdlog/spdlog.h>

#include <boost/asio/steady_timer.hpp>
#include <charconv>
#include <map>

#include "portforward.h"
#include "sessions.h"

namespace berth::streaming {

namespace {

class SpdyForwardHandler : public SpdyHandler, public std::enable_shared_from_this<SpdyForwardHandler> {
 public:
  SpdyForwardHandler(ServerContext& ctx, std::shared_ptr<SpdyConnection> conn, PendingRequest request,
                     uint64_t registry_id)
      : ctx_(ctx), conn_(conn), strand_(conn->executor()), request_(std::move(request)), registry_id_(registry_id) {}

  bool on_stream(const std::shared_ptr<SpdyStream>& s) override {
    std::string port_text = s->header("port");
    int port = 0;
    auto [end, ec] = std::from_chars(port_text.data(), port_text.data() + port_text.size(), port);
    if (ec != std::errc() || end != port_text.data() + port_text.size() || port < 1 || port > 65535) {
      spdlog::info("streaming: port-forward stream with port header '{}' refused", port_text);
      return false;
    }
    std::string type = s->header("streamtype");
    if (type != "data" && type != "error") {
      spdlog::info("streaming: port-forward stream of type '{}' refused", type);
      return false;
    }
    std::string id = s->header("requestid");
    if (id.empty())  // old clients: pair consecutive stream ids (error n, data n+2)
      id = std::to_string(type == "error" ? s->id() : s->id() - 2);
    auto& p = pending_[id];
    auto& slot = type == "data" ? p.data : p.error;
    if (slot) {
      spdlog::info("streaming: port-forward request {} has a second {} stream", id, type);
      return false;
    }
    slot = s;
    p.port = port;
    if (!p.timer) {
      p.timer = std::make_shared<boost::asio::steady_timer>(strand_, ctx_.config.stream_creation_timeout);
      p.timer->async_wait([weak = weak_from_this(), id](const boost::system::error_code& ec) {
        if (auto self = weak.lock(); self && !ec) self->expire(id);
      });
    }
    if (p.data && p.error) {
      Pending ready = std::move(p);
      pending_.erase(id);
      ready.timer->cancel();
      start_pair(std::move(ready));
    }
    return true;
  }

  void on_goaway() override {
    goaway_ = true;
    maybe_close();
  }

  void on_closed(bool) override {
    ctx_.registry.remove(registry_id_);
    closed_ = true;
    for (auto& [n, pair] : active_) pair->stop();
    active_.clear();
    for (auto& [id, p] : pending_) p.timer->cancel();
    pending_.clear();
  }

 private:
  struct Pending {
    std::shared_ptr<SpdyStream> data, error;
    int port = 0;
    std::shared_ptr<boost::asio::steady_timer> timer;
  };

  void start_pair(Pending p) {
    uint64_t n = ++next_;
    auto pair = std::make_shared<ForwardPair>(ctx_, strand_, request_.sandbox_id, p.port, p.data, p.error, true,
                                              [weak = weak_from_this(), n] {
                                                if (auto self = weak.lock()) {
                                                  self->active_.erase(n);
                                                  self->maybe_close();
                                                }
                                              });
    active_[n] = pair;
    pair->start();
  }

  void expire(const std::string& id) {
    auto it = pending_.find(id);
    if (it == pending_.end()) return;
    Pending p = std::move(it->second);
    pending_.erase(it);
    spdlog::info("streaming: port-forward request {} timed out waiting for its streams", id);
    if (p.error) {
      p.error->send("timed out waiting for streams", [s = p.error](bool) { s->finish(); });
    }
    if (p.data) p.data->reset();
  }

  void maybe_close() {
    if (goaway_ && !closed_ && active_.empty() && pending_.empty())
      if (auto c = conn_.lock()) c->close();
  }

  ServerContext& ctx_;
  std::weak_ptr<SpdyConnection> conn_;
  boost::asio::any_io_executor strand_;
  PendingRequest request_;
  uint64_t registry_id_;
  std::map<std::string, Pending> pending_;
  std::map<uint64_t, std::shared_ptr<ForwardPair>> active_;
  uint64_t next_ = 0;
  bool goaway_ = false, closed_ = false;
};

}  // namespace

void serve_forward_spdy(ServerContext& ctx, std::shared_ptr<SpdyConnection> conn, PendingRequest request,
                        uint64_t registry_id) {
  auto handler = std::make_shared<SpdyForwardHandler>(ctx, conn, std::move(request), registry_id);
  conn->start(handler);
}

}  // namespace berth::streaming
