// The CRIU probe: `criu --version` for the version, then `criu check` (the kernel features a dump
// and a restore need), on a detached thread that owns the shared state: berthd's exit never waits
// for a check still running (it dies with berthd, Command::die_with_parent).
#include "berth/criu_support.h"

#include <condition_variable>
#include <cstdio>
#include <mutex>
#include <thread>

#include "berth/command.h"

namespace berth {

namespace {

constexpr int kMinimumVersion = 31600;  // 3.16: restoring into a pod's namespaces and cgroups

CriuProbeResult run_probe(const std::string& binary) {
  CriuProbeResult r;
  r.done = true;
  if (!find_executable(binary)) {
    r.reason = "CRIU (" + binary + ") is not installed";
    return r;
  }
  auto version = run_command({.argv = {binary, "--version"}, .timeout = std::chrono::seconds(10)});
  if (!version.ok() || !version->success()) {
    r.reason = binary + " --version failed";
    return r;
  }
  int number = criu_version_number(version->out, &r.version);
  if (number < kMinimumVersion) {
    r.reason = "CRIU " + (r.version.empty() ? std::string("of an unknown version") : r.version) +
               " is older than 3.16, which restoring into a pod needs";
    return r;
  }
  auto check = run_command({.argv = {binary, "check"}, .timeout = std::chrono::seconds(60)});
  if (!check.ok()) {
    r.reason = "criu check: " + check.status().message();
    return r;
  }
  if (!check->success()) {
    r.reason = "criu check failed on this kernel (" + check->describe(std::chrono::seconds(60)) +
               "): " + criu_error_line(check->err + check->out);
    return r;
  }
  r.usable = true;
  return r;
}

}  // namespace

struct CriuSupport::State {
  mutable std::mutex mu;
  mutable std::condition_variable done;
  CriuProbeResult result;
};

std::shared_ptr<CriuSupport> CriuSupport::probe(std::string criu_binary) {
  auto state = std::make_shared<State>();
  try {
    std::thread([state, criu_binary] {
      CriuProbeResult r = run_probe(criu_binary);
      std::lock_guard lock(state->mu);
      state->result = std::move(r);
      state->done.notify_all();
    }).detach();
  } catch (const std::system_error& e) {
    std::lock_guard lock(state->mu);
    state->result = {true, false, "", std::string("cannot start the CRIU probe: ") + e.what()};
  }
  return std::make_shared<CriuSupport>(std::move(criu_binary), std::move(state));
}

CriuProbeResult CriuSupport::result() const {
  std::lock_guard lock(state_->mu);
  return state_->result;
}

Status CriuSupport::usable(std::chrono::milliseconds wait) const {
  std::unique_lock lock(state_->mu);
  if (!state_->done.wait_for(lock, wait, [this] { return state_->result.done; }))
    return Status(Code::unavailable, "the CRIU probe (criu check) is still running");
  if (state_->result.usable) return ok_status();
  return failed_precondition("checkpoint/restore is not available on this node: " + state_->result.reason);
}

std::string criu_error_line(const std::string& text) {
  std::string last, last_error;
  size_t i = 0;
  while (i < text.size()) {
    size_t j = text.find('\n', i);
    std::string line = text.substr(i, j == std::string::npos ? std::string::npos : j - i);
    if (!line.empty()) last = line;
    if (line.find("Error") != std::string::npos) last_error = line;
    if (j == std::string::npos) break;
    i = j + 1;
  }
  return last_error.empty() ? last : last_error;
}

int criu_version_number(const std::string& text, std::string* version) {
  size_t at = text.find("Version:");
  if (at == std::string::npos) return 0;
  at += 8;
  while (at < text.size() && text[at] == ' ') ++at;
  size_t end = text.find_first_of(" \n", at);
  std::string word = text.substr(at, end == std::string::npos ? std::string::npos : end - at);
  int major = 0, minor = 0, sub = 0;
  if (std::sscanf(word.c_str(), "%3d.%3d.%3d", &major, &minor, &sub) < 2) return 0;
  if (version) *version = word;
  return major * 10000 + minor * 100 + sub;
}

}  // namespace berth
