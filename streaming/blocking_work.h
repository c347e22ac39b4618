// Blocking backend calls of the streaming server, run on a worker pool, and the count that lets an
// io_context's owner know when none is left (ServerContext::pending_work). A call stops counting
// only once everything it captured (its work, its continuation, the result, the strand it returns
// to, the sessions they hold) has been destroyed, on whichever thread held it last: an owner that
// destroys its io_context when the count reaches zero must not have a pool thread release a strand
// of that io_context afterwards (fuzz_http_upgrade found that heap-use-after-free when the count
// dropped as the continuation returned, before the closures holding those copies were destroyed).
#pragma once

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/post.hpp>
#include <atomic>
#include <memory>
#include <optional>
#include <type_traits>
#include <utility>

#include "server_context.h"

namespace berth::streaming {

// One share of a pending-work count, held from its making to its destruction; each copy is a share
// of its own, so a call that runs on two threads can be held by both at once.
class PendingWork {
 public:
  explicit PendingWork(std::atomic<int>& count) noexcept : count_(&count) { count_->fetch_add(1); }
  PendingWork(const PendingWork& other) noexcept : PendingWork(*other.count_) {}
  PendingWork& operator=(const PendingWork&) = delete;
  ~PendingWork() { count_->fetch_sub(1); }

 private:
  std::atomic<int>* count_;
};

// Runs `work` on a worker thread (backend calls may block), then lets go of it there.
template <class Work>
void post_work(ServerContext& ctx, Work work) {
  struct Task {
    PendingWork pending;  // the first member is destroyed last
    Work work;
  };
  std::unique_ptr<Task> task(new Task{PendingWork(ctx.pending_work), std::move(work)});
  boost::asio::post(ctx.workers.get_executor(), [task = std::move(task)]() mutable {
    task->work();
    task.reset();
  });
}

// Runs `work` on a thread of `pool`, then `then(result)` on `strand`; counted as pending until
// both closures are gone, so a shutdown never stops the io threads between the two and never
// destroys the io_context while a pool thread still holds its strand.
template <class Work, class Then>
void run_blocking(ServerContext& ctx, WorkerPool& pool, boost::asio::any_io_executor strand, Work work, Then then) {
  using Value = std::invoke_result_t<Work&>;
  struct Call {
    PendingWork pending;  // the first member is destroyed last
    boost::asio::any_io_executor strand;
    std::optional<Work> work;
    Then then;
    std::optional<Value> result;
  };
  std::unique_ptr<Call> call(
      new Call{PendingWork(ctx.pending_work), std::move(strand), std::move(work), std::move(then), std::nullopt});
  boost::asio::post(pool.get_executor(), [call = std::move(call)]() mutable {
    // This thread's own share, released after its copy of the strand: once the call has moved to
    // the strand, the continuation may end (and its share go) before post() below has returned.
    PendingWork posting = call->pending;
    call->result.emplace((*call->work)());
    call->work.reset();
    boost::asio::any_io_executor strand = call->strand;
    boost::asio::post(strand, [call = std::move(call)]() mutable {
      call->then(std::move(*call->result));
      call.reset();
    });
  });
}

}  // namespace berth::streaming
