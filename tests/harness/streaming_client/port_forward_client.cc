// Port-forward clients: over SPDY an error+data stream pair per connection (tagged with port and
// requestID headers, the error stream half-closed at once, as client-go does); over WebSocket the
// channel pairs the server opened for the URL's ports.
#include "berth/test/streaming_client.h"
#include "spdy_client.h"
#include "ws_client.h"

namespace berth::test {

Result<std::string> PortForwardClient::Stream::read_exact(size_t n, std::chrono::milliseconds timeout) {
  std::string out;
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (out.size() < n) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0)
      return deadline_exceeded("read_exact: " + std::to_string(out.size()) + " of " + std::to_string(n));
    auto got = read(n - out.size(), left);
    if (!got.ok()) return got.status();
    if (got->empty()) return Status(Code::unavailable, "read_exact: stream ended after " + std::to_string(out.size()));
    out += *got;
  }
  return out;
}

std::string PortForwardClient::Stream::read_to_end(std::chrono::milliseconds timeout) {
  std::string out;
  auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return out;
    auto got = read(1 << 20, left);
    if (!got.ok() || got->empty()) return out;
    out += *got;
  }
}

namespace {

class SpdyForwardStream : public PortForwardClient::Stream {
 public:
  SpdyForwardStream(SpdyClient& c, int32_t port, uint32_t data, uint32_t error, std::chrono::milliseconds timeout)
      : c_(c), port_(port), data_(data), error_(error), timeout_(timeout) {}
  int32_t port() const override { return port_; }
  Status write(std::string_view data) override { return c_.write(data_, data, timeout_); }
  Status close_write() override { return c_.finish(data_); }
  Result<std::string> read(size_t max, std::chrono::milliseconds timeout) override {
    return c_.read(data_, max, timeout);
  }
  std::string error_text(std::chrono::milliseconds timeout) override {
    std::string out;
    auto deadline = std::chrono::steady_clock::now() + timeout;
    for (;;) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0) return out;
      auto got = c_.read(error_, 1 << 16, left);
      if (!got.ok() || got->empty()) return out;
      out += *got;
    }
  }

 private:
  SpdyClient& c_;
  int32_t port_;
  uint32_t data_, error_;
  std::chrono::milliseconds timeout_;
};

class SpdyForward : public PortForwardClient {
 public:
  SpdyForward(std::unique_ptr<SpdyClient> c, std::chrono::milliseconds timeout) : c_(std::move(c)), timeout_(timeout) {}
  const std::string& protocol() const override { return c_->protocol(); }
  Result<Stream*> open(int32_t port) override {
    std::string request = std::to_string(next_request_++);
    std::string p = std::to_string(port);
    uint32_t error = c_->open({{"streamtype", "error"}, {"port", p}, {"requestid", request}});
    auto s = c_->finish(error);
    if (!s.ok()) return s;
    uint32_t data = c_->open({{"streamtype", "data"}, {"port", p}, {"requestid", request}});
    streams_.push_back(std::make_unique<SpdyForwardStream>(*c_, port, data, error, timeout_));
    return streams_.back().get();
  }
  bool wait_closed(std::chrono::milliseconds timeout) override { return c_->wait_closed(timeout); }
  uint64_t window_violations() override { return c_->window_violations(); }

 private:
  std::unique_ptr<SpdyClient> c_;
  std::chrono::milliseconds timeout_;
  std::vector<std::unique_ptr<SpdyForwardStream>> streams_;
  int next_request_ = 0;
};

class WsForwardStream : public PortForwardClient::Stream {
 public:
  WsForwardStream(WsClient& c, int32_t port, uint8_t data) : c_(c), port_(port), data_(data) {}
  int32_t port() const override { return port_; }
  Status write(std::string_view data) override {
    // Messages of at most 32 KiB, as a client copying with io.Copy would send.
    return c_.send_chunked(data_, data, 32 * 1024);
  }
  Status close_write() override { return unimplemented("websocket port forwarding has no half-close"); }
  Result<std::string> read(size_t max, std::chrono::milliseconds timeout) override {
    return c_.read(data_, max, timeout);
  }
  std::string error_text(std::chrono::milliseconds timeout) override {
    auto got = c_.read(uint8_t(data_ + 1), 1 << 16, timeout);
    return got.ok() ? *got : "";
  }
  int wire_port(std::chrono::milliseconds timeout) { return c_.port_of(data_, timeout); }

 private:
  WsClient& c_;
  int32_t port_;
  uint8_t data_;
};

class WsForward : public PortForwardClient {
 public:
  WsForward(std::unique_ptr<WsClient> c, std::vector<int32_t> ports) : c_(std::move(c)), ports_(std::move(ports)) {
    used_.resize(ports_.size());
  }
  const std::string& protocol() const override { return c_->protocol(); }
  Result<Stream*> open(int32_t port) override {
    for (size_t i = 0; i < ports_.size(); ++i) {
      if (used_[i] || ports_[i] != port) continue;
      used_[i] = true;
      auto s = std::make_unique<WsForwardStream>(*c_, port, uint8_t(2 * i));
      if (s->wire_port(std::chrono::seconds(10)) != port)
        return internal_error("channel " + std::to_string(2 * i) + " did not announce port " + std::to_string(port));
      streams_.push_back(std::move(s));
      return streams_.back().get();
    }
    return not_found("no unused channel pair for port " + std::to_string(port));
  }
  bool wait_closed(std::chrono::milliseconds timeout) override { return c_->wait_closed(timeout); }
  uint64_t window_violations() override { return 0; }

 private:
  std::unique_ptr<WsClient> c_;
  std::vector<int32_t> ports_;
  std::vector<bool> used_;
  std::vector<std::unique_ptr<WsForwardStream>> streams_;
};

}  // namespace

Result<std::unique_ptr<PortForwardClient>> PortForwardClient::connect(const std::string& url, StreamOptions o,
                                                                      std::vector<int32_t> ws_ports) {
  if (o.transport == Transport::websocket) {
    std::string full = url;
    for (size_t i = 0; i < ws_ports.size(); ++i)
      full += std::string(full.find('?') == std::string::npos ? "?" : "&") + "port=" + std::to_string(ws_ports[i]);
    if (o.protocols == StreamOptions{}.protocols) o.protocols = {"v4.channel.k8s.io"};
    auto c = WsClient::dial(full, o.protocols, true, o.timeout);
    if (!c.ok()) return c.status();
    return std::unique_ptr<PortForwardClient>(new WsForward(std::move(*c), std::move(ws_ports)));
  }
  if (o.protocols == StreamOptions{}.protocols) o.protocols = {"portforward.k8s.io"};
  SpdyClient::Options so;
  so.flow_control = o.spdy_flow_control;
  auto c = SpdyClient::dial(url, o.protocols, so, o.timeout);
  if (!c.ok()) return c.status();
  return std::unique_ptr<PortForwardClient>(new SpdyForward(std::move(*c), o.timeout));
}

}  // namespace berth::test
