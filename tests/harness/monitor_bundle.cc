// Busybox bundles and their teardown for the berth-monitor tests; see monitor_bundle.h.
#include "monitor_bundle.h"

#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "berth/command.h"
#include "berth/oci_spec.h"

namespace fs = std::filesystem;

namespace berth::test {
namespace {

constexpr const char* kCgroupParent = "berth-test-monitor";

Result<CommandResult> runc(const std::string& root, std::vector<std::string> args) {
  Command c;
  c.argv = {"runc", "--root", root};
  c.argv.insert(c.argv.end(), args.begin(), args.end());
  c.timeout = std::chrono::seconds(60);
  return run_command(c);
}

Status check(const Result<CommandResult>& r, const std::string& what) {
  if (!r.ok()) return r.status().context(what);
  if (!r->success()) return internal_error(what + ": " + r->describe(std::chrono::seconds(60)) + ": " + r->err);
  return ok_status();
}

void remove_cgroups(const std::string& id) {
  std::error_code ec;
  std::vector<fs::path> roots{"/sys/fs/cgroup"};
  for (const auto& e : fs::directory_iterator("/sys/fs/cgroup", ec)) roots.push_back(e.path());
  for (const auto& r : roots) {
    ::rmdir((r / kCgroupParent / id).c_str());
    ::rmdir((r / kCgroupParent).c_str());  // fails while other tests' containers live: fine
  }
}

}  // namespace

std::vector<LogRecord> read_cri_log(const std::string& path) {
  std::string text = read_file(path);
  std::vector<LogRecord> out;
  size_t start = 0;
  for (;;) {
    size_t nl = text.find('\n', start);
    if (nl == std::string::npos) break;
    std::string line = text.substr(start, nl - start);
    start = nl + 1;
    LogRecord r;
    size_t a = line.find(' ');
    size_t b = a == std::string::npos ? a : line.find(' ', a + 1);
    size_t c = b == std::string::npos ? b : line.find(' ', b + 1);
    if (c == std::string::npos) {
      out.push_back({"", "", "", "MALFORMED: " + line});
      continue;
    }
    r.time = line.substr(0, a);
    r.stream = line.substr(a + 1, b - a - 1);
    r.tag = line.substr(b + 1, c - b - 1);
    r.content = line.substr(c + 1);
    out.push_back(std::move(r));
  }
  return out;
}

bool eventually(const std::function<bool()>& done, std::chrono::milliseconds limit) {
  auto deadline = std::chrono::steady_clock::now() + limit;
  while (!done()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return true;
}

bool process_alive(pid_t pid) {
  if (pid <= 0) return false;
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(stat, line)) return false;
  size_t paren = line.rfind(')');
  return paren != std::string::npos && paren + 2 < line.size() && line[paren + 2] != 'Z' && line[paren + 2] != 'X';
}

MonitoredContainer::MonitoredContainer(const std::string& name, std::vector<std::string> args, bool tty)
    : dir_("berth-monitor") {
  static std::atomic<int> counter{0};
  id = name + "-" + std::to_string(getpid()) + "-" + std::to_string(counter++);
  runtime_root = dir_ / "runc";
  bundle = dir_ / "bundle";
  socket_path = dir_ / "monitor.sock";
  exit_file = dir_ / "exit.json";
  log_path = dir_ / "logs/container.log";
  fs::create_directories(bundle + "/rootfs/bin");
  fs::copy_file("/bin/busybox", bundle + "/rootfs/bin/busybox");
  for (const char* applet : {"sh", "echo", "cat", "sleep", "yes", "head", "stty", "tr", "printf", "true", "seq"})
    fs::create_symlink("busybox", bundle + "/rootfs/bin/" + applet);
  Command spec;
  spec.argv = {"runc", "spec"};
  spec.cwd = bundle;
  auto r = run_command(spec);
  if (!r.ok() || !r->success()) throw std::runtime_error("runc spec failed in " + bundle);
  auto config = oci::read_spec_file(bundle + "/config.json");
  if (!config.ok() || !config->process || !config->linux) throw std::runtime_error("runc spec: " + bundle + ": unread");
  config->process->args = args;
  config->process->terminal = tty;
  config->process->env = {"PATH=/bin", "TERM=xterm"};
  config->linux->cgroups_path = std::string("/") + kCgroupParent + "/" + id;
  write_file(bundle + "/config.json", oci::to_json(*config).dump(2));
}

MonitoredContainer::~MonitoredContainer() {
  (void)runc(runtime_root, {"delete", "--force", id});
  if (process_alive(started_.monitor_pid)) {
    std::string cmdline = read_file("/proc/" + std::to_string(started_.monitor_pid) + "/cmdline");
    if (cmdline.find("berth-monitor") != std::string::npos && cmdline.find(id) != std::string::npos)
      ::kill(started_.monitor_pid, SIGKILL);
  }
  eventually([&] { return !process_alive(started_.monitor_pid); }, std::chrono::seconds(10));
  remove_cgroups(id);
}

MonitorSpawnOptions MonitoredContainer::options() const {
  MonitorSpawnOptions o;
  o.monitor_path = BERTH_MONITOR_PATH;
  o.id = id;
  o.bundle = bundle;
  o.runtime_path = "runc";
  o.runtime_root = runtime_root;
  o.socket_path = socket_path;
  o.exit_file = exit_file;
  o.log_path = log_path;
  auto config = oci::read_spec_file(bundle + "/config.json");
  o.tty = config.ok() && config->process && config->process->terminal;
  o.diagnostics_path = dir_ / "monitor.err";
  return o;
}

Result<MonitorStarted> MonitoredContainer::spawn(const MonitorSpawnOptions& opts) {
  auto r = spawn_monitor(opts);
  if (r.ok()) started_ = *r;
  return r;
}

Status MonitoredContainer::start() { return check(runc(runtime_root, {"start", id}), "runc start " + id); }

Status MonitoredContainer::kill(int signal) {
  return check(runc(runtime_root, {"kill", id, std::to_string(signal)}), "runc kill " + id);
}

Result<ExitInfo> MonitoredContainer::wait_exit_file() {
  eventually([&] { return fs::exists(exit_file); });
  return read_exit_file(exit_file);
}

std::vector<std::string> MonitoredContainer::contents(const std::string& stream) const {
  std::vector<std::string> out;
  for (const auto& r : log()) {
    if (r.stream == stream) out.push_back(r.tag + " " + r.content);
  }
  return out;
}

bool MonitoredContainer::log_has(const std::string& stream, const std::string& record) const {
  for (const auto& r : contents(stream)) {
    if (r == record) return true;
  }
  return false;
}

void spawn_and_start(MonitoredContainer& c, const MonitorSpawnOptions& opts) {
  auto started = c.spawn(opts);
  ASSERT_TRUE(started.ok()) << started.status().message() << "\n" << c.diagnostics();
  EXPECT_GT(started->container_pid, 0);
  EXPECT_TRUE(process_alive(started->monitor_pid));
  Status s = c.start();
  ASSERT_TRUE(s.ok()) << s.message();
}

bool read_until(int fd, const std::string& want, std::string* seen, std::chrono::milliseconds limit) {
  auto deadline = std::chrono::steady_clock::now() + limit;
  while (seen->find(want) == std::string::npos) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return false;
    pollfd p{fd, POLLIN, 0};
    if (poll(&p, 1, static_cast<int>(left.count())) <= 0) continue;
    char buf[4096];
    ssize_t n = read(fd, buf, sizeof buf);
    if (n <= 0) return seen->find(want) != std::string::npos;
    seen->append(buf, static_cast<size_t>(n));
  }
  return true;
}

bool write_all(int fd, const std::string& data) {
  return write(fd, data.data(), data.size()) == static_cast<ssize_t>(data.size());
}

std::string MonitoredContainer::diagnostics() const { return read_file(dir_ / "monitor.err"); }

}  // namespace berth::test
