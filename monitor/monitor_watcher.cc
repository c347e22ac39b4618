// MonitorWatcher: one epoll thread over a subscribed connection per monitor; see monitor_watcher.h.
#include "berth/monitor_watcher.h"
#include "berth/mutex.h"

#include <errno.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <deque>
#include <mutex>
#include <thread>
#include <unordered_map>

#include "monitor_connection.h"
#include "packet_io.h"

namespace berth {

namespace proto = berth::monitor_protocol;

namespace {

constexpr uint64_t kWakeSerial = 0;

int64_t now_ns() {
  timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

// The monitor is gone: its exit file says how the container ended, or nothing does.
ExitInfo exit_from_file(const std::string& id, const std::string& exit_file) {
  auto r = read_exit_file(exit_file);
  if (r.ok()) return *r;
  ExitInfo info;
  info.exit_code = kUnknownExitCode;
  info.exited_at_ns = now_ns();
  info.reason = r.status().code() == Code::not_found
                    ? "berth-monitor of " + id + " is gone without recording an exit (no " + exit_file + ")"
                    : "berth-monitor of " + id + " is gone and its exit is unreadable: " + r.status().message();
  return info;
}

}  // namespace

struct MonitorWatcher::State {
  struct Watch {
    std::string id, exit_file;
    UniqueFd conn;
  };

  OnExit on_exit;
  OnLogLoss on_log_loss;
  Mutex mu;
  UniqueFd epoll_fd, wake_fd;
  std::unordered_map<uint64_t, Watch> watches BERTH_GUARDED_BY(mu);
  std::unordered_map<std::string, uint64_t> serial_of BERTH_GUARDED_BY(mu);
  std::deque<uint64_t> gone BERTH_GUARDED_BY(mu);  // watches whose monitor had already exited when watched
  uint64_t next_serial BERTH_GUARDED_BY(mu) = 1;
  bool stopping BERTH_GUARDED_BY(mu) = false;
  Status start_error;  // set before the watcher is shared
  std::thread thread;

  void wake() {
    uint64_t one = 1;
    if (write(wake_fd.get(), &one, sizeof one) < 0) {
    }
  }

  // Removes the watch (under mu) and hands it back to be reported.
  bool take(uint64_t serial, Watch* out) BERTH_REQUIRES(mu) {
    auto it = watches.find(serial);
    if (it == watches.end()) return false;
    *out = std::move(it->second);
    watches.erase(it);
    serial_of.erase(out->id);
    return true;
  }

  void report(const std::string& id, const ExitInfo& info) {
    try {
      on_exit(id, info);
    } catch (...) {
      // The callback is berthd's; an exception must not end the watcher thread.
    }
  }

  void report_log_loss(const std::string& id, const LogLoss& loss) {
    try {
      on_log_loss(id, loss);
    } catch (...) {
    }
  }

  // Reads what the monitor sent; reports the exit once it arrives or the monitor is gone.
  void on_readable(uint64_t serial) {
    for (;;) {
      MutexLock lock(mu);
      auto it = watches.find(serial);
      if (it == watches.end()) return;
      unsigned char buf[proto::kMaxPacket];
      int fds[proto::kMaxFds];
      int nfds = 0;
      ssize_t r = proto::recv_packet(it->second.conn.get(), buf, fds, &nfds, MSG_DONTWAIT);
      for (int i = 0; i < nfds; ++i) close(fds[i]);
      if (r == -EAGAIN || r == -EINTR) return;
      proto::Message m;
      ExitInfo info;
      bool exited = false;
      if (r > 0 && proto::decode(buf, static_cast<size_t>(r), &m) == proto::DecodeError::none) {
        if (m.type == proto::Type::log_lost) {
          proto::LogLoss l;
          if (!m.fixed(&l) || !on_log_loss) continue;
          std::string id = it->second.id;
          lock.unlock();
          report_log_loss(id, LogLoss{l.records, l.bytes, l.sys_errno, l.writing != 0});
          continue;
        }
        if (m.type != proto::Type::exited) continue;  // hello_reply, or an error we cannot act on
        proto::Exited e;
        const char* text = nullptr;
        size_t text_len = 0;
        if (!m.fixed(&e, &text, &text_len)) continue;
        info = ExitInfo{e.exit_code, e.signal, e.exited_at_ns, std::string(text, text_len)};
        exited = true;
      } else if (r > 0) {
        continue;
      }
      Watch w;
      take(serial, &w);
      lock.unlock();
      if (!exited) info = exit_from_file(w.id, w.exit_file);  // closed without a word: read the file
      report(w.id, info);
      return;
    }
  }

