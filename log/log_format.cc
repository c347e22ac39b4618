// See log_format.h.
#include "berth/log_format.h"

#include <sys/stat.h>

#include <cstdlib>
#include <string>

#include <spdlog/pattern_formatter.h>

namespace berth {

namespace {

// The syslog priority of a level, as journald's stream parser reads it.
class SyslogPriorityFlag : public spdlog::custom_flag_formatter {
 public:
  void format(const spdlog::details::log_msg& msg, const std::tm&, spdlog::memory_buf_t& dest) override {
    char prefix[4] = {'<', '6', '>', 0};
    switch (msg.level) {
      case spdlog::level::critical: prefix[1] = '2'; break;
      case spdlog::level::err: prefix[1] = '3'; break;
      case spdlog::level::warn: prefix[1] = '4'; break;
      case spdlog::level::info: prefix[1] = '6'; break;
      default: prefix[1] = '7'; break;
    }
    dest.append(prefix, prefix + 3);
  }
  std::unique_ptr<spdlog::custom_flag_formatter> clone() const override {
    return std::make_unique<SyslogPriorityFlag>();
  }
};

}  // namespace

bool stderr_is_journal() {
  const char* stream = std::getenv("JOURNAL_STREAM");
  struct stat st {};
  if (!stream || ::fstat(2, &st) != 0) return false;
  return std::string(stream) == std::to_string(st.st_dev) + ":" + std::to_string(st.st_ino);
}

std::unique_ptr<spdlog::formatter> berthd_log_formatter(bool journal) {
  if (!journal) return std::make_unique<spdlog::pattern_formatter>("%Y-%m-%dT%H:%M:%S.%e%z %^%l%$ %v");
  auto f = std::make_unique<spdlog::pattern_formatter>();
  f->add_flag<SyslogPriorityFlag>('J').set_pattern("%J%l %v");
  return f;
}

}  // namespace berth
