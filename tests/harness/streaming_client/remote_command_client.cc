// Exec/attach clients over SPDY (one stream per stdio channel, like client-go) and WebSocket
// (channel-numbered messages), with the exit code read from a v4+ Status on the error stream.
#include <nlohmann/json.hpp>
#include <set>
#include <thread>

#include "berth/test/streaming_client.h"
#include "http_upgrade.h"
#include "spdy_client.h"
#include "ws_client.h"

namespace berth::test {

namespace {

std::optional<int> parse_exit_code(const std::string& protocol, const std::string& error_stream) {
  if (protocol.rfind("v4.", 0) != 0 && protocol.rfind("v5.", 0) != 0) return std::nullopt;
  auto j = nlohmann::json::parse(error_stream, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return std::nullopt;
  if (j.value("status", "") == "Success") return 0;
  if (j.value("reason", "") != "NonZeroExitCode") return std::nullopt;
  for (const auto& cause : j["details"]["causes"])
    if (cause.value("reason", "") == "ExitCode") return std::atoi(cause.value("message", "").c_str());
  return std::nullopt;
}

std::string size_json(uint16_t w, uint16_t h) {
  return "{\"Width\":" + std::to_string(w) + ",\"Height\":" + std::to_string(h) + "}";
}

class SpdyCommand : public RemoteCommandClient {
 public:
  explicit SpdyCommand(std::unique_ptr<SpdyClient> c, const StreamOptions& o) : c_(std::move(c)), opts_(o) {
    auto open = [&](const char* type) { return c_->open({{"streamtype", type}}); };
    error_ = open("error");
    if (o.stdin) stdin_ = open("stdin");
    if (o.stdout) stdout_ = open("stdout");
    if (o.stderr && !o.tty) stderr_ = open("stderr");
    bool resize_supported = c_->protocol() != "channel.k8s.io" && c_->protocol() != "v2.channel.k8s.io";
    if (o.tty && resize_supported) resize_ = open("resize");
  }
  const std::string& protocol() const override { return c_->protocol(); }
  Status send_stdin(std::string_view data) override { return c_->write(stdin_, data, opts_.timeout); }
  Status close_stdin() override { return c_->finish(stdin_); }
  Status resize(uint16_t w, uint16_t h) override {
    if (!resize_) return unimplemented("no resize stream with " + protocol());
    return c_->write(resize_, size_json(w, h), opts_.timeout);
  }
  bool wait_stdout(std::string_view text, std::chrono::milliseconds timeout) override {
    auto deadline = std::chrono::steady_clock::now() + timeout;
    while (result_.out.find(text) == std::string::npos) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0 || !pump(left)) return false;
    }
    return true;
  }
  CommandResult wait(std::chrono::milliseconds timeout) override {
    auto deadline = std::chrono::steady_clock::now() + timeout;
    while (!active().empty()) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0 || !pump(left)) return result_;
    }
    result_.ended = true;
    result_.exit_code = parse_exit_code(protocol(), result_.error_stream);
    return result_;
  }
  void abort() override { c_->abort(); }
  Status send_raw(std::string_view bytes) override { return c_->send_raw(bytes); }
  uint64_t window_violations() override { return c_->window_violations(); }
  Status ping(std::chrono::milliseconds timeout) override {
    uint32_t before = c_->pings_answered();
    auto s = c_->ping(next_ping_ += 2);
    if (!s.ok()) return s;
    auto deadline = std::chrono::steady_clock::now() + timeout;
    while (c_->pings_answered() == before) {
      if (std::chrono::steady_clock::now() > deadline || c_->closed()) return deadline_exceeded("no PING reply");
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    return ok_status();
  }

 private:
  uint32_t next_ping_ = 1;
  std::vector<uint32_t> active() {
    std::vector<uint32_t> ids;
    for (uint32_t id : {error_, stdout_, stderr_})
      if (id && !ended_.count(id)) ids.push_back(id);
    return ids;
  }
  // Takes whatever arrives first; false when nothing came in time.
  bool pump(std::chrono::milliseconds timeout) {
    auto got = c_->read_any(active(), timeout);
    if (!got.ok()) return false;
    auto& [id, data] = *got;
    if (data.empty()) ended_.insert(id);
    (id == stdout_ ? result_.out : id == stderr_ ? result_.err : result_.error_stream) += data;
    return true;
  }

  std::unique_ptr<SpdyClient> c_;
  StreamOptions opts_;
  uint32_t error_ = 0, stdin_ = 0, stdout_ = 0, stderr_ = 0, resize_ = 0;
  std::set<uint32_t> ended_;
  CommandResult result_;
};

