// Streaming figures through the CRI rpcs; see stream_rpc_bench.h. The pod's listeners run in the
// bench itself, on a thread inside the pod's network namespace (read from verbose
// PodSandboxStatus), so the figures are the runtime's path and not a slow in-pod copier's.
#include "stream_rpc_bench.h"

#include <fcntl.h>
#include <netinet/in.h>
#include <sched.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <atomic>
#include <thread>

#include "bench_figures.h"
#include "berth/test/streaming_client.h"

namespace berth::bench {

namespace v1 = runtime::v1;
using Clock = std::chrono::steady_clock;

namespace {

std::string start_container(v1::RuntimeService::Stub& rt, const std::string& pod,
                            const v1::PodSandboxConfig& pod_config, const std::string& name, const std::string& image,
                            const std::string& script) {
  v1::ContainerConfig c;
  c.mutable_metadata()->set_name(name);
  c.mutable_image()->set_image(image);
  for (const char* a : {"/bin/sh", "-c"}) c.add_command(a);
  c.add_command(script);
  c.mutable_linux()->mutable_security_context()->mutable_namespace_options()->set_pid(v1::CONTAINER);
  grpc::ClientContext cctx;
  v1::CreateContainerRequest creq;
  creq.set_pod_sandbox_id(pod);
  *creq.mutable_config() = c;
  *creq.mutable_sandbox_config() = pod_config;
  v1::CreateContainerResponse cr;
  if (!rt.CreateContainer(&cctx, creq, &cr).ok()) return "";
  grpc::ClientContext sctx;
  v1::StartContainerRequest sreq;
  sreq.set_container_id(cr.container_id());
  v1::StartContainerResponse sr;
  return rt.StartContainer(&sctx, sreq, &sr).ok() ? cr.container_id() : "";
}

std::string port_forward_url(v1::RuntimeService::Stub& rt, const std::string& pod) {
  grpc::ClientContext ctx;
  v1::PortForwardRequest req;
  req.set_pod_sandbox_id(pod);
  v1::PortForwardResponse resp;
  return rt.PortForward(&ctx, req, &resp).ok() ? resp.url() : "";
}

double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

// A source (port 9001: sends `bytes` then closes) and a sink (port 9000: reads to the end) inside
// the pod's network namespace, one connection each.
class PodListeners {
 public:
  PodListeners(const std::string& netns, uint64_t bytes) {
    thread_ = std::thread([this, netns, bytes] {
      int ns = ::open(netns.c_str(), O_RDONLY | O_CLOEXEC);
      if (ns < 0 || ::setns(ns, CLONE_NEWNET) != 0) return;
      ::close(ns);
      int src = listen_on(9001), sink = listen_on(9000);
      ready_ = src >= 0 && sink >= 0;
      std::thread source([src, bytes] {
        int c = ::accept(src, nullptr, nullptr);
        std::string chunk(1 << 20, '\0');
        for (uint64_t sent = 0; c >= 0 && sent < bytes;) {
          ssize_t n = ::write(c, chunk.data(), std::min<uint64_t>(chunk.size(), bytes - sent));
          if (n <= 0) break;
          sent += static_cast<uint64_t>(n);
        }
        if (c >= 0) ::close(c);
      });
      int c = ::accept(sink, nullptr, nullptr);
      std::string buf(1 << 20, '\0');
      while (c >= 0 && ::read(c, buf.data(), buf.size()) > 0) {
      }
      if (c >= 0) ::close(c);
      source.join();
      ::close(src);
      ::close(sink);
    });
    for (int i = 0; i < 100 && !ready_; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ~PodListeners() { thread_.join(); }
  bool ready() const { return ready_; }

 private:
  static int listen_on(int port) {
    int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(static_cast<uint16_t>(port));
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 || ::listen(fd, 4) != 0) return -1;
    return fd;
  }
  std::thread thread_;
  std::atomic<bool> ready_{false};
};

std::string netns_of(v1::RuntimeService::Stub& rt, const std::string& pod) {
  grpc::ClientContext ctx;
  v1::PodSandboxStatusRequest req;
  req.set_pod_sandbox_id(pod);
  req.set_verbose(true);
  v1::PodSandboxStatusResponse st;
  if (!rt.PodSandboxStatus(&ctx, req, &st).ok() || !st.info().count("info")) return "";
  const std::string& info = st.info().at("info");
  size_t at = info.find("\"netns_path\":\"");
  if (at == std::string::npos) return "";
  at += 14;
  return info.substr(at, info.find('"', at) - at);
}

}  // namespace

void run_stream_rpc_bench(v1::RuntimeService::Stub& rt, v1::ImageService::Stub& images, const std::string& image,
                          uint64_t mib) {
  using namespace berth::test;
  {
    grpc::ClientContext ctx;
    v1::PullImageRequest req;
    req.mutable_image()->set_image(image);
    v1::PullImageResponse r;
    if (!images.PullImage(&ctx, req, &r).ok()) {
      std::printf("streaming bench: cannot pull %s\n", image.c_str());
      return;
    }
  }
  v1::PodSandboxConfig pod;
  pod.mutable_metadata()->set_name("bench-streaming");
  pod.mutable_metadata()->set_namespace_("berth-bench");
  pod.mutable_metadata()->set_uid("bench-streaming");
  pod.mutable_linux()->set_cgroup_parent("/berth-bench");
  std::string pod_id;
  {
    grpc::ClientContext ctx;
    v1::RunPodSandboxRequest req;
    *req.mutable_config() = pod;
    v1::RunPodSandboxResponse r;
    if (!rt.RunPodSandbox(&ctx, req, &r).ok()) return;
    pod_id = r.pod_sandbox_id();
  }
  uint64_t bytes = mib << 20;
  std::string box = start_container(rt, pod_id, pod, "box", image, "sleep 100000");

  std::string last_error;
  Figures exec = measure(50, [&] {
    grpc::ClientContext ctx;
    v1::ExecRequest req;
    req.set_container_id(box);
    req.add_cmd("true");
    req.set_stdout(true);
    req.set_stderr(true);
    v1::ExecResponse resp;
    if (!rt.Exec(&ctx, req, &resp).ok()) return false;
    auto r = run_command(resp.url(), {.spdy_flow_control = false});
    if (!r.ok()) last_error = r.status().message();
    return r.ok() && r->exit_code == 0;
  });
  row("Exec `true` round trip (rpc + SPDY)", exec);

  PodListeners listeners(netns_of(rt, pod_id), bytes);
  auto pf = PortForwardClient::connect(port_forward_url(rt, pod_id), {.spdy_flow_control = false});
  double down = 0, up = 0;
  if (!listeners.ready()) {
    last_error = "cannot listen inside the pod's network namespace";
  } else if (pf.ok()) {
    auto s = (*pf)->open(9001);
    auto t = Clock::now();
    uint64_t got = 0;
    while (s.ok() && got < bytes) {
      auto r = (*s)->read(1 << 20, std::chrono::seconds(60));
      if (!r.ok() || r->empty()) break;
      got += r->size();
    }
    if (got == bytes) down = double(mib) / seconds_since(t);
    auto u = (*pf)->open(9000);
    std::string chunk(1 << 20, 'x');
    t = Clock::now();
    bool sent = u.ok();
    for (uint64_t n = 0; sent && n < bytes; n += chunk.size()) sent = (*u)->write(chunk).ok();
    if (sent && (*u)->close_write().ok()) {
      (*u)->read_to_end(std::chrono::seconds(120));  // the sink closes once it has read everything
      up = double(mib) / seconds_since(t);
    }
  } else {
    last_error = pf.status().message();
  }
  std::printf("\nExec `true` through the streaming server: p50 %.1f ms, p95 %.1f ms (50 runs)\n", exec.p50_ms,
              exec.p95_ms);
  std::printf("port-forward into the pod over SPDY, %llu MiB: download %.0f MiB/s, upload %.0f MiB/s\n",
              static_cast<unsigned long long>(mib), down, up);
  if (!last_error.empty()) std::printf("last error: %s\n", last_error.c_str());
  grpc::ClientContext ctx;
  v1::RemovePodSandboxRequest req;
  req.set_pod_sandbox_id(pod_id);
  v1::RemovePodSandboxResponse r;
  rt.RemovePodSandbox(&ctx, req, &r);
}

}  // namespace berth::bench
