// OtlpExporter (see otlp_exporter.h): a queue, a sender thread, one short HTTP/1.1 POST per batch.
#include "berth/otlp_exporter.h"

#include <sys/socket.h>

#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <spdlog/spdlog.h>
#include <thread>

#include "berth/host_port.h"
#include "berth/mutex.h"

namespace berth {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

// Where spans go: out of the anonymous namespace, as OtlpExporter::Impl holds one.
struct OtlpEndpoint {
  std::string host, port, target;
};

namespace {

constexpr size_t kMaxQueued = 4096;
constexpr size_t kBatch = 512;
constexpr auto kFlushInterval = std::chrono::seconds(1);
constexpr auto kSendTimeout = std::chrono::seconds(5);

Result<OtlpEndpoint> parse_endpoint(const std::string& url) {
  const std::string scheme = "http://";
  if (url.rfind(scheme, 0) != 0)
    return invalid_argument("tracing_endpoint: \"" + url + "\" is not an http:// URL (OTLP/HTTP, plain HTTP)");
  std::string rest = url.substr(scheme.size());
  size_t slash = rest.find('/');
  std::string authority = rest.substr(0, slash);
  auto hp = parse_host_port(authority, "tracing_endpoint");
  if (!hp.ok()) return hp.status();
  if (hp->port == 0) return invalid_argument("tracing_endpoint: \"" + url + "\" names no port");
  return OtlpEndpoint{hp->host, std::to_string(hp->port),
                      slash == std::string::npos ? "/v1/traces" : rest.substr(slash)};
}

// One POST; OK when the collector answered 2xx within kSendTimeout.
Status post(const OtlpEndpoint& e, const std::string& body) {
  asio::io_context ioc;
  beast::error_code ec;
  tcp::resolver resolver(ioc);
  auto results = resolver.resolve(e.host, e.port, ec);
  if (ec || results.empty()) return Status(Code::unavailable, "resolve " + e.host + ": " + ec.message());
  const tcp::endpoint to = *results.begin();
  // Close-on-exec from its creation: nothing of berthd's crosses into what it starts.
  int fd = ::socket(to.protocol().family(), SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return errno_status(errno, "socket");
  tcp::socket socket(ioc);
  socket.assign(to.protocol(), fd, ec);
  if (ec) {
    ::close(fd);
    return Status(Code::internal, "socket: " + ec.message());
  }
  beast::tcp_stream stream(std::move(socket));
  http::request<http::string_body> req{http::verb::post, e.target, 11};
  req.set(http::field::host, e.host + ":" + e.port);
  req.set(http::field::content_type, "application/json");
  req.body() = body;
  req.prepare_payload();
  beast::flat_buffer buffer;
  http::response<http::string_body> res;
  Status result(Code::deadline_exceeded, "no answer within " + std::to_string(kSendTimeout.count()) + "s");
  stream.expires_after(kSendTimeout);
  stream.async_connect(to, [&](beast::error_code c) {
    if (c) return void(result = Status(Code::unavailable, "connect: " + c.message()));
    http::async_write(stream, req, [&](beast::error_code w, size_t) {
      if (w) return void(result = Status(Code::unavailable, "send: " + w.message()));
      http::async_read(stream, buffer, res, [&](beast::error_code r, size_t) {
        if (r) return void(result = Status(Code::unavailable, "read the answer: " + r.message()));
        result = res.result_int() / 100 == 2
                     ? ok_status()
                     : Status(Code::unavailable, "the collector answered " + std::to_string(res.result_int()));
      });
    });
  });
  ioc.run();
  return result;
}

}  // namespace

struct OtlpExporter::Impl {
  OtlpEndpoint endpoint;
  std::string service_name;
  Mutex mu;
  std::condition_variable wake;
  std::deque<SpanRecord> queue BERTH_GUARDED_BY(mu);
  uint64_t dropped BERTH_GUARDED_BY(mu) = 0;
  bool stopping BERTH_GUARDED_BY(mu) = false;
  std::chrono::steady_clock::time_point last_error_log{};
  std::thread thread;

  void run() {
    for (;;) {
      std::vector<SpanRecord> batch;
      bool stop = false;
      {
        MutexLock lock(mu);
        wake.wait_for(lock.native(), kFlushInterval,
                      [&]() BERTH_REQUIRES(mu) { return stopping || queue.size() >= kBatch; });
        stop = stopping;
        while (!queue.empty() && batch.size() < kBatch) {
          batch.push_back(std::move(queue.front()));
          queue.pop_front();
        }
      }
      if (!batch.empty()) send(batch);
      if (stop) {
        MutexLock lock(mu);
        if (queue.empty()) return;
      }
    }
  }

  void send(const std::vector<SpanRecord>& batch) {
    Status s = post(endpoint, otlp_json(batch, service_name));
    if (s.ok()) return;
    auto now = std::chrono::steady_clock::now();
    if (now - last_error_log < std::chrono::minutes(1)) return;
    last_error_log = now;
    uint64_t lost = 0;
    {
      MutexLock lock(mu);
      lost = dropped;
    }
    spdlog::warn("tracing: {} spans not sent to http://{}:{}{}: {} ({} dropped so far from a full queue)", batch.size(),
                 endpoint.host, endpoint.port, endpoint.target, s.message(), lost);
  }
};

Result<std::unique_ptr<OtlpExporter>> OtlpExporter::start(const std::string& endpoint, std::string service_name) {
  auto e = parse_endpoint(endpoint);
  if (!e.ok()) return e.status();
  auto impl = std::make_unique<Impl>();
  impl->endpoint = *e;
  impl->service_name = std::move(service_name);
  Impl* raw = impl.get();
  try {
    raw->thread = std::thread([raw] { raw->run(); });
  } catch (const std::exception& ex) {
    return Status(Code::internal, std::string("tracing: cannot start its thread: ") + ex.what());
  }
  return std::unique_ptr<OtlpExporter>(new OtlpExporter(std::move(impl)));
}

OtlpExporter::OtlpExporter(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

OtlpExporter::~OtlpExporter() {
  {
    MutexLock lock(impl_->mu);
    impl_->stopping = true;
  }
  impl_->wake.notify_all();
  if (impl_->thread.joinable()) impl_->thread.join();
}

void OtlpExporter::submit(SpanRecord span) {
  bool full = false;
  {
    MutexLock lock(impl_->mu);
    if (impl_->queue.size() >= kMaxQueued) {
      impl_->queue.pop_front();
      ++impl_->dropped;
    }
    impl_->queue.push_back(std::move(span));
    full = impl_->queue.size() >= kBatch;
  }
  if (full) impl_->wake.notify_one();
}

}  // namespace berth
