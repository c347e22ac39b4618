// TCP echo / sink-source servers and throwaway network namespaces for the streaming tests.
#include "test_servers.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sched.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <fstream>
#include <random>
#include <stdexcept>

namespace berth::test {

namespace {

bool send_all(int fd, const char* p, size_t n) {
  while (n > 0) {
    ssize_t w = ::send(fd, p, n, MSG_NOSIGNAL);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return false;
    p += w;
    n -= size_t(w);
  }
  return true;
}

bool recv_all(int fd, char* p, size_t n) {
  while (n > 0) {
    ssize_t r = ::recv(fd, p, n, 0);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return false;
    p += r;
    n -= size_t(r);
  }
  return true;
}

UniqueFd make_listener(int& port) {
  UniqueFd fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::bind(fd.get(), reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 || ::listen(fd.get(), 128) != 0)
    return UniqueFd();
  socklen_t len = sizeof(addr);
  ::getsockname(fd.get(), reinterpret_cast<sockaddr*>(&addr), &len);
  port = ntohs(addr.sin_port);
  return fd;
}

}  // namespace

TestServer::TestServer(Mode mode, const std::string& netns) : mode_(mode) {
  if (netns.empty()) {
    listener_ = make_listener(port_);
  } else {
    std::thread t([&] {
      UniqueFd ns(::open(("/run/netns/" + netns).c_str(), O_RDONLY | O_CLOEXEC));
      if (ns && ::setns(ns.get(), CLONE_NEWNET) == 0) listener_ = make_listener(port_);
    });
    t.join();
  }
  if (!listener_) throw std::runtime_error("test server: cannot listen");
  acceptor_ = std::thread([this] {
    for (;;) {
      int c = ::accept4(listener_.get(), nullptr, nullptr, SOCK_CLOEXEC);
      if (c < 0) {
        if (errno == EINTR) continue;
        return;
      }
      if (stopping_) {
        ::close(c);
        return;
      }
      ++connections_;
      std::lock_guard lock(mu_);
      open_fds_.push_back(c);
      workers_.emplace_back([this, c] { serve(UniqueFd(c)); });
    }
  });
}

TestServer::~TestServer() {
  stopping_ = true;
  ::shutdown(listener_.get(), SHUT_RDWR);
  acceptor_.join();
  std::vector<std::thread> workers;
  {
    std::lock_guard lock(mu_);
    for (int fd : open_fds_) ::shutdown(fd, SHUT_RDWR);
    workers = std::move(workers_);
  }
  for (auto& t : workers) t.join();
}

void TestServer::serve(UniqueFd conn) {
  std::vector<char> buf(256 * 1024);
  if (mode_ == Mode::echo) {
    for (;;) {
      ssize_t n = ::recv(conn.get(), buf.data(), buf.size(), 0);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0 || !send_all(conn.get(), buf.data(), size_t(n))) break;
    }
    ::shutdown(conn.get(), SHUT_WR);
  } else {
    char head[9];
    if (recv_all(conn.get(), head, 9)) {
      uint64_t n = 0;
      for (int i = 0; i < 8; ++i) n = (n << 8) | uint8_t(head[i]);
      if (head[8] == 'u') {
        while (n > 0) {
          ssize_t r = ::recv(conn.get(), buf.data(), std::min<uint64_t>(n, buf.size()), 0);
          if (r <= 0) break;
          n -= uint64_t(r);
        }
        if (n == 0) send_all(conn.get(), "ok", 2);
      } else {
        std::string chunk = pseudo_random(buf.size(), 7);
        while (n > 0) {
          size_t k = size_t(std::min<uint64_t>(n, chunk.size()));
          if (!send_all(conn.get(), chunk.data(), k)) break;
          sent_ += k;
          n -= k;
        }
      }
      ::shutdown(conn.get(), SHUT_WR);
      while (::recv(conn.get(), buf.data(), buf.size(), 0) > 0) {
      }
    }
  }
  std::lock_guard lock(mu_);
  std::erase(open_fds_, conn.get());
}

Netns::Netns() {
  std::random_device rd;
  name_ = "berth-st-" + std::to_string(rd() % 1000000);
  ok_ = std::system(("ip netns add " + name_ + " && ip -n " + name_ + " link set lo up").c_str()) == 0;
}

Netns::~Netns() { (void)std::system(("ip netns del " + name_ + " 2>/dev/null").c_str()); }

namespace {

bool write_file(const std::string& path, const std::string& text) {
  UniqueFd fd(::open(path.c_str(), O_WRONLY | O_CLOEXEC));
  return fd && ::write(fd.get(), text.data(), text.size()) == ssize_t(text.size());
}

}  // namespace

PidsLimit::PidsLimit() {
  const std::string root = "/sys/fs/cgroup/pids";
  // Where this process is now, to go back there.
  std::ifstream cgroups("/proc/self/cgroup");
  std::string line;
  while (std::getline(cgroups, line)) {
    auto first = line.find(':'), second = line.find(':', first + 1);
    if (first == std::string::npos || second == std::string::npos) continue;
    if (line.substr(first + 1, second - first - 1) == "pids") home_ = root + line.substr(second + 1);
  }
  if (home_.empty()) return;
  dir_ = root + "/berth-st-" + std::to_string(::getpid());
  if (::mkdir(dir_.c_str(), 0755) != 0 && errno != EEXIST) return;
  // The limit is set before moving in: a cgroup may hold more tasks than its limit, it just
  // cannot get new ones.
  ok_ = write_file(dir_ + "/pids.max", "1") && write_file(dir_ + "/cgroup.procs", std::to_string(::getpid()));
}

PidsLimit::~PidsLimit() {
  if (dir_.empty()) return;
  write_file(home_ + "/cgroup.procs", std::to_string(::getpid()));
  ::rmdir(dir_.c_str());
}

std::string pseudo_random(size_t n, uint64_t seed) {
  std::string out(n, '\0');
  uint64_t x = seed * 0x9e3779b97f4a7c15ull + 1;
  for (size_t i = 0; i < n; ++i) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    out[i] = char(x >> 24);
  }
  return out;
}

}  // namespace berth::test
