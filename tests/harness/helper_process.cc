// Helper processes for tests; see helper_process.h.
#include "berth/test/helper_process.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstddef>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <random>
#include <stdexcept>
#include <thread>
#include <utility>

namespace berth::test {

// Ports are taken below the kernel's ephemeral range, so no outgoing connection and no bind to
// port 0 anywhere on the machine can take one between our choice and the server's bind. Test
// processes run in parallel; each claims its ports with an abstract unix socket named after the
// port, held until the process exits, so two of them never choose the same one. (Handing out a
// port the kernel chose and then closing it let a concurrent test's registry take it first.)
static std::pair<int, int> reservable_port_range() {
  int ephemeral_low = 32768;
  if (FILE* f = std::fopen("/proc/sys/net/ipv4/ip_local_port_range", "r")) {
    if (std::fscanf(f, "%d", &ephemeral_low) != 1) ephemeral_low = 32768;
    std::fclose(f);
  }
  int high = std::min(ephemeral_low, 65536);
  return {std::max(1024, high - 12000), high};
}

static bool claim_port(int port) {
  int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_un u{};
  u.sun_family = AF_UNIX;
  std::string name = "berth-test-port-" + std::to_string(port);
  std::memcpy(u.sun_path + 1, name.data(), name.size());
  socklen_t len = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + 1 + name.size());
  if (::bind(fd, reinterpret_cast<sockaddr*>(&u), len) != 0) {
    ::close(fd);
    return false;
  }
  return true;  // the descriptor stays open for the life of the test process: that is the claim
}

static bool loopback_port_bindable(int port) {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  int one = 1;
  ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bool ok = ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0;
  ::close(fd);
  return ok;
}

int free_loopback_port() {
  static std::mutex mu;
  std::lock_guard lock(mu);
  auto [low, high] = reservable_port_range();
  std::mt19937 pick(std::random_device{}());
  std::uniform_int_distribution<int> in_range(low, high - 1);
  for (int tries = 0; tries < 1000; ++tries) {
    int port = in_range(pick);
    if (claim_port(port) && loopback_port_bindable(port)) return port;
  }
  throw std::runtime_error("no free loopback port below the ephemeral range");
}

std::string shell(const std::string& cmd) {
  FILE* p = ::popen(cmd.c_str(), "r");
  std::string out;
  char buf[4096];
  for (size_t n; p && (n = std::fread(buf, 1, sizeof buf, p)) > 0;) out.append(buf, n);
  if (p) ::pclose(p);
  return out;
}

// A TCP connection to 127.0.0.1:port; -1 when nothing accepts it.
static int connect_loopback(int port) {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0) return fd;
  ::close(fd);
  return -1;
}

