// PullHelperPool; see pull_helper_pool.h. The idle helpers are a list, the longest idle first; one
// thread ends each at the end of its idle time. A helper is handed out again only after it
// answered the end of its last pull, and checked for having gone while it idled (its socket hung
// up) before it is given a pull. Helpers are started by a thread of the pool's own: a helper gets
// SIGKILL when the thread that started it ends (PR_SET_PDEATHSIG is per thread), and a pull's
// threads end with the pull, while the helper is meant to serve the next one.
#include "pull_helper_pool.h"

#include <sys/stat.h>

#include <condition_variable>
#include <deque>
#include <future>
#include <list>
#include <thread>
#include <vector>

#include "berth/mutex.h"
#include "pull_worker.h"
#include "pull_worker_protocol.h"

namespace berth {

namespace {

using Clock = std::chrono::steady_clock;

// What a helper started with and may serve: the registry's name and every setting in its hello,
// and which CA files it read (a file replaced in place is a new key).
std::string pool_key(const std::string& store, const RegistryOptions& registry, const std::string& domain) {
  std::string key = domain + '\n' + pull_protocol::encode_hello({.store = store, .registry = registry});
  for (const auto& [host, settings] : registry.hosts) {
    struct stat st {};
    if (!settings.ca_file.empty() && ::stat(settings.ca_file.c_str(), &st) == 0)
      key += '\n' + settings.ca_file + ' ' + std::to_string(st.st_ino) + ' ' + std::to_string(st.st_size) + ' ' +
             std::to_string(st.st_mtim.tv_sec) + '.' + std::to_string(st.st_mtim.tv_nsec);
  }
  return key;
}

}  // namespace

struct PullHelperPool::State {
  struct Idle {
    std::string key;
    std::unique_ptr<PullWorker> worker;
    Clock::time_point since;
  };

  explicit State(Options o) : opt(std::move(o)) {}

  struct Start {
    pull_protocol::Hello hello;
    std::promise<Result<std::unique_ptr<PullWorker>>> done;
  };

  // A new helper, started on the pool's thread.
  Result<std::unique_ptr<PullWorker>> start(pull_protocol::Hello hello) {
    Start job{std::move(hello), {}};
    auto done = job.done.get_future();
    {
      MutexLock lock(mu);
      if (stopping) return Status(Code::unavailable, "berth-pull helpers: berthd is shutting down");
      starts.push_back(&job);
    }
    cv.notify_all();
    return done.get();
  }

  void start_helpers() {
    MutexLock lock(mu);
    for (;;) {
      if (starts.empty()) {
        if (stopping) return;
        cv.wait(lock.native());
        continue;
      }
      Start* job = starts.front();
      starts.pop_front();
      lock.unlock();
      job->done.set_value(PullWorker::start(opt.binary, job->hello));
      lock.lock();
    }
  }

  // Ends the pull in `w` and keeps it for the next one, or lets it go.
  void release(const std::string& key, std::unique_ptr<PullWorker> w) {
    if (!w || !w->alive()) return;
    if (opt.idle.count() <= 0 || !w->end_pull().ok()) return;  // `w` goes here, outside mu
    std::vector<std::unique_ptr<PullWorker>> over;
    {
      MutexLock lock(mu);
      if (stopping) return;
      size_t same = 0;
      for (const auto& i : idle) same += i.key == key;
      if (same >= opt.max_idle_per_registry) {
        over.push_back(std::move(w));
      } else {
        idle.push_back({key, std::move(w), Clock::now()});
        while (idle.size() > opt.max_idle) {
          over.push_back(std::move(idle.front().worker));
          idle.pop_front();
        }
      }
    }
    cv.notify_all();
  }

  // The newest idle helper for `key`, if any.
  std::unique_ptr<PullWorker> take(const std::string& key) {
    MutexLock lock(mu);
    for (auto it = idle.rbegin(); it != idle.rend(); ++it)
      if (it->key == key) {
        auto w = std::move(it->worker);
        idle.erase(std::next(it).base());
        return w;
      }
    return nullptr;
  }

