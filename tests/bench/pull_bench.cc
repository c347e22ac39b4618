// Cold-store PullImage figures; see pull_bench.h.
#include "pull_bench.h"

#include <algorithm>
#include <chrono>
#include <cstdio>

#include "bench_figures.h"
#include "pod_fleet.h"

namespace berth::bench {

namespace v1 = runtime::v1;

void run_pull_bench(v1::ImageService::Stub& images, const std::string& ref, size_t runs, int runtime_pid) {
  auto remove = [&] {
    grpc::ClientContext ctx;
    v1::RemoveImageRequest req;
    req.mutable_image()->set_image(ref);
    v1::RemoveImageResponse r;
    return images.RemoveImage(&ctx, req, &r).ok();
  };
  long peak_kib = 0, bytes = 0;
  std::string error;
  remove();
  // As critest's image benchmark times it: the pull, the status of what it pulled, the removal.
  Figures f = measure(runs, [&] {
    if (runtime_pid > 0) reset_peak_rss(runtime_pid);
    grpc::ClientContext ctx;
    v1::PullImageRequest req;
    req.mutable_image()->set_image(ref);
    v1::PullImageResponse r;
    grpc::Status s = images.PullImage(&ctx, req, &r);
    if (!s.ok()) {
      error = s.error_message();
      return false;
    }
    if (runtime_pid > 0) peak_kib = std::max(peak_kib, peak_rss_kib(runtime_pid));
    grpc::ClientContext sctx;
    v1::ImageStatusRequest sreq;
    sreq.mutable_image()->set_image(ref);
    v1::ImageStatusResponse st;
    if (!images.ImageStatus(&sctx, sreq, &st).ok() || !st.has_image()) return false;
    bytes = static_cast<long>(st.image().size());
    return remove();
  });
  row("PullImage+ImageStatus+RemoveImage, cold store", f);
  figure("pull_p50_ms", f.p50_ms);
  std::printf("\nPullImage %s: %.1f MiB compressed, median %.0f ms over %zu runs\n", ref.c_str(), bytes / 1048576.0,
              f.p50_ms, f.n);
  if (runtime_pid > 0) std::printf("runtime peak RSS during a pull (VmHWM): %.1f MiB\n", peak_kib / 1024.0);
  if (!error.empty()) std::printf("last pull error: %s\n", error.c_str());
}

void run_pull_until_ok(v1::ImageService::Stub& images, const std::string& ref, size_t attempts) {
  size_t n = 0;
  std::string error;
  auto start = std::chrono::steady_clock::now();
  for (; n < attempts;) {
    ++n;
    grpc::ClientContext ctx;
    v1::PullImageRequest req;
    req.mutable_image()->set_image(ref);
    v1::PullImageResponse r;
    grpc::Status s = images.PullImage(&ctx, req, &r);
    if (s.ok()) {
      error.clear();
      break;
    }
    error = s.error_message();
    std::printf("PullImage %s, attempt %zu: %s\n", ref.c_str(), n, error.c_str());
  }
  double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  std::printf("PullImage %s: %s after %zu attempts, %.0f ms\n", ref.c_str(), error.empty() ? "pulled" : "failed", n,
              ms);
  figure("pull_attempts", static_cast<double>(n));
  figure("pull_until_ok_ms", ms);
}

void run_stored_pull_bench(v1::ImageService::Stub& images, const std::vector<std::string>& refs, size_t runs,
                           int runtime_pid) {
  auto pull = [&](const std::string& ref) { return pull_image(images, ref); };
  auto rss = [&] { return runtime_pid > 0 ? rss_kib(runtime_pid) / 1024.0 : 0.0; };
  std::printf("\nruntime VmRSS before the pulls: %.1f MiB\n", rss());
  for (const auto& ref : refs) pull(ref);
  std::printf("runtime VmRSS after pulling %zu images: %.1f MiB\n", refs.size(), rss());
  if (refs.empty()) return;
  Figures f = measure(runs, [&] { return pull(refs.front()); });
  row("PullImage, image already stored", f);
  std::printf("runtime VmRSS after %zu pulls of stored %s: %.1f MiB\n", f.n, refs.front().c_str(), rss());
}

}  // namespace berth::bench
