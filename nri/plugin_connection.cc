// See plugin_connection.h: NRI's multiplexed ttrpc, both directions, over one socket.
#include "plugin_connection.h"

#include <sys/socket.h>
#include <unistd.h>

#include <spdlog/spdlog.h>

#include "berth/nri_mux.h"
#include "berth/ttrpc_wire.h"

namespace berth::nri {

namespace {

constexpr const char* kPluginService = "nri.pkg.api.v1alpha1.Plugin";
constexpr const char* kRuntimeService = "nri.pkg.api.v1alpha1.Runtime";

}  // namespace

bool is_fatal(const Status& s) { return s.code() == Code::deadline_exceeded || s.code() == Code::unavailable; }

PluginConnection::PluginConnection(UniqueFd socket, std::string what, Serve serve)
    : socket_(std::move(socket)), serve_(std::move(serve)), what_(std::move(what)) {}

void PluginConnection::start() {
  reader_ = std::thread([this] { read_loop(); });
  server_ = std::thread([this] { serve_loop(); });
}

PluginConnection::~PluginConnection() {
  close("berth let it go");
  // Never joined from themselves (std::thread would throw): a thread ending its own connection
  // only returns after this.
  for (std::thread* t : {&reader_, &server_})
    if (t->joinable()) t->get_id() == std::this_thread::get_id() ? t->detach() : t->join();
}

void PluginConnection::rename(std::string what) {
  MutexLock lock(mu_);
  what_ = std::move(what);
}

void PluginConnection::on_closed(std::function<void(const std::string&)> f) {
  MutexLock lock(mu_);
  on_closed_ = std::move(f);
}

bool PluginConnection::closed() const {
  MutexLock lock(mu_);
  return closed_;
}

std::string PluginConnection::close_reason() const {
  MutexLock lock(mu_);
  return closed_why_;
}

void PluginConnection::fail_pending(const std::string& why) {
  for (auto& [id, p] : pending_) {
    p->done = true;
    p->answer = Status(Code::unavailable, what_ + ": " + why);
  }
  pending_.clear();
}

void PluginConnection::close(const std::string& why) {
  {
    MutexLock lock(mu_);
    if (!closed_) {
      closed_ = true;
      closed_why_ = why;
      fail_pending(why);
    }
  }
  cv_.notify_all();
  // The reader sees EOF and ends; the plugin sees EOF too.
  ::shutdown(socket_.get(), SHUT_RDWR);
}

Status PluginConnection::send(uint32_t conn, const std::string& frame) {
  const std::string bytes = nri_mux::encode(conn, frame);
  MutexLock lock(write_mu_);
  size_t done = 0;
  while (done < bytes.size()) {
    ssize_t n = ::send(socket_.get(), bytes.data() + done, bytes.size() - done, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return errno_status(errno, "send to the plugin", Code::unavailable);
    done += static_cast<size_t>(n);
  }
  return ok_status();
}

Result<std::string> PluginConnection::call(const std::string& method, const std::string& request,
                                           std::chrono::milliseconds timeout) {
  auto pending = std::make_shared<Pending>();
  uint32_t stream = 0;
  std::string what;
  {
    MutexLock lock(mu_);
    what = what_;
    if (closed_) return Status(Code::unavailable, what_ + ": connection closed (" + closed_why_ + ")");
    stream = next_stream_;
    next_stream_ += 2;
    pending_[stream] = pending;
  }
  auto frame = ttrpc::encode_request({.stream_id = stream,
                                      .service = kPluginService,
                                      .method = method,
                                      .payload = request,
                                      .timeout_ns = std::chrono::nanoseconds(timeout).count()});
  Status sent = frame.ok() ? send(nri_mux::kPluginServiceConn, *frame) : frame.status();
  MutexLock lock(mu_);
  if (!sent.ok()) {
    pending_.erase(stream);
    return Status(sent.code(), what + ": " + method + ": " + sent.message());
  }
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!pending->done)
    if (cv_.wait_until(lock.native(), deadline) == std::cv_status::timeout && !pending->done) {
      pending_.erase(stream);
      return deadline_exceeded(what + ": " + method + ": no answer in " + std::to_string(timeout.count()) + " ms");
    }
  if (!pending->answer.ok())
    return Status(pending->answer.status().code(), pending->answer.status().message().empty()
                                                       ? what + ": " + method + ": connection closed"
                                                       : pending->answer.status().message());
  return std::move(pending->answer);
}

void PluginConnection::read_loop() {
  nri_mux::Demux demux;
  ttrpc::FrameReader answers, requests;
  std::string why = "the plugin closed its socket";
  char buf[16384];
  for (bool open = true; open;) {
    ssize_t n = ::read(socket_.get(), buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    demux.feed(std::string_view(buf, static_cast<size_t>(n)));
    while (open) {
      auto piece = demux.next();
      if (!piece.ok()) {
        why = piece.status().message();
        open = false;
        break;
      }
      if (!*piece) break;
      // Frames of a connection not open here (0, or another number) are dropped, as the reference does.
      if ((*piece)->conn == nri_mux::kPluginServiceConn) {
        answers.feed((*piece)->payload);
        while (auto f = answers.next()) {
          auto answer = ttrpc::decode_response(*f);
          MutexLock lock(mu_);
          auto it = pending_.find(f->stream_id);
          if (it == pending_.end()) continue;  // a call that timed out already
          it->second->done = true;
          if (!answer.ok())
            it->second->answer = Status(Code::unavailable, what_ + ": " + answer.status().message());
          else if (!answer->status.ok())
            it->second->answer = Status(answer->status.code(), what_ + ": " + answer->status.message());
          else
            it->second->answer = std::move(answer->payload);
          pending_.erase(it);
          cv_.notify_all();
        }
      } else if ((*piece)->conn == nri_mux::kRuntimeServiceConn) {
        requests.feed((*piece)->payload);
        while (auto f = requests.next()) {
          MutexLock lock(mu_);
          requests_.push_back(std::move(*f));
          cv_.notify_all();
        }
      }
    }
  }
  std::function<void(const std::string&)> closed_hook;
  {
    MutexLock lock(mu_);
    if (!closed_) {
      closed_ = true;
      closed_why_ = why;
    }
    why = closed_why_;
    fail_pending(closed_why_);
    closed_hook = std::move(on_closed_);
  }
  cv_.notify_all();
  if (closed_hook) closed_hook(why);
}

void PluginConnection::serve_loop() {
  for (;;) {
    ttrpc::Frame f;
    {
      MutexLock lock(mu_);
      while (requests_.empty() && !closed_) cv_.wait(lock.native());
      if (closed_) return;
      f = std::move(requests_.front());
      requests_.pop_front();
    }
    auto call = ttrpc::decode_request(f);
    ttrpc::Answer answer{.stream_id = f.stream_id};
    if (!call.ok()) {
      answer.status = call.status();
    } else if (call->service != kRuntimeService) {
      answer.status = unimplemented("service " + call->service);
    } else {
      auto out = serve_(call->method, call->payload);
      if (out.ok())
        answer.payload = std::move(*out);
      else
        answer.status = out.status();
    }
    auto bytes = ttrpc::encode_response(answer);
    if (bytes.ok() && !send(nri_mux::kRuntimeServiceConn, *bytes).ok()) close("cannot answer the plugin");
  }
}

}  // namespace berth::nri
