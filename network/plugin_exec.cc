// CNI plugin exec through posix/ run_command. The ETXTBSY retry is here because a CNI installer
// (a DaemonSet copying binaries into /opt/cni/bin) can hold a plugin open for writing at the
// moment we exec it; the loop is bounded and ends in an error, so a DEL can never report success
// for a plugin that did not run.
#include "plugin_exec.h"
#include "plugin_output.h"

#include <cerrno>
#include <cstring>
#include <thread>

#include <spdlog/spdlog.h>

#include "berth/command.h"
#include "berth/tracer.h"

extern char** environ;

namespace berth::cni {

// The plugin run itself, inside exec_plugin's span.
static Result<std::string> exec_plugin_untraced(const ExecSettings& settings, const PluginCall& call,
                                                const std::string& what);

namespace {

using Clock = std::chrono::steady_clock;

std::string join(const std::vector<std::string>& v, const char* sep) {
  std::string out;
  for (const auto& s : v) out += (out.empty() ? "" : sep) + s;
  return out;
}

// berthd's environment without any CNI_* (PATH matters: portmap runs iptables), plus the call's.
std::vector<std::string> plugin_environment(const PluginCall& call, const std::vector<std::string>& dirs) {
  std::vector<std::string> env;
  for (char** e = environ; e && *e; ++e) {
    if (strncmp(*e, "CNI_", 4) != 0) env.emplace_back(*e);
  }
  env.push_back("CNI_COMMAND=" + call.command);
  env.push_back("CNI_CONTAINERID=" + call.container_id);
  env.push_back("CNI_NETNS=" + call.netns);
  env.push_back("CNI_IFNAME=" + call.ifname);
  env.push_back("CNI_ARGS=" + call.cni_args);
  env.push_back("CNI_PATH=" + join(dirs, ":"));
  return env;
}

}  // namespace

Result<std::string> find_plugin(const std::vector<std::string>& plugin_dirs, const std::string& type) {
  if (auto p = find_executable(type, plugin_dirs)) return *p;
  return not_found("plugin " + type + " not found in " + join(plugin_dirs, ":"));
}

Result<std::string> exec_plugin(const ExecSettings& settings, const PluginCall& call) {
  const std::string what = "plugin " + call.type + " (" + call.command + ")";
  ScopedSpan span("cni " + call.command + " " + call.type, 3);
  span.attribute("cni.plugin", call.type);
  span.attribute("cni.command", call.command);
  auto result = exec_plugin_untraced(settings, call, what);
  if (!result.ok()) span.fail(result.status().message());
  return result;
}

Result<std::string> exec_plugin_untraced(const ExecSettings& settings, const PluginCall& call,
                                         const std::string& what) {
  auto path = find_plugin(settings.plugin_dirs, call.type);
  if (!path.ok()) return path.status();
  Command cmd{.argv = {*path},
              .env = plugin_environment(call, settings.plugin_dirs),
              .stdin_data = call.stdin_config,
              .timeout = settings.timeout,
              .output_limit = 1 << 20};
  const auto started = Clock::now();
  auto backoff = std::chrono::milliseconds(20);
  const ExecObserver* obs = settings.observer;
  for (int attempt = 1;; ++attempt) {
    const auto run_started = Clock::now();
    auto run = run_command(cmd);
    if (obs && obs->ran && (run.ok() || run.status().sys_errno() != ETXTBSY)) {
      obs->ran(call.type, call.command, std::chrono::duration<double>(Clock::now() - run_started).count(),
               run.ok() && run->success());
    }
    if (!run.ok()) {
      if (run.status().sys_errno() != ETXTBSY) return run.status().context(what);
      auto elapsed = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - started);
      if (elapsed >= settings.busy_retry_budget) {
        return Status(Code::unavailable,
                      what + ": " + *path + " is still busy (text file busy) after " + std::to_string(attempt) +
                          " tries over " + std::to_string(elapsed.count()) + "ms; the plugin did not run",
                      ETXTBSY);
      }
      auto wait = std::min(backoff, settings.busy_retry_budget - elapsed);
      if (obs && obs->busy_retry) obs->busy_retry(call.type);
      spdlog::warn("cni: {} for {}: exec {}: text file busy, retry {} in {}ms", what, call.container_id, *path, attempt,
                   wait.count());
      std::this_thread::sleep_for(wait);
      backoff = std::min(backoff * 2, std::chrono::milliseconds(320));
      continue;
    }
    const CommandResult& r = *run;
    if (r.timed_out)
      return deadline_exceeded(what + ": timed out after " + std::to_string(settings.timeout.count()) + "ms; killed");
    if (!r.success()) {
      if (std::string cni_error = cni_error_json(r.out); !cni_error.empty()) {
        if (!trim(r.err).empty()) spdlog::debug("cni: {} for {} stderr: {}", what, call.container_id, trim(r.err));
        return internal_error(what + ": " + cni_error);
      }
      return internal_error(what + ": " + plugin_output_text(r.out, r.err) + " [" + r.describe(settings.timeout) + "]");
    }
    return r.out;
  }
}

}  // namespace berth::cni
