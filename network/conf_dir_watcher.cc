// inotify watch of the CNI conf dir. While the dir does not exist (or was removed) the thread
// retries the watch once a second, so a conf dir created later is picked up too.
#include "conf_dir_watcher.h"

#include <poll.h>
#include <sys/eventfd.h>
#include <sys/inotify.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <spdlog/spdlog.h>

namespace berth::cni {
namespace {

constexpr uint32_t kEvents = IN_CREATE | IN_DELETE | IN_CLOSE_WRITE | IN_MODIFY | IN_MOVED_TO | IN_MOVED_FROM |
                             IN_ATTRIB | IN_DELETE_SELF | IN_MOVE_SELF;

}  // namespace

ConfDirWatcher::ConfDirWatcher(std::string dir, std::function<void()> changed)
    : dir_(std::move(dir)),
      changed_(std::move(changed)),
      inotify_(inotify_init1(IN_NONBLOCK | IN_CLOEXEC)),
      stop_(eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)) {
  if (!inotify_ || !stop_) {
    spdlog::error("cni: cannot watch {}: {}; config changes need a restart", dir_, strerror(errno));
    return;
  }
  thread_ = std::thread([this] { run(); });
}

ConfDirWatcher::~ConfDirWatcher() {
  if (thread_.joinable()) {
    uint64_t one = 1;
    if (write(stop_.get(), &one, sizeof one) < 0) spdlog::error("cni: stop watcher: {}", strerror(errno));
    thread_.join();
  }
}

void ConfDirWatcher::run() {
  int wd = -1;
  bool warned = false;
  alignas(inotify_event) char buf[8192];
  for (;;) {
    if (wd < 0) {
      wd = inotify_add_watch(inotify_.get(), dir_.c_str(), kEvents | IN_ONLYDIR);
      if (wd >= 0) {
        spdlog::debug("cni: watching {}", dir_);
        warned = false;
        changed_();  // it may have changed while unwatched
      } else if (!warned) {
        spdlog::warn("cni: cannot watch {}: {}; retrying every second", dir_, strerror(errno));
        warned = true;
      }
    }
    pollfd fds[2] = {{inotify_.get(), POLLIN, 0}, {stop_.get(), POLLIN, 0}};
    int n = poll(fds, 2, wd < 0 ? 1000 : -1);
    if (n < 0 && errno != EINTR) {
      spdlog::error("cni: watcher poll: {}", strerror(errno));
      return;
    }
    if (fds[1].revents & POLLIN) return;
    if (!(fds[0].revents & POLLIN)) continue;
    bool any = false;
    for (;;) {
      ssize_t len = read(inotify_.get(), buf, sizeof buf);
      if (len <= 0) break;
      for (char* p = buf; p < buf + len;) {
        auto* ev = reinterpret_cast<inotify_event*>(p);
        if (ev->mask & (IN_IGNORED | IN_DELETE_SELF | IN_MOVE_SELF)) {
          if (wd >= 0 && !(ev->mask & IN_IGNORED)) inotify_rm_watch(inotify_.get(), wd);
          wd = -1;
        }
        any = true;
        p += sizeof(inotify_event) + ev->len;
      }
    }
    if (any) changed_();
  }
}

}  // namespace berth::cni
