// Tracing against a real berthd: calls that come with a W3C traceparent (as kubelet's do when its
// tracing is on) get a server span that continues the caller's trace, with berth's own steps (CNI
// plugins, runtime commands, the image pull) as its children, exported over OTLP/HTTP to a
// collector of the test's on loopback. Calls without a traceparent, or with a malformed one, are
// not traced and work as ever.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include <atomic>
#include <chrono>
#include <mutex>
#include <thread>

#include "pod_fixture.h"

namespace berth::test {
namespace {

using json = nlohmann::json;
using namespace std::chrono_literals;

// An OTLP/HTTP collector: every POST's JSON body kept, answered 200.
class Collector {
 public:
  Collector() {
    fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    EXPECT_EQ(::bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
    EXPECT_EQ(::listen(fd_, 16), 0);
    socklen_t len = sizeof a;
    ::getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &len);
    port_ = ntohs(a.sin_port);
    thread_ = std::thread([this] { serve(); });
  }
  ~Collector() {
    stop_ = true;
    ::shutdown(fd_, SHUT_RDWR);
    thread_.join();
    ::close(fd_);
  }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_) + "/v1/traces"; }
  // Every span received so far, and the request targets they came to.
  json spans() {
    std::lock_guard lock(mu_);
    json out = json::array();
    for (const auto& body : bodies_)
      for (const auto& rs : body["resourceSpans"])
        for (const auto& ss : rs["scopeSpans"])
          for (const auto& s : ss["spans"]) out.push_back(s);
    return out;
  }
  std::vector<std::string> targets() {
    std::lock_guard lock(mu_);
    return targets_;
  }

 private:
  void serve() {
    while (!stop_) {
      int c = ::accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC);
      if (c < 0) continue;
      std::string in;
      char buf[65536];
      size_t body_at = std::string::npos, length = 0;
      for (;;) {
        ssize_t n = ::read(c, buf, sizeof buf);
        if (n <= 0) break;
        in.append(buf, static_cast<size_t>(n));
        if (body_at == std::string::npos && (body_at = in.find("\r\n\r\n")) != std::string::npos) {
          body_at += 4;
          auto cl = in.find("Content-Length: ");
          if (cl == std::string::npos) cl = in.find("content-length: ");
          length = cl == std::string::npos ? 0 : std::stoul(in.substr(cl + 16));
        }
        if (body_at != std::string::npos && in.size() >= body_at + length) break;
      }
      const std::string ok = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Type: application/json\r\n\r\n{}";
      (void)!::write(c, ok.data(), ok.size());
      ::close(c);
      if (body_at == std::string::npos) continue;
      std::lock_guard lock(mu_);
      targets_.push_back(in.substr(in.find(' ') + 1, in.find(' ', in.find(' ') + 1) - in.find(' ') - 1));
      bodies_.push_back(json::parse(in.substr(body_at, length), nullptr, false));
    }
  }

  int fd_ = -1;
  int port_ = 0;
  std::atomic<bool> stop_{false};
  std::thread thread_;
  std::mutex mu_;
  std::vector<json> bodies_;
  std::vector<std::string> targets_;
};

constexpr const char* kTraceId = "4bf92f3577b34da6a3ce929d0e0e4736";

std::string traceparent(const std::string& parent_span) {
  return std::string("00-") + kTraceId + "-" + parent_span + "-01";
}

const json* find_span(const json& spans, const std::string& name) {
  for (const auto& s : spans)
    if (s["name"] == name) return &s;
  return nullptr;
}

class Tracing : public PodFixture {};

