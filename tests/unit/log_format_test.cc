// berthd's log format: the journal's priority prefix when stderr is the stream $JOURNAL_STREAM
// names, the timestamped line otherwise.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>

#include "berth/log_format.h"

namespace berth {
namespace {

std::string formatted(bool journal, spdlog::level::level_enum level, const std::string& text) {
  auto f = berthd_log_formatter(journal);
  spdlog::details::log_msg msg(spdlog::source_loc{}, "berthd", level, text);
  spdlog::memory_buf_t out;
  f->format(msg, out);
  return std::string(out.data(), out.size());
}

TEST(LogFormat, TheJournalGetsEachLevelsSyslogPriority) {
  EXPECT_EQ(formatted(true, spdlog::level::err, "boom"), "<3>error boom\n");
  EXPECT_EQ(formatted(true, spdlog::level::critical, "x"), "<2>critical x\n");
  EXPECT_EQ(formatted(true, spdlog::level::warn, "x"), "<4>warning x\n");
  EXPECT_EQ(formatted(true, spdlog::level::info, "x"), "<6>info x\n");
  EXPECT_EQ(formatted(true, spdlog::level::debug, "x"), "<7>debug x\n");
  std::string plain = formatted(false, spdlog::level::err, "boom");
  EXPECT_EQ(plain.find('<'), std::string::npos) << plain;
  EXPECT_NE(plain.find(" error boom"), std::string::npos) << plain;
}

TEST(LogFormat, StderrIsTheJournalOnlyWhenJournalStreamNamesIt) {
  struct stat st {};
  ASSERT_EQ(::fstat(2, &st), 0);
  const std::string mine = std::to_string(st.st_dev) + ":" + std::to_string(st.st_ino);
  const char* saved = std::getenv("JOURNAL_STREAM");
  std::string keep = saved ? saved : "";
  ::unsetenv("JOURNAL_STREAM");
  EXPECT_FALSE(stderr_is_journal());
  ::setenv("JOURNAL_STREAM", mine.c_str(), 1);
  EXPECT_TRUE(stderr_is_journal());
  // A stream inherited from a service whose stderr was then redirected (a child's log file).
  ::setenv("JOURNAL_STREAM", (std::to_string(st.st_dev) + ":" + std::to_string(st.st_ino + 1)).c_str(), 1);
  EXPECT_FALSE(stderr_is_journal());
  if (saved)
    ::setenv("JOURNAL_STREAM", keep.c_str(), 1);
  else
    ::unsetenv("JOURNAL_STREAM");
}

}  // namespace
}  // namespace berth
