// Giving a cut-off session's memory back to the kernel; see heap_trim.h.
#include "heap_trim.h"

#include <atomic>
#include <boost/asio/post.hpp>

#include "berth/heap_release.h"

namespace berth::streaming {

void trim_heap_soon(const boost::asio::any_io_executor& ex) {
  static std::atomic<bool> pending{false};
  if (pending.exchange(true)) return;
  boost::asio::post(ex, [] {
    pending = false;
    release_free_heap();
  });
}

}  // namespace berth::streaming
