// berthd's entry point: flags (CLI11) over the config file over the embedded defaults.
#include <cstdio>

#include <CLI/CLI.hpp>
#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

#include "berth/config.h"
#include "berth/daemon.h"

int main(int argc, char** argv) {
  CLI::App app{"berthd: a Kubernetes CRI v1 container runtime", "berthd"};
  std::string config_path, socket, root, state, log_level;
  app.add_option("--config", config_path, "config file (default /etc/berth/berth.toml when present)");
  app.add_option("--socket", socket, "unix socket to serve CRI on");
  app.add_option("--root", root, "durable state directory");
  app.add_option("--state", state, "runtime state directory");
  app.add_option("--log-level", log_level, "trace, debug, info, warn, error");
  app.set_version_flag("--version", std::string("berthd ") + BERTH_VERSION);
  CLI11_PARSE(app, argc, argv);

  auto loaded = berth::load_config(config_path);
  if (!loaded.ok()) {
    std::fprintf(stderr, "berthd: %s\n", loaded.status().message().c_str());
    return 2;
  }
  berth::Config config = std::move(loaded).value();
  if (!socket.empty()) config.socket = socket;
  if (!root.empty()) config.root = root;
  if (!state.empty()) config.state = state;
  if (!log_level.empty()) config.log_level = log_level;
  if (berth::Status s = berth::validate_config(config); !s.ok()) {
    std::fprintf(stderr, "berthd: flags: %s\n", s.message().c_str());
    return 2;
  }

  auto logger = spdlog::stderr_logger_mt("berthd");
  logger->set_pattern("%Y-%m-%dT%H:%M:%S.%e%z %^%l%$ %v");
  logger->set_level(spdlog::level::from_str(config.log_level));
  logger->flush_on(spdlog::level::debug);
  spdlog::set_default_logger(logger);
  return berth::run_daemon(config);
}
