// After a hostile client is cut off, its session's few MiB of queued replies go back to malloc,
// which keeps such memory for later unless asked to return it; trim_heap_soon asks.
#pragma once

#include <boost/asio/any_io_executor.hpp>

namespace berth::streaming {

// Runs malloc_trim on `ex` after what is already queued there (the aborted writes that free the
// session's buffers). Calls made while one is pending share it.
void trim_heap_soon(const boost::asio::any_io_executor& ex);

}  // namespace berth::streaming
