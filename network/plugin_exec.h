// Runs one CNI plugin once: the CNI protocol (CNI_* environment, config on stdin, result or
// error JSON on stdout) with a per-exec timeout and the bounded retry on "text file busy".
#pragma once

#include <chrono>
#include <functional>
#include <string>
#include <vector>

#include "berth/status.h"

namespace berth::cni {

// Told of every plugin run (metrics); either may be unset.
struct ExecObserver {
  std::function<void(const std::string& plugin, const std::string& command, double seconds, bool ok)> ran;
  std::function<void(const std::string& plugin)> busy_retry;
};

struct ExecSettings {
  std::vector<std::string> plugin_dirs;
  std::chrono::milliseconds timeout{30000};
  std::chrono::milliseconds busy_retry_budget{3000};
  const ExecObserver* observer = nullptr;
};

struct PluginCall {
  std::string command;  // ADD, DEL, CHECK
  std::string type;     // the plugin binary's name
  std::string container_id;
  std::string netns;  // may be empty for DEL
  std::string ifname;
  std::string cni_args;
  std::string stdin_config;
};

// The plugin's stdout on success. Failures name the plugin and command; a plugin's CNI error
// object follows as the exact JSON text it printed: `plugin bridge (ADD): {"cniVersion":...,
// "code":7,"msg":...}`. A plugin that stays busy (ETXTBSY) past the retry budget is an error,
// never a success.
Result<std::string> exec_plugin(const ExecSettings& settings, const PluginCall& call);

// The plugin's path, or NOT_FOUND naming the dirs searched.
Result<std::string> find_plugin(const std::vector<std::string>& plugin_dirs, const std::string& type);

}  // namespace berth::cni