TEST_F(Tracing, TracedCallsContinueTheCallersTraceThroughBerthsSteps) {
  Collector collector;
  auto& cri = ready("untraced", {.config_toml = "tracing_endpoint = \"" + collector.url() + "\"\n"});
  auto stub = d_->runtime();
  auto images = d_->images();

  // PullImage and RunPodSandbox, each as a caller's child span.
  {
    grpc::ClientContext ctx;
    ctx.AddMetadata("traceparent", traceparent("00f067aa0ba902b7"));
    v1::PullImageRequest req;
    req.mutable_image()->set_image(image());
    v1::PullImageResponse resp;
    ASSERT_OK(images->PullImage(&ctx, req, &resp));
  }
  auto config = test_pod("traced");
  config.set_log_directory(logs_->path());
  std::string pod_id;
  {
    grpc::ClientContext ctx;
    ctx.AddMetadata("traceparent", traceparent("00f067aa0ba902b8"));
    v1::RunPodSandboxRequest req;
    *req.mutable_config() = config;
    v1::RunPodSandboxResponse resp;
    ASSERT_OK(stub->RunPodSandbox(&ctx, req, &resp));
    pod_id = resp.pod_sandbox_id();
  }
  std::string id;
  ASSERT_OK(cri.create_container(pod_id, shell_container("c", "sleep 100000"), &id, config));
  ASSERT_OK(cri.start_container(id));
  {
    grpc::ClientContext ctx;
    ctx.AddMetadata("traceparent", traceparent("00f067aa0ba902b9"));
    v1::UpdateContainerResourcesRequest req;
    req.set_container_id(id);
    req.mutable_linux()->set_cpu_shares(512);
    v1::UpdateContainerResourcesResponse resp;
    ASSERT_OK(stub->UpdateContainerResources(&ctx, req, &resp));
  }
  // Not sampled, and malformed: the calls work, untraced.
  for (const char* tp : {"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902ba-00", "not a traceparent"}) {
    grpc::ClientContext ctx;
    ctx.AddMetadata("traceparent", tp);
    v1::PodSandboxStatusRequest req;
    req.set_pod_sandbox_id(pod_id);
    v1::PodSandboxStatusResponse resp;
    ASSERT_OK(stub->PodSandboxStatus(&ctx, req, &resp));
  }

  json spans;
  for (int i = 0; i < 100; ++i) {
    spans = collector.spans();
    if (find_span(spans, "CRI UpdateContainerResources") && find_span(spans, "runtime update")) break;
    std::this_thread::sleep_for(100ms);
  }
  ASSERT_FALSE(collector.targets().empty());
  EXPECT_EQ(collector.targets()[0], "/v1/traces");
  struct Call {
    const char* server;
    const char* caller_span;
    std::vector<std::string> children;
  } calls[] = {{"CRI PullImage", "00f067aa0ba902b7", {"image pull"}},
               {"CRI RunPodSandbox", "00f067aa0ba902b8", {"cni ADD bridge", "cni ADD portmap"}},
               {"CRI UpdateContainerResources", "00f067aa0ba902b9", {"runtime update"}}};
  for (const Call& call : calls) {
    SCOPED_TRACE(call.server);
    const json* server = find_span(spans, call.server);
    ASSERT_NE(server, nullptr) << spans.dump();
    EXPECT_EQ((*server)["traceId"], kTraceId);
    EXPECT_EQ((*server)["parentSpanId"], call.caller_span);
    EXPECT_EQ((*server)["kind"], 2);
    EXPECT_EQ((*server)["status"]["code"], 1);
    for (const auto& name : call.children) {
      const json* child = find_span(spans, name);
      ASSERT_NE(child, nullptr) << name << " in " << spans.dump();
      EXPECT_EQ((*child)["traceId"], kTraceId) << name;
      EXPECT_EQ((*child)["parentSpanId"], (*server)["spanId"]) << name;
      EXPECT_GE(std::stoull((*child)["startTimeUnixNano"].get<std::string>()),
                std::stoull((*server)["startTimeUnixNano"].get<std::string>()));
    }
  }
  // Only the traced calls: the fixture's own calls and the unsampled or malformed ones are not.
  for (const auto& s : spans) {
    EXPECT_EQ(s["traceId"], kTraceId);
    EXPECT_NE(s["name"], "CRI PodSandboxStatus");
    EXPECT_NE(s["name"], "CRI CreateContainer");
  }
}

// The collector gone: calls answer as ever, and berthd says once that spans are not sent.
TEST_F(Tracing, ACollectorThatIsGoneHoldsUpNothing) {
  std::string url;
  {
    Collector gone;
    url = gone.url();
  }
  auto& cri = ready("pod", {.config_toml = "tracing_endpoint = \"" + url + "\"\n"});
  grpc::ClientContext ctx;
  ctx.AddMetadata("traceparent", traceparent("00f067aa0ba902b7"));
  v1::PodSandboxStatusRequest req;
  req.set_pod_sandbox_id(pod_);
  v1::PodSandboxStatusResponse resp;
  ASSERT_OK(d_->runtime()->PodSandboxStatus(&ctx, req, &resp));
  bool logged = false;
  for (int i = 0; i < 100 && !logged; ++i) {
    logged = d_->log().find("tracing: 1 spans not sent to " + url) != std::string::npos;
    if (!logged) std::this_thread::sleep_for(100ms);
  }
  EXPECT_TRUE(logged) << d_->log();
  EXPECT_FALSE(cri.list_pods().empty());
}

}  // namespace
}  // namespace berth::test