bool wait_for_port(int port, int timeout_ms) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  while (std::chrono::steady_clock::now() < deadline) {
    int fd = connect_loopback(port);
    if (fd >= 0) {
      ::close(fd);
      return true;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return false;
}

std::string http_get(int port, const std::string& target) {
  int fd = connect_loopback(port);
  if (fd < 0) return "";
  std::string req = "GET " + target + " HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n";
  (void)!::write(fd, req.data(), req.size());
  std::string out;
  char buf[8192];
  for (ssize_t n; (n = ::read(fd, buf, sizeof buf)) > 0;) out.append(buf, static_cast<size_t>(n));
  ::close(fd);
  return out;
}

ChildProcess::~ChildProcess() { stop(); }

void ChildProcess::start(const std::vector<std::string>& argv, const std::string& log_path) {
  pid_ = ::fork();
  if (pid_ == 0) {
    ::setpgid(0, 0);
    int fd = ::open(log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    ::dup2(fd, 1);
    ::dup2(fd, 2);
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    ::execvp(args[0], args.data());
    ::_exit(127);
  }
}

void ChildProcess::stop() {
  if (pid_ <= 0) return;
  ::kill(-pid_, SIGKILL);
  ::kill(pid_, SIGKILL);
  ::waitpid(pid_, nullptr, 0);
  pid_ = -1;
}

RegistryProcess::RegistryProcess(const std::string& user, const std::string& password, bool tls)
    : dir_("berth-registry"), port_(free_loopback_port()) {
  std::string config = "version: 0.1\nlog:\n  level: error\nstorage:\n  filesystem:\n    rootdirectory: " + storage() +
                       "\n  delete:\n    enabled: true\nhttp:\n  addr: " + host() + "\n";
  if (!user.empty()) {
    std::string cmd = "htpasswd -Bbn '" + user + "' '" + password + "' > " + (dir_ / "htpasswd");
    if (std::system(cmd.c_str()) != 0) throw std::runtime_error("htpasswd failed");
    config += "auth:\n  htpasswd:\n    realm: berth-test\n    path: " + (dir_ / "htpasswd") + "\n";
  }
  if (tls) {
    // A throwaway CA and a server certificate for 127.0.0.1, made with the openssl CLI.
    std::string d = dir_.path();
    std::string cmd =
        "cd " + d +
        " && openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=berth-test-ca "
        "-keyout ca.key -out ca.pem >/dev/null 2>&1 && "
        "openssl req -newkey rsa:2048 -nodes -subj /CN=127.0.0.1 -keyout server.key -out server.csr >/dev/null 2>&1 && "
        "printf 'subjectAltName=IP:127.0.0.1\n' > san.ext && "
        "openssl x509 -req -in server.csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 2 -extfile san.ext "
        "-out server.pem >/dev/null 2>&1";
    if (std::system(cmd.c_str()) != 0) throw std::runtime_error("openssl could not make test certificates");
    config += "  tls:\n    certificate: " + d + "/server.pem\n    key: " + d + "/server.key\n";
  }
  write_file(dir_ / "config.yml", config);
  proc_.start({"/usr/bin/docker-registry", "serve", dir_ / "config.yml"}, dir_ / "registry.log");
  if (!wait_for_port(port_)) throw std::runtime_error("docker-registry did not start: " + log());
}

std::string RegistryProcess::log() const { return read_file(dir_ / "registry.log"); }

std::string push_test_images(const std::string& registry_url, const std::vector<std::string>& extra_args,
                             const std::string& ca_file) {
  std::string cmd = std::string(BERTH_SOURCE_DIR) + "/tests/registry/build-test-images.py " + registry_url;
  if (!ca_file.empty()) cmd = "SSL_CERT_FILE=" + ca_file + " " + cmd;
  for (const auto& a : extra_args) cmd += " '" + a + "'";
  FILE* p = ::popen(cmd.c_str(), "r");
  if (!p) throw std::runtime_error("cannot run " + cmd);
  std::string out;
  std::array<char, 4096> buf;
  for (size_t n; (n = std::fread(buf.data(), 1, buf.size(), p)) > 0;) out.append(buf.data(), n);
  if (::pclose(p) != 0) throw std::runtime_error("build-test-images.py failed: " + out);
  return out;
}

ScriptServer::ScriptServer(const std::string& script, const std::vector<std::string>& args, int port)
    : dir_("berth-script"), port_(port) {
  std::vector<std::string> argv{std::string(BERTH_SOURCE_DIR) + "/tests/registry/" + script};
  argv.insert(argv.end(), args.begin(), args.end());
  proc_.start(argv, dir_ / "server.log");
  if (!wait_for_port(port_)) throw std::runtime_error(script + " did not start: " + read_file(dir_ / "server.log"));
}

static std::vector<std::string> with_port(int port, std::vector<std::string> args) {
  args.insert(args.begin(), std::to_string(port));
  return args;
}

static ScriptServer hostile_registry(std::vector<std::string> mode) {
  int port = free_loopback_port();
  return ScriptServer("hostile-registry.py", with_port(port, std::move(mode)), port);
}

HostileRegistryProcess::HostileRegistryProcess(std::vector<std::string> mode)
    : server_(hostile_registry(std::move(mode))) {}

std::string HostileRegistryProcess::ref(const std::string& repo) const {
  return "127.0.0.1:" + std::to_string(port()) + "/test/" + repo + ":v1";
}

}  // namespace berth::test
