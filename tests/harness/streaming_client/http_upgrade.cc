// URL parsing, TCP connect and the SPDY/3.1 HTTP upgrade for the streaming test client.
#include "http_upgrade.h"

#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace berth::test {

Result<Url> parse_url(const std::string& url) {
  const std::string scheme = "http://";
  if (url.rfind(scheme, 0) != 0) return invalid_argument("not an http url: " + url);
  std::string rest = url.substr(scheme.size());
  size_t slash = rest.find('/');
  std::string hostport = rest.substr(0, slash);
  Url u;
  u.target = slash == std::string::npos ? "/" : rest.substr(slash);
  if (!hostport.empty() && hostport[0] == '[') {
    size_t close = hostport.find(']');
    if (close == std::string::npos) return invalid_argument("bad host in " + url);
    u.host = hostport.substr(1, close - 1);
    u.port = hostport.size() > close + 2 ? hostport.substr(close + 2) : "80";
  } else {
    size_t colon = hostport.rfind(':');
    u.host = hostport.substr(0, colon);
    u.port = colon == std::string::npos ? "80" : hostport.substr(colon + 1);
  }
  return u;
}

Result<UniqueFd> tcp_connect(const Url& url) {
  addrinfo hints{};
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* res = nullptr;
  if (int rc = getaddrinfo(url.host.c_str(), url.port.c_str(), &hints, &res); rc != 0)
    return internal_error("resolve " + url.host + ": " + gai_strerror(rc));
  Status last = internal_error("no address for " + url.host);
  for (auto* ai = res; ai; ai = ai->ai_next) {
    UniqueFd fd(::socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol));
    if (!fd) continue;
    if (::connect(fd.get(), ai->ai_addr, ai->ai_addrlen) == 0) {
      int one = 1;  // small frames (SYN_STREAM, resize) must not wait for delayed ACKs
      ::setsockopt(fd.get(), IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
      freeaddrinfo(res);
      return fd;
    }
    last = errno_status(errno, "connect " + url.host + ":" + url.port);
  }
  freeaddrinfo(res);
  return last;
}

Status http_refusal(int code, const std::string& body) {
  return Status(code == 404 ? Code::not_found : Code::failed_precondition,
                "http " + std::to_string(code) + ": " + body);
}

int refusal_code(const Status& s) {
  if (s.message().rfind("http ", 0) != 0) return 0;
  return std::atoi(s.message().c_str() + 5);
}

Result<SpdyUpgrade> spdy_upgrade(const std::string& url, const std::vector<std::string>& protocols,
                                 std::chrono::milliseconds timeout) {
  auto u = parse_url(url);
  if (!u.ok()) return u.status();
  auto fd = tcp_connect(*u);
  if (!fd.ok()) return fd.status();
  std::string req = "GET " + u->target + " HTTP/1.1\r\nHost: " + u->host + ":" + u->port +
                    "\r\nConnection: Upgrade\r\nUpgrade: SPDY/3.1\r\n";
  for (const auto& p : protocols) req += "X-Stream-Protocol-Version: " + p + "\r\n";
  req += "User-Agent: berth-streaming-test\r\n\r\n";
  if (::send(fd->get(), req.data(), req.size(), MSG_NOSIGNAL) != ssize_t(req.size()))
    return errno_status(errno, "send upgrade request");
  std::string in;
  auto deadline = std::chrono::steady_clock::now() + timeout;
  size_t end;
  while ((end = in.find("\r\n\r\n")) == std::string::npos) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    pollfd p{fd->get(), POLLIN, 0};
    if (left.count() <= 0 || ::poll(&p, 1, int(left.count())) <= 0) return deadline_exceeded("upgrade response");
    char buf[4096];
    ssize_t n = ::recv(fd->get(), buf, sizeof(buf), 0);
    if (n <= 0) return internal_error("connection closed before the upgrade response");
    in.append(buf, size_t(n));
  }
  std::string head = in.substr(0, end + 2);
  std::string rest = in.substr(end + 4);
  int code = std::atoi(head.c_str() + head.find(' ') + 1);
  auto header = [&](std::string name) {
    std::string lower_head = head;
    for (auto& c : lower_head) c = char(std::tolower(c));
    for (auto& c : name) c = char(std::tolower(c));
    size_t at = lower_head.find("\r\n" + name + ":");
    if (at == std::string::npos) return std::string();
    at += name.size() + 3;
    size_t eol = head.find("\r\n", at);
    std::string v = head.substr(at, eol - at);
    while (!v.empty() && v.front() == ' ') v.erase(0, 1);
    return v;
  };
  if (code != 101) {
    size_t want = size_t(std::atoi(header("Content-Length").c_str()));
    while (rest.size() < want) {
      char buf[4096];
      ssize_t n = ::recv(fd->get(), buf, sizeof(buf), 0);
      if (n <= 0) break;
      rest.append(buf, size_t(n));
    }
    return http_refusal(code, rest);
  }
  SpdyUpgrade up;
  up.fd = std::move(*fd);
  up.protocol = header("X-Stream-Protocol-Version");
  up.leftover = std::move(rest);
  return up;
}

}  // namespace berth::test
