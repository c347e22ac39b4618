// Cold-store PullImage figures; see pull_bench.h.
#include "pull_bench.h"

#include <algorithm>
#include <cstdio>

#include "bench_figures.h"

namespace berth::bench {

namespace v1 = runtime::v1;

void run_pull_bench(v1::ImageService::Stub& images, const std::string& ref, size_t runs, int runtime_pid) {
  auto remove = [&] {
    grpc::ClientContext ctx;
    v1::RemoveImageRequest req;
    req.mutable_image()->set_image(ref);
    v1::RemoveImageResponse r;
    images.RemoveImage(&ctx, req, &r);
  };
  long peak_kib = 0;
  std::string error;
  Figures f = measure(runs, [&] {
    remove();
    if (runtime_pid > 0) reset_peak_rss(runtime_pid);
    grpc::ClientContext ctx;
    v1::PullImageRequest req;
    req.mutable_image()->set_image(ref);
    v1::PullImageResponse r;
    grpc::Status s = images.PullImage(&ctx, req, &r);
    if (!s.ok()) error = s.error_message();
    if (runtime_pid > 0) peak_kib = std::max(peak_kib, peak_rss_kib(runtime_pid));
    return s.ok();
  });
  row("PullImage, cold store", f);
  long bytes = 0;
  {
    grpc::ClientContext ctx;
    v1::ImageStatusRequest req;
    req.mutable_image()->set_image(ref);
    v1::ImageStatusResponse st;
    if (images.ImageStatus(&ctx, req, &st).ok()) bytes = static_cast<long>(st.image().size());
  }
  std::printf("\nPullImage %s: %.1f MiB compressed, median %.0f ms over %zu runs\n", ref.c_str(), bytes / 1048576.0,
              f.p50_ms, f.n);
  if (runtime_pid > 0) std::printf("runtime peak RSS during a pull (VmHWM): %.1f MiB\n", peak_kib / 1024.0);
  if (!error.empty()) std::printf("last pull error: %s\n", error.c_str());
}

}  // namespace berth::bench
