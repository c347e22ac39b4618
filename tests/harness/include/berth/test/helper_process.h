// Test helper processes: a real OCI registry (Debian's docker-registry) on 127.0.0.1 with temp
// storage, and small servers the tests run (a bearer-token front, a registry that hangs). Each is
// killed and its files removed when its owner goes away, also when the test failed.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

#include "berth/test/temp_dir.h"

namespace berth::test {

int free_loopback_port();

// Runs a command line through /bin/sh and returns its stdout.
std::string shell(const std::string& cmd);

// A child process with its output in a log file; SIGKILLed (with its process group) on destruction.
class ChildProcess {
 public:
  ChildProcess() = default;
  ~ChildProcess();
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;
  void start(const std::vector<std::string>& argv, const std::string& log_path);
  void stop();
  pid_t pid() const { return pid_; }

 private:
  pid_t pid_ = -1;
};

// Waits until something accepts TCP connections on 127.0.0.1:port.
bool wait_for_port(int port, int timeout_ms = 20000);

// A plain HTTP/1.0 GET of `target` on 127.0.0.1:port (written here, so tests share no HTTP code
// with the server they check): the whole answer, headers included; "" when nothing accepts the
// connection.
std::string http_get(int port, const std::string& target);

class RegistryProcess {
 public:
  // With htpasswd_user set, the registry asks for basic auth (htpasswd file made with htpasswd -B).
  // With tls, it serves HTTPS with a certificate for 127.0.0.1 signed by a CA made for it (ca_file()).
  explicit RegistryProcess(const std::string& htpasswd_user = "", const std::string& htpasswd_password = "",
                           bool tls = false);
  std::string ca_file() const { return dir_ / "ca.pem"; }
  int port() const { return port_; }
  std::string host() const { return "127.0.0.1:" + std::to_string(port_); }
  std::string url() const { return "http://" + host(); }
  std::string storage() const { return dir_ / "storage"; }
  std::string log() const;

 private:
  TempDir dir_;
  int port_;
  ChildProcess proc_;
};

// Runs tests/registry/build-test-images.py against `registry_url`; returns its JSON output.
// ca_file: the CA to trust when the registry serves HTTPS.
std::string push_test_images(const std::string& registry_url, const std::vector<std::string>& extra_args = {},
                             const std::string& ca_file = "");

// Runs a script under tests/registry/ with the arguments, in the background.
class ScriptServer {
 public:
  ScriptServer(const std::string& script, const std::vector<std::string>& args, int port);
  int port() const { return port_; }

 private:
  TempDir dir_;
  int port_;
  ChildProcess proc_;
};

// tests/registry/hostile-registry.py on a free loopback port, misbehaving as `mode` says
// (--trickle SECONDS, --layers N, --huge MiB, ...).
class HostileRegistryProcess {
 public:
  explicit HostileRegistryProcess(std::vector<std::string> mode);
  int port() const { return server_.port(); }
  // A reference to an image of it ("127.0.0.1:<port>/test/<repo>:v1").
  std::string ref(const std::string& repo) const;

 private:
  ScriptServer server_;
};

}  // namespace berth::test
