// berth-bench: a CRI client benchmark. It speaks only CRI v1 through the generated stubs, so the
// same program measures berth, containerd or CRI-O: berth-bench --endpoint unix:///run/x.sock.
// Each measurement prints one table row; later issues add their measurements as new --only names.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <grpcpp/grpcpp.h>

#include "berth/cri_api.h"

namespace v1 = runtime::v1;
using Clock = std::chrono::steady_clock;

namespace {

struct Figures {
  double p50_ms, p99_ms, mean_ms;
  size_t n, failures;
};

Figures measure(size_t n, const std::function<bool()>& call) {
  std::vector<double> ms;
  ms.reserve(n);
  size_t failures = 0;
  for (size_t i = 0; i < n; ++i) {
    auto t0 = Clock::now();
    if (!call()) ++failures;
    ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
  }
  std::sort(ms.begin(), ms.end());
  double sum = 0;
  for (double v : ms) sum += v;
  auto pct = [&](double p) { return ms[std::min(ms.size() - 1, static_cast<size_t>(p * ms.size()))]; };
  return {pct(0.50), pct(0.99), sum / ms.size(), n, failures};
}

void row(const std::string& what, const Figures& f) {
  std::printf("| %-34s | %6zu | %9.3f | %9.3f | %9.3f | %8zu |\n", what.c_str(), f.n, f.p50_ms,
              f.p99_ms, f.mean_ms, f.failures);
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"berth-bench: CRI v1 runtime benchmark"};
  std::string endpoint = "unix:///run/berth/berth.sock";
  size_t calls = 1000;
  app.add_option("--endpoint", endpoint, "CRI endpoint, e.g. unix:///run/berth/berth.sock");
  app.add_option("--calls", calls, "calls per round-trip measurement");
  CLI11_PARSE(app, argc, argv);
  std::string target = endpoint;
  if (target.rfind("unix://", 0) == 0) target = "unix:" + target.substr(7);

  auto channel = grpc::CreateChannel(target, grpc::InsecureChannelCredentials());
  if (!channel->WaitForConnected(std::chrono::system_clock::now() + std::chrono::seconds(5))) {
    std::fprintf(stderr, "berth-bench: cannot connect to %s\n", endpoint.c_str());
    return 1;
  }
  auto rt = v1::RuntimeService::NewStub(channel);
  v1::VersionResponse version;
  {
    grpc::ClientContext ctx;
    if (!rt->Version(&ctx, v1::VersionRequest(), &version).ok()) {
      std::fprintf(stderr, "berth-bench: Version failed on %s\n", endpoint.c_str());
      return 1;
    }
  }
  std::printf("runtime: %s %s (CRI %s) at %s\n\n", version.runtime_name().c_str(),
              version.runtime_version().c_str(), version.runtime_api_version().c_str(), endpoint.c_str());
  std::printf("| %-34s | %6s | %9s | %9s | %9s | %8s |\n", "measurement", "calls", "p50 ms", "p99 ms",
              "mean ms", "failures");
  std::printf("|------------------------------------|--------|-----------|-----------|-----------|----------|\n");

  row("Version round trip (1 connection)", measure(calls, [&] {
        grpc::ClientContext ctx;
        v1::VersionResponse r;
        return rt->Version(&ctx, v1::VersionRequest(), &r).ok();
      }));
  row("Status round trip (1 connection)", measure(calls, [&] {
        grpc::ClientContext ctx;
        v1::StatusResponse r;
        return rt->Status(&ctx, v1::StatusRequest(), &r).ok();
      }));
  return 0;
}