  void run() {
    epoll_event events[64];
    for (;;) {
      int n = epoll_wait(epoll_fd.get(), events, 64, -1);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) return;
      for (int i = 0; i < n; ++i) {
        if (events[i].data.u64 != kWakeSerial) {
          on_readable(events[i].data.u64);
          continue;
        }
        uint64_t count;
        if (read(wake_fd.get(), &count, sizeof count) < 0) {
        }
        for (;;) {
          MutexLock lock(mu);
          if (stopping) return;
          if (gone.empty()) break;
          uint64_t serial = gone.front();
          gone.pop_front();
          Watch w;
          if (!take(serial, &w)) continue;
          lock.unlock();
          report(w.id, exit_from_file(w.id, w.exit_file));
        }
      }
    }
  }
};

MonitorWatcher::MonitorWatcher(OnExit on_exit, OnLogLoss on_log_loss) : state_(std::make_unique<State>()) {
  State& s = *state_;
  s.on_exit = std::move(on_exit);
  s.on_log_loss = std::move(on_log_loss);
  s.epoll_fd.reset(epoll_create1(EPOLL_CLOEXEC));
  s.wake_fd.reset(eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
  if (!s.epoll_fd || !s.wake_fd) {
    s.start_error = errno_status(errno, "monitor watcher: epoll");
    return;
  }
  epoll_event ev{};
  ev.events = EPOLLIN;
  ev.data.u64 = kWakeSerial;
  epoll_ctl(s.epoll_fd.get(), EPOLL_CTL_ADD, s.wake_fd.get(), &ev);
  try {
    s.thread = std::thread([&s] { s.run(); });
  } catch (const std::exception& e) {
    s.start_error = internal_error(std::string("monitor watcher: start thread: ") + e.what());
  }
}

MonitorWatcher::~MonitorWatcher() {
  {
    MutexLock lock(state_->mu);
    state_->stopping = true;
  }
  state_->wake();
  if (state_->thread.joinable()) state_->thread.join();
}

Status MonitorWatcher::watch(const std::string& id, const std::string& socket_path, const std::string& exit_file) {
  State& s = *state_;
  if (!s.start_error.ok()) return s.start_error.context("watch " + id);
  UniqueFd conn;
  int err = monitor_connection::connect_monitor(socket_path, &conn);
  bool gone = err == ENOENT || err == ECONNREFUSED;
  if (err && !gone) return errno_status(err, "watch " + id + ": connect to berth-monitor at " + socket_path);
  if (!gone) {
    Status sent = monitor_connection::send_request(conn.get(), proto::Type::hello, nullptr, 0, "watch " + id);
    if (sent.ok())
      sent = monitor_connection::send_request(conn.get(), proto::Type::subscribe_exit, nullptr, 0, "watch " + id);
    // A monitor exiting right now closes on us: its exit file tells the rest.
    if (!sent.ok()) gone = true;
  }
  MutexLock lock(s.mu);
  if (auto old = s.serial_of.find(id); old != s.serial_of.end()) {
    s.watches.erase(old->second);
    s.serial_of.erase(old);
  }
  uint64_t serial = s.next_serial++;
  State::Watch& w = s.watches[serial];
  w.id = id;
  w.exit_file = exit_file;
  s.serial_of[id] = serial;
  if (gone) {
    s.gone.push_back(serial);
    s.wake();
    return ok_status();
  }
  w.conn = std::move(conn);
  epoll_event ev{};
  ev.events = EPOLLIN | EPOLLRDHUP;
  ev.data.u64 = serial;
  if (epoll_ctl(s.epoll_fd.get(), EPOLL_CTL_ADD, w.conn.get(), &ev) != 0) {
    Status st = errno_status(errno, "watch " + id + ": epoll");
    s.watches.erase(serial);
    s.serial_of.erase(id);
    return st;
  }
  return ok_status();
}

void MonitorWatcher::unwatch(const std::string& id) {
  MutexLock lock(state_->mu);
  auto it = state_->serial_of.find(id);
  if (it == state_->serial_of.end()) return;
  state_->watches.erase(it->second);  // closing the connection also drops it from the epoll set
  state_->serial_of.erase(it);
}

}  // namespace berth