class WsCommand : public RemoteCommandClient {
 public:
  WsCommand(std::unique_ptr<WsClient> c, const StreamOptions& o) : c_(std::move(c)), opts_(o) {}
  const std::string& protocol() const override { return c_->protocol(); }
  Status send_stdin(std::string_view data) override { return c_->send(0, data); }
  Status close_stdin() override {
    if (protocol() != "v5.channel.k8s.io") return unimplemented("no stdin close signal with '" + protocol() + "'");
    return c_->send_message(std::string{char(255), char(0)}, true);
  }
  Status resize(uint16_t w, uint16_t h) override { return c_->send(4, size_json(w, h)); }
  bool wait_stdout(std::string_view text, std::chrono::milliseconds timeout) override {
    auto deadline = std::chrono::steady_clock::now() + timeout;
    while (result_.out.find(text) == std::string::npos) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0 || !pump(left) || closed_) return result_.out.find(text) != std::string::npos;
    }
    return true;
  }
  CommandResult wait(std::chrono::milliseconds timeout) override {
    auto deadline = std::chrono::steady_clock::now() + timeout;
    while (!closed_) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0 || !pump(left)) return result_;
    }
    result_.ended = true;
    result_.exit_code = parse_exit_code(protocol(), result_.error_stream);
    return result_;
  }
  void abort() override { c_->abort(); }
  Status send_raw(std::string_view bytes) override { return c_->send_message(std::string(bytes), true); }
  uint64_t window_violations() override { return 0; }
  Status ping(std::chrono::milliseconds) override { return unimplemented("ping over websocket"); }

 private:
  bool pump(std::chrono::milliseconds timeout) {
    auto got = c_->read_any({1, 2, 3}, timeout);
    if (!got.ok()) return false;
    auto& [ch, data] = *got;
    if (data.empty()) {
      closed_ = true;
      return true;
    }
    (ch == 1 ? result_.out : ch == 2 ? result_.err : result_.error_stream) += data;
    return true;
  }

  std::unique_ptr<WsClient> c_;
  StreamOptions opts_;
  bool closed_ = false;
  CommandResult result_;
};

}  // namespace

Result<std::unique_ptr<RemoteCommandClient>> RemoteCommandClient::connect(const std::string& url,
                                                                          const StreamOptions& o) {
  if (o.transport == Transport::websocket) {
    auto c = WsClient::dial(url, o.protocols, false, o.timeout);
    if (!c.ok()) return c.status();
    return std::unique_ptr<RemoteCommandClient>(new WsCommand(std::move(*c), o));
  }
  SpdyClient::Options so;
  so.flow_control = o.spdy_flow_control;
  auto c = SpdyClient::dial(url, o.protocols, so, o.timeout);
  if (!c.ok()) return c.status();
  return std::unique_ptr<RemoteCommandClient>(new SpdyCommand(std::move(*c), o));
}

Result<CommandResult> run_command(const std::string& url, const StreamOptions& options, std::string_view stdin_data,
                                  bool close_stdin) {
  auto c = RemoteCommandClient::connect(url, options);
  if (!c.ok()) return c.status();
  if (options.stdin) {
    if (!stdin_data.empty()) {
      auto s = (*c)->send_stdin(stdin_data);
      if (!s.ok()) return s;
    }
    if (close_stdin) {
      auto s = (*c)->close_stdin();
      if (!s.ok() && s.code() != Code::unimplemented) return s;
    }
  }
  return (*c)->wait(options.timeout);
}

int http_status_of(const Status& status) { return refusal_code(status); }

}  // namespace berth::test
