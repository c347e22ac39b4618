// Flag parsing for berth-monitor; derived defaults live in static buffers (one monitor, one set).
#include "monitor_options.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

namespace berth::monitor {
namespace {

char pid_file_buf[PATH_MAX];
char runtime_log_buf[PATH_MAX];
char console_buf[PATH_MAX];

}  // namespace

bool parse_monitor_options(int argc, char** argv, MonitorOptions* o, char* err, size_t cap) {
  struct Str {
    const char* flag;
    const char** dst;
  } strs[] = {
      {"--id", &o->id},
      {"--bundle", &o->bundle},
      {"--runtime", &o->runtime},
      {"--runtime-root", &o->runtime_root},
      {"--socket", &o->socket_path},
      {"--exit-file", &o->exit_file},
      {"--log-path", &o->log_path},
      {"--log-dir", &o->log_dir},
      {"--pid-file", &o->pid_file},
      {"--runtime-log", &o->runtime_log},
      {"--console-socket", &o->console_socket},
      {"--restore-from", &o->restore_from},
  };
  struct Flag {
    const char* flag;
    bool* dst;
  } flags[] = {
      {"--systemd-cgroup", &o->systemd_cgroup}, {"--tty", &o->tty},     {"--stdin", &o->open_stdin},
      {"--stdin-once", &o->stdin_once},         {"--start", &o->start},
  };
  for (int i = 1; i < argc; ++i) {
    const char* a = argv[i];
    bool known = false;
    for (auto& f : flags) {
      if (strcmp(a, f.flag) == 0) {
        *f.dst = true;
        known = true;
      }
    }
    if (known) continue;
    if (i + 1 >= argc) {
      snprintf(err, cap, "unknown flag or missing value: %s", a);
      return false;
    }
    const char* value = argv[i + 1];
    for (auto& s : strs) {
      if (strcmp(a, s.flag) == 0) {
        *s.dst = value;
        known = true;
      }
    }
    if (strcmp(a, "--log-line-max") == 0) {
      char* end;
      unsigned long long v = strtoull(value, &end, 10);
      if (*end || v < 1 || v > (1u << 20)) {
        snprintf(err, cap, "--log-line-max: %s is not between 1 and 1048576", value);
        return false;
      }
      o->log_line_max = v;
      known = true;
    }
    if (strcmp(a, "--sync-fd") == 0) {
      o->sync_fd = atoi(value);
      known = true;
    }
    if (!known) {
      snprintf(err, cap, "unknown flag: %s", a);
      return false;
    }
    ++i;
  }
  const char* required[][2] = {{"--id", o->id},
                               {"--bundle", o->bundle},
                               {"--runtime", o->runtime},
                               {"--runtime-root", o->runtime_root},
                               {"--socket", o->socket_path},
                               {"--exit-file", o->exit_file},
                               {"--log-path", o->log_path}};
  for (auto& r : required) {
    if (!r[1] || !*r[1]) {
      snprintf(err, cap, "missing %s", r[0]);
      return false;
    }
  }
  if (o->log_dir) {
    size_t n = strlen(o->log_dir);
    if (strncmp(o->log_path, o->log_dir, n) != 0 || o->log_path[n] != '/' || !o->log_path[n + 1]) {
      snprintf(err, cap, "--log-path %s is not below --log-dir %s", o->log_path, o->log_dir);
      return false;
    }
  }
  if (!o->pid_file) {
    snprintf(pid_file_buf, sizeof pid_file_buf, "%s/pid", o->bundle);
    o->pid_file = pid_file_buf;
  }
  if (!o->runtime_log) {
    snprintf(runtime_log_buf, sizeof runtime_log_buf, "%s/runtime.log", o->bundle);
    o->runtime_log = runtime_log_buf;
  }
  if (!o->console_socket) {
    const char* slash = strrchr(o->socket_path, '/');
    int dir_len = slash ? static_cast<int>(slash - o->socket_path) : 1;
    snprintf(console_buf, sizeof console_buf, "%.*s/console.sock", dir_len, slash ? o->socket_path : ".");
    o->console_socket = console_buf;
  }
  if (o->stdin_once && !o->open_stdin) o->stdin_once = false;
  return true;
}

}  // namespace berth::monitor
