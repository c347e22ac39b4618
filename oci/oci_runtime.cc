// `create` is spawned by hand with /dev/null for stdio: the container's init inherits the
// runtime's stdio, so capturing it through pipes would wait on the container, not on runc.
#include "berth/oci_runtime.h"
#include "berth/tracer.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <sstream>
#include <vector>

#include "berth/atomic_file.h"
#include "berth/command.h"
#include "berth/file_text.h"
#include "berth/file_tree.h"
#include "berth/json_fields.h"
#include "berth/spawn.h"

namespace berth {

std::string runtime_log_error(const std::string& path) {
  std::istringstream in(read_text_file(path));
  std::string line, msg;
  while (std::getline(in, line)) {
    const auto j = nlohmann::json::parse(line, nullptr, false);
    // A line that is not such an object, or whose level is not a string, is not a log entry.
    JsonFields f(j);
    const std::string level = f.string("level");
    if (!f.ok() || (level != "error" && level != "fatal")) continue;
    msg = f.string("msg", line);
    if (!f.ok()) msg = line;
  }
  return msg;
}

namespace {

std::string trim(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  return s;
}

}  // namespace

std::vector<std::string> OciRuntime::argv(const std::vector<std::string>& args) const {
  std::vector<std::string> v{binary_, "--root", root_};
  if (systemd_cgroup_) v.push_back("--systemd-cgroup");
  v.insert(v.end(), args.begin(), args.end());
  return v;
}

Status OciRuntime::run(const std::vector<std::string>& args, const std::string& what) const {
  ScopedSpan span("runtime " + (args.empty() ? std::string() : args[0]), 3);
  span.attribute("runtime.binary", binary_);
  Status s = run_untraced(args, what);
  if (!s.ok()) span.fail(s.message());
  return s;
}

Status OciRuntime::run_untraced(const std::vector<std::string>& args, const std::string& what) const {
  Command c;
  c.argv = argv(args);
  c.timeout = timeout_;
  auto r = run_command(c);
  if (!r.ok()) return r.status().context(what);
  if (!r->success())
    return Status(r->timed_out ? Code::deadline_exceeded : Code::internal,
                  what + ": " + r->describe(timeout_) + ": " + trim(r->err));
  return ok_status();
}

Status OciRuntime::create(const std::string& id, const std::string& bundle) const {
  ScopedSpan span("runtime create", 3);
  span.attribute("runtime.binary", binary_);
  Status s = create_untraced(id, bundle);
  if (!s.ok()) span.fail(s.message());
  return s;
}

Status OciRuntime::create_untraced(const std::string& id, const std::string& bundle) const {
  std::string log = bundle + "/runtime.log";
  std::vector<std::string> args{binary_, "--root", root_, "--log", log, "--log-format", "json"};
  if (systemd_cgroup_) args.push_back("--systemd-cgroup");
  args.insert(args.end(), {"create", "--bundle", bundle, "--pid-file", bundle + "/pid", id});
  auto spawned = spawn_process({.argv = args, .die_with_parent = true});
  if (!spawned.ok()) return spawned.status().context("create " + id);
  pid_t pid = *spawned;
  int status = 0;
  auto deadline = std::chrono::steady_clock::now() + timeout_;
  for (;;) {
    pid_t w = ::waitpid(pid, &status, WNOHANG);
    if (w == pid) break;
    if (w < 0 && errno != EINTR) return errno_status(errno, "create " + id + ": wait for " + binary_);
    if (std::chrono::steady_clock::now() > deadline) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, &status, 0);
      return deadline_exceeded("create " + id + ": " + binary_ + " did not finish in " +
                               std::to_string(timeout_.count()) + "s");
    }
    ::usleep(1000);
  }
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return ok_status();
  std::string msg = runtime_log_error(log);
  return internal_error("create " + id + ": " + binary_ + " failed: " + (msg.empty() ? "no message" : msg));
}

Status OciRuntime::start(const std::string& id) const { return run({"start", id}, "start " + id); }

Result<RuntimeState> OciRuntime::state(const std::string& id) const {
  Command c;
  c.argv = {binary_, "--root", root_, "state", id};
  c.timeout = timeout_;
  auto r = run_command(c);
  if (!r.ok()) return r.status();
  if (!r->success()) return Status(Code::not_found, "state " + id + ": " + trim(r->err));
  auto j = nlohmann::json::parse(r->out, nullptr, false);
  if (!j.is_object()) return internal_error("state " + id + ": unreadable output");
  RuntimeState st;
  JsonFields f(j);
  st.status = f.string("status");
  st.pid = f.integer<int>("pid", 0);
  if (st.pid < 0) f.fail("pid", "must not be negative");
  if (!f.ok()) return internal_error("state " + id + " output: " + f.status().message());
  return st;
}

Status OciRuntime::kill(const std::string& id, int signal) const {
  return run({"kill", id, std::to_string(signal)}, "kill " + id);
}

Status OciRuntime::update(const std::string& id, const std::string& resources_json,
                          const std::string& scratch_dir) const {
  std::string file = scratch_dir + "/update-resources.json";
  if (Status w = write_file_atomically(file, resources_json, 0600, false); !w.ok()) return w.context("update " + id);
  Status s = run({"update", "--resources", file, id}, "update " + id);
  ::unlink(file.c_str());
  return s;
}

Status OciRuntime::remove(const std::string& id) const { return remove_with({"delete", "--force", id}, id); }

Status OciRuntime::remove_stopped(const std::string& id) const { return remove_with({"delete", id}, id); }

Status OciRuntime::remove_with(const std::vector<std::string>& args, const std::string& id) const {
  Status s = run(args, "delete " + id);
  if (!s.ok() &&
      (s.message().find("does not exist") != std::string::npos || s.message().find("not exist") != std::string::npos)) {
    // A create killed before it wrote its state leaves a directory the runtime does not know.
    return forget(id);
  }
  return s;
}

Status OciRuntime::forget(const std::string& id) const {
  if (id.find('/') != std::string::npos || id.empty() || id == "." || id == "..") return ok_status();
  return remove_tree(root_ + "/" + id).context("delete " + id + ": the runtime's leftover state");
}

std::vector<std::string> OciRuntime::ids_in_root() const {
  std::vector<std::string> ids;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(root_, ec))
    if (e.is_directory(ec)) ids.push_back(e.path().filename());
  return ids;
}

}  // namespace berth