  void end_idle_ones() {
    MutexLock lock(mu);
    while (!stopping) {
      if (idle.empty()) {
        cv.wait(lock.native());
        continue;
      }
      auto due = idle.front().since + opt.idle;
      if (Clock::now() < due) {
        cv.wait_until(lock.native(), due);
        continue;
      }
      std::unique_ptr<PullWorker> gone = std::move(idle.front().worker);
      idle.pop_front();
      lock.unlock();
      gone.reset();  // closes its connection and reaps it (a few seconds at most)
      lock.lock();
    }
  }

  const Options opt;
  Mutex mu;
  std::condition_variable cv;
  std::list<Idle> idle BERTH_GUARDED_BY(mu);  // the longest idle first
  std::deque<Start*> starts BERTH_GUARDED_BY(mu);
  bool stopping BERTH_GUARDED_BY(mu) = false;
  std::thread reaper, starter;
};

namespace {

// A pull's steps in a helper of the pool, given back when they go.
class PooledSteps final : public PullSteps {
 public:
  PooledSteps(std::shared_ptr<PullHelperPool::State> state, std::string key, std::unique_ptr<PullWorker> worker)
      : state_(std::move(state)), key_(std::move(key)), worker_(std::move(worker)) {}
  ~PooledSteps() override { state_->release(key_, std::move(worker_)); }

  Result<FetchedManifest> get_manifest(const std::string& tag_or_digest) override {
    return worker_->get_manifest(tag_or_digest);
  }
  Status fetch_blob(const Descriptor& d, const std::string& what) override { return worker_->fetch_blob(d, what); }
  void prefetch(const Descriptor& d) override { worker_->prefetch(d); }
  Status unpack(const std::string& blob_path, const std::string& dest, const std::string& what) override {
    return worker_->unpack(blob_path, dest, what);
  }

 private:
  std::shared_ptr<PullHelperPool::State> state_;
  std::string key_;
  std::unique_ptr<PullWorker> worker_;
};

}  // namespace

PullHelperPool::PullHelperPool(Options options) : state_(std::make_shared<State>(std::move(options))) {
  state_->starter = std::thread([s = state_.get()] { s->start_helpers(); });
  if (state_->opt.idle.count() > 0) state_->reaper = std::thread([s = state_.get()] { s->end_idle_ones(); });
}

PullHelperPool::~PullHelperPool() {
  std::list<State::Idle> idle;
  {
    MutexLock lock(state_->mu);
    state_->stopping = true;
    idle.swap(state_->idle);
  }
  state_->cv.notify_all();
  if (state_->reaper.joinable()) state_->reaper.join();
  idle.clear();  // each helper's connection closed, and reaped
  // The starts asked for before the stop are made; helpers still serving a pull then go with
  // this thread (berthd is exiting).
  state_->starter.join();
}

Result<std::unique_ptr<PullSteps>> PullHelperPool::acquire(std::shared_ptr<const RegistryOptions> registry,
                                                           const ImageReference& ref, const RegistryCredentials& creds,
                                                           std::function<void(size_t)> on_bytes, PullStopCheck stop) {
  const std::string key = pool_key(state_->opt.store, *registry, ref.domain);
  const std::string reference = ref.string();
  // An idle helper that cannot begin (it went while idle) is let go and the next one tried.
  while (auto w = state_->take(key)) {
    if (w->went_away()) continue;
    if (Status s = w->begin(reference, creds, on_bytes, stop); s.ok())
      return std::unique_ptr<PullSteps>(std::make_unique<PooledSteps>(state_, key, std::move(w)));
    if (stop)
      if (Status s = stop(); !s.ok()) return s;
  }
  auto w = state_->start({.store = state_->opt.store, .registry = *registry});
  if (!w.ok()) return w.status();
  if (Status s = (*w)->begin(reference, creds, std::move(on_bytes), std::move(stop)); !s.ok()) return s;
  return std::unique_ptr<PullSteps>(std::make_unique<PooledSteps>(state_, key, std::move(*w)));
}

size_t PullHelperPool::end_idle() {
  std::list<State::Idle> idle;
  {
    MutexLock lock(state_->mu);
    idle.swap(state_->idle);
  }
  state_->cv.notify_all();
  return idle.size();  // each helper's connection closed, and reaped, as `idle` goes
}

}  // namespace berth
