// Starts berthd as a child process with its own temp directories and talks CRI to it.
#include "berth/test/daemon_process.h"

#include <fcntl.h>
#include <sys/resource.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <thread>

namespace berth::test {

std::string berthd_path() {
  const char* other = std::getenv("BERTHD");
  return other && *other ? other : BERTHD_PATH;
}

std::string test_runtime() {
  const char* rt = std::getenv("BERTH_TEST_RUNTIME");
  return rt && *rt ? rt : "runc";
}

bool berthd_sanitized() {
#ifdef BERTH_SANITIZED
  return true;
#else
  const char* named = std::getenv("BERTHD");
  const char* sanitized = std::getenv("BERTHD_SANITIZED");
  return named && *named && sanitized && std::string(sanitized) == "1";
#endif
}

long sanitizer_rss_slack_kib() { return berthd_sanitized() ? 1L << 30 : 0; }

DaemonProcess::DaemonProcess(DaemonOptions opts) : dir_("berthd"), opts_(std::move(opts)) {
  socket_ = dir_ / "berth.sock";
  root_ = dir_ / "root";
  state_ = dir_ / "state";
  log_path_ = dir_ / "berthd.log";
}

DaemonProcess::DaemonProcess(DaemonOptions opts, std::string socket, std::string root, std::string state)
    : dir_("berthd"),
      opts_(std::move(opts)),
      socket_(std::move(socket)),
      root_(std::move(root)),
      state_(std::move(state)) {
  log_path_ = dir_ / "berthd.log";
}

DaemonProcess::~DaemonProcess() {
  if (pid_ > 0) stop(SIGTERM, std::chrono::seconds(20));
  expect_no_sanitizer_report();
}

// In sanitizer builds (scripts/test), a report in berthd ends berthd or only its log: either way
// the test that drove it fails here, with the report.
void DaemonProcess::expect_no_sanitizer_report() const {
  std::string log = read_file(log_path_);
  for (const char* mark :
       {"ERROR: AddressSanitizer", "ERROR: LeakSanitizer", "WARNING: ThreadSanitizer", "runtime error: "}) {
    size_t at = log.find(mark);
    if (at == std::string::npos) continue;
    size_t from = log.rfind('\n', at);
    from = from == std::string::npos ? 0 : from + 1;
    ADD_FAILURE() << "berthd's log holds a sanitizer report:\n" << log.substr(from, 6000);
    return;
  }
}

bool DaemonProcess::start() {
  std::vector<std::string> args{berthd_path(), "--socket", socket_, "--root", root_, "--state", state_};
  if (!opts_.log_level.empty()) args.insert(args.end(), {"--log-level", opts_.log_level});
  // Tests never read or create the host's CNI config: each daemon gets its own conf dir (with a
  // bridge network of its own, unless asked not to) unless the test names one.
  std::string toml = opts_.config_toml;
  if (opts_.network) network_ = opts_.network;
  if (toml.find("cni_conf_dir") == std::string::npos) {
    if (opts_.test_network && !network_) network_ = std::make_shared<TestNetwork>();
    std::string conf_dir = network_ ? network_->conf_dir() : dir_ / "cni-conf";
    toml = "cni_conf_dir = \"" + conf_dir + "\"\n" + toml;
  }
  if (test_runtime() != "runc" && toml.find("default_runtime") == std::string::npos) {
    toml = "default_runtime = \"" + test_runtime() + "\"\n" + toml;
    if (toml.find("[runtimes." + test_runtime() + "]") == std::string::npos)
      toml += "\n[runtimes." + test_runtime() + "]\npath = \"" + test_runtime() + "\"\n";
  }
  std::string cfg = dir_ / "berth.toml";
  write_file(cfg, toml);
  args.insert(args.end(), {"--config", cfg});
  args.insert(args.end(), opts_.extra_args.begin(), opts_.extra_args.end());
  pid_ = fork();
  if (pid_ == 0) {
    int fd = open(log_path_.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    dup2(fd, 1);
    dup2(fd, 2);
    for (auto& kv : opts_.env) ::putenv(kv.data());
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    execv(argv[0], argv.data());
    _exit(127);
  }
  if (!opts_.wait_ready) return true;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (std::chrono::steady_clock::now() < deadline) {
    if (!running()) return false;
    if (access(socket_.c_str(), F_OK) == 0) {
      auto stub = runtime();
      grpc::ClientContext ctx;
      ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(2));
      runtime::v1::VersionRequest req;
      runtime::v1::VersionResponse resp;
      if (stub->Version(&ctx, req, &resp).ok()) return true;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return false;
}

bool DaemonProcess::running() {
  if (pid_ <= 0) return false;
  int status = 0;
  pid_t r = waitpid(pid_, &status, WNOHANG);
  if (r == 0) return true;
  if (r == pid_) exit_code_ = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  pid_ = -1;
  return false;
}

int DaemonProcess::wait_exit(std::chrono::milliseconds timeout) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (running()) {
    if (std::chrono::steady_clock::now() > deadline) return -1;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return exit_code_;
}

int DaemonProcess::stop(int signal, std::chrono::seconds timeout) {
  if (!running()) return exit_code_;
  kill(pid_, signal);
  int code = wait_exit(timeout);
  if (code == -1 && pid_ > 0) {
    kill(pid_, SIGKILL);
    code = wait_exit(std::chrono::seconds(5));
    return -1;
  }
  return code;
}

std::string DaemonProcess::log() const { return read_file(log_path_); }

std::shared_ptr<grpc::Channel> DaemonProcess::channel() {
  // As kubelet: responses up to 16 MiB (ExecSync output).
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(16 << 20);
  return grpc::CreateCustomChannel("unix:" + socket_, grpc::InsecureChannelCredentials(), args);
}

std::unique_ptr<runtime::v1::RuntimeService::Stub> DaemonProcess::runtime() {
  return runtime::v1::RuntimeService::NewStub(channel());
}

std::unique_ptr<runtime::v1::ImageService::Stub> DaemonProcess::images() {
  return runtime::v1::ImageService::NewStub(channel());
}

std::pair<uint64_t, uint64_t> default_container_nofile() {
  uint64_t soft = 1024, hard = 524288;
  std::ifstream status("/proc/self/status");
  uint64_t effective = 0;
  for (std::string line; std::getline(status, line);)
    if (line.rfind("CapEff:", 0) == 0) effective = std::stoull(line.substr(7), nullptr, 16);
  rlimit own{};
  if (!((effective >> 24) & 1) && ::getrlimit(RLIMIT_NOFILE, &own) == 0 && own.rlim_max < hard) {  // CAP_SYS_RESOURCE
    hard = own.rlim_max;
    soft = std::min(soft, hard);
  }
  return {soft, hard};
}

}  // namespace berth::test
