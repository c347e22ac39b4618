// berthd's entry point: flags (CLI11) over the config files (main file and drop-ins) over the
// embedded defaults. --print-config and --check-config show or check that merge and exit; the same
// loader runs again at every SIGHUP (run_daemon), so a reload sees exactly what a start would.
#include <cstdio>

#include <absl/synchronization/mutex.h>

#include <CLI/CLI.hpp>
#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

#include "berth/config.h"
#include "config_reload.h"
#include "berth/daemon.h"
#include "berth/log_format.h"
#include "berth/inherited_fds.h"
#include "sd_notify.h"

int main(int argc, char** argv) {
  // What berthd was started with goes no further: a descriptor its parent leaked stays out of the
  // programs it starts, and so does the service manager's socket.
  berth::mark_descriptors_cloexec_from(3);
  berth::take_notify_socket();
  // Debian's abseil is built with its debug checks, so every absl::Mutex gRPC locks also updates a
  // global lock-order graph, under a global lock. berthd does not need that work in production; and
  // the graph's memory comes from raw mmap calls that can land where a finished thread's stack
  // was, which AddressSanitizer still has poisoned, so ASan builds reported stack-buffer-underflow
  // in GraphCycles after floods of gRPC threads (google/sanitizers#1705).
  absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);
  CLI::App app{"berthd: a Kubernetes CRI v1 container runtime", "berthd"};
  std::string config_path, socket, root, state, log_level;
  bool print_config = false, check_config = false;
  app.add_option("--config", config_path,
                 "config file (default /etc/berth/berth.toml when present); drop-ins in <file>.d/*.toml");
  app.add_option("--socket", socket, "unix socket to serve CRI on");
  app.add_option("--root", root, "durable state directory");
  app.add_option("--state", state, "runtime state directory");
  app.add_option("--log-level", log_level, "trace, debug, info, warn, error");
  app.add_flag("--print-config", print_config, "print the effective configuration (files and flags merged) and exit");
  app.add_flag("--check-config", check_config, "check the configuration files and flags and exit (2 when invalid)");
  app.set_version_flag("--version", std::string("berthd ") + BERTH_VERSION);
  CLI11_PARSE(app, argc, argv);

  auto load = [=]() -> berth::Result<berth::Config> {
    auto loaded = berth::load_config(config_path);
    if (!loaded.ok()) return loaded.status();
    berth::Config config = std::move(loaded).value();
    struct Flag {
      const char* name;
      const char* key;
      const std::string& value;
      std::string& field;
    };
    for (const Flag& f : {Flag{"--socket", "socket", socket, config.socket}, Flag{"--root", "root", root, config.root},
                          Flag{"--state", "state", state, config.state},
                          Flag{"--log-level", "log_level", log_level, config.log_level}}) {
      if (f.value.empty()) continue;
      f.field = f.value;
      config.origins[f.key] = std::string(f.name) + " flag";
    }
    if (berth::Status s = berth::validate_config(config); !s.ok()) return s.context("flags");
    return config;
  };
  auto loaded = load();
  if (!loaded.ok()) {
    std::fprintf(stderr, "berthd: %s\n", loaded.status().message().c_str());
    return 2;
  }
  if (print_config) {
    std::fputs(berth::config_to_toml(*loaded).c_str(), stdout);
    return 0;
  }
  if (check_config) {
    std::string files;
    for (const auto& f : loaded->files) files += (files.empty() ? "" : ", ") + f;
    std::printf("berthd: configuration is valid (%s)\n", files.empty() ? "embedded defaults" : files.c_str());
    // A reload loads exactly this: valid here is applied there, invalid here is refused there.
    std::string live;
    for (const auto& k : berth::live_config_keys()) live += (live.empty() ? "" : ", ") + k;
    std::printf(
        "berthd: a reload (SIGHUP, systemctl reload berthd) applies %s; any other key, and a runtime "
        "handler's root, takes effect at the next restart\n",
        live.c_str());
    return 0;
  }
  berth::Config config = std::move(loaded).value();

  auto logger = spdlog::stderr_logger_mt("berthd");
  logger->set_formatter(berth::berthd_log_formatter(berth::stderr_is_journal()));
  logger->set_level(spdlog::level::from_str(config.log_level));
  logger->flush_on(spdlog::level::debug);
  spdlog::set_default_logger(logger);
  return berth::run_daemon(config, load);
}
