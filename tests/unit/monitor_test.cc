// berth-monitor's pure parts: CRI log records (timestamps, F/P cutting at the limit, \r\n, partial
// chunks), the wire protocol (encode/decode, fds over a socketpair) and the exit file round trip.
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "berth/monitor.h"
#include "berth/monitor_protocol.h"
#include "berth/test/temp_dir.h"
#include "cri_log_line.h"
#include "exit_record.h"
#include "flat_json.h"
#include "packet_io.h"

namespace berth {
namespace {

namespace proto = berth::monitor_protocol;

std::string timestamp(int64_t ns) {
  char out[kTimestampLength];
  format_rfc3339_nano(ns, out);
  return std::string(out, kTimestampLength);
}

TEST(CriLogFormat, TimestampsAreUtcWithNineFractionDigits) {
  EXPECT_EQ(timestamp(0), "1970-01-01T00:00:00.000000000Z");
  EXPECT_EQ(timestamp(1795401253102151025), "2026-11-23T02:34:13.102151025Z");
  EXPECT_EQ(timestamp(951782400000000005), "2000-02-29T00:00:00.000000005Z");
  EXPECT_EQ(timestamp(1709251199999999999), "2024-02-29T23:59:59.999999999Z");
  EXPECT_EQ(timestamp(-1), "1969-12-31T23:59:59.999999999Z");
}

TEST(CriLogFormat, OneRecord) {
  char out[128];
  size_t n = format_cri_log_line(1795401253102151025, "stderr", true, "boom", 4, out, sizeof out);
  EXPECT_EQ(std::string(out, n), "2026-11-23T02:34:13.102151025Z stderr P boom\n");
  n = format_cri_log_line(0, "stdout", false, "", 0, out, sizeof out);
  EXPECT_EQ(std::string(out, n), "1970-01-01T00:00:00.000000000Z stdout F \n");
  EXPECT_EQ(format_cri_log_line(0, "stdout", false, "x", 1, out, 20), 0u);  // too small a buffer
}

struct Record {
  bool partial;
  std::string content;
  bool operator==(const Record&) const = default;
};

std::ostream& operator<<(std::ostream& os, const Record& r) {
  return os << (r.partial ? "P:" : "F:") << r.content.substr(0, 40) << "(" << r.content.size() << ")";
}

class Splitter {
 public:
  explicit Splitter(size_t line_max)
      : storage_(CriLineSplitter::storage_size(line_max)),
        splitter_(storage_.data(), line_max, &Splitter::emit, this) {}
  Splitter& feed(const std::string& s) {
    splitter_.feed(s.data(), s.size());
    return *this;
  }
  std::vector<Record> finish() {
    splitter_.finish();
    return records;
  }
  std::vector<Record> records;

 private:
  static void emit(void* ctx, bool partial, const char* data, size_t len) {
    static_cast<Splitter*>(ctx)->records.push_back({partial, std::string(data, len)});
  }
  std::vector<char> storage_;
  CriLineSplitter splitter_;
};

TEST(CriLineSplitter, FullLinesAndEmptyLines) {
  EXPECT_EQ(Splitter(16).feed("a\nbb\n\n").finish(), (std::vector<Record>{{false, "a"}, {false, "bb"}, {false, ""}}));
}

TEST(CriLineSplitter, LinesArrivingInPiecesAreJoined) {
  EXPECT_EQ(Splitter(16).feed("ab").feed("c").feed("d\ne").feed("f\n").finish(),
            (std::vector<Record>{{false, "abcd"}, {false, "ef"}}));
}

TEST(CriLineSplitter, CrLfEndsALineLikeLf) {
  EXPECT_EQ(Splitter(16).feed("dos\r\nunix\n").feed("split\r").feed("\n").finish(),
            (std::vector<Record>{{false, "dos"}, {false, "unix"}, {false, "split"}}));
  // A lone \r inside a line is content.
  EXPECT_EQ(Splitter(16).feed("a\rb\n").finish(), (std::vector<Record>{{false, "a\rb"}}));
}

TEST(CriLineSplitter, UnterminatedRestIsPartialAtEnd) {
  Splitter s(16);
  s.feed("done\nno newline");
  EXPECT_EQ(s.records, (std::vector<Record>{{false, "done"}}));  // nothing partial before the end
  EXPECT_EQ(s.finish(), (std::vector<Record>{{false, "done"}, {true, "no newline"}}));
}

TEST(CriLineSplitter, LongLinesAreCutIntoPartialsOfTheLimit) {
  EXPECT_EQ(Splitter(4).feed("abcdefghij\n").finish(),
            (std::vector<Record>{{true, "abcd"}, {true, "efgh"}, {false, "ij"}}));
  EXPECT_EQ(Splitter(4).feed("abcdefgh\n").finish(), (std::vector<Record>{{true, "abcd"}, {false, "efgh"}}));
}

TEST(CriLineSplitter, ALineOfExactlyTheLimitIsFull) {
  EXPECT_EQ(Splitter(4).feed("abcd\n").finish(), (std::vector<Record>{{false, "abcd"}}));
  EXPECT_EQ(Splitter(4).feed("abcd\r").feed("\n").finish(), (std::vector<Record>{{false, "abcd"}}));
  EXPECT_EQ(Splitter(4).feed("abcd\rx\n").finish(), (std::vector<Record>{{true, "abcd"}, {false, "\rx"}}));
  EXPECT_EQ(Splitter(4).feed("abcd\r").finish(), (std::vector<Record>{{true, "abcd"}, {true, "\r"}}));
}

TEST(CriLineSplitter, OneMebibyteLineIsSixtyThreePartialsAndAFull) {
  Splitter s(16384);
  std::string chunk(1000, 'x');
  size_t total = 1 << 20;
  for (size_t sent = 0; sent < total; sent += chunk.size())
    s.feed(chunk.substr(0, std::min(chunk.size(), total - sent)));
  s.feed("\n");
  auto records = s.finish();
  ASSERT_EQ(records.size(), 64u);
  for (size_t i = 0; i < 63; ++i) {
    EXPECT_TRUE(records[i].partial);
    EXPECT_EQ(records[i].content.size(), 16384u);
  }
  EXPECT_FALSE(records[63].partial);
  EXPECT_EQ(records[63].content.size(), 16384u);
}

TEST(MonitorProtocol, EncodeDecodeRoundTrip) {
  unsigned char packet[proto::kMaxPacket];
  proto::Exited e{137, 9, 1234567890123};
  size_t n = proto::encode(proto::Type::exited, &e, sizeof e, "killed", 6, packet);
  ASSERT_EQ(n, sizeof(proto::Header) + sizeof e + 6);
  proto::Message m;
  ASSERT_EQ(proto::decode(packet, n, &m), proto::DecodeError::none);
  EXPECT_EQ(m.type, proto::Type::exited);
  proto::Exited back;
  const char* text = nullptr;
  size_t text_len = 0;
  ASSERT_TRUE(m.fixed(&back, &text, &text_len));
  EXPECT_EQ(back.exit_code, 137);
  EXPECT_EQ(back.signal, 9);
  EXPECT_EQ(back.exited_at_ns, 1234567890123);
  EXPECT_EQ(std::string(text, text_len), "killed");
  proto::Created too_big;
  proto::Message short_one{proto::Type::resize, 1, packet, 2};
  EXPECT_FALSE(short_one.fixed(&too_big));
}

TEST(MonitorProtocol, DecodeRejectsBadPackets) {
  unsigned char packet[proto::kMaxPacket];
  size_t n = proto::encode(proto::Type::hello, nullptr, 0, nullptr, 0, packet);
  proto::Message m;
  EXPECT_EQ(proto::decode(packet, 5, &m), proto::DecodeError::short_packet);
  EXPECT_EQ(proto::decode(packet, n + 1, &m), proto::DecodeError::bad_length);
  packet[0] ^= 0xff;
  EXPECT_EQ(proto::decode(packet, n, &m), proto::DecodeError::bad_magic);
  n = proto::encode(proto::Type::hello, nullptr, 0, nullptr, 0, packet, 7);
  EXPECT_EQ(proto::decode(packet, n, &m), proto::DecodeError::other_version);
  EXPECT_EQ(m.version, 7);
  std::string long_text(10000, 'e');
  n = proto::encode(proto::Type::error, nullptr, 0, long_text.data(), long_text.size(), packet);
  EXPECT_EQ(n, proto::kMaxPacket);  // cut, not overflowing
}

TEST(MonitorProtocol, PacketsCarryFdsOverSeqpacket) {
  int sv[2];
  ASSERT_EQ(socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sv), 0);
  UniqueFd a(sv[0]), b(sv[1]);
  int p[2];
  ASSERT_EQ(pipe(p), 0);
  UniqueFd pr(p[0]), pw(p[1]);
  proto::AttachReply reply{0, 1, 0, 0};
  int fds[1] = {pr.get()};
  ASSERT_EQ(proto::send_packet(a.get(), proto::Type::attach_fds, &reply, sizeof reply, nullptr, 0, fds, 1), 0);
  pr.reset();
  unsigned char buf[proto::kMaxPacket];
  int got[proto::kMaxFds];
  int nfds = 0;
  ssize_t r = proto::recv_packet(b.get(), buf, got, &nfds);
  ASSERT_GT(r, 0);
  ASSERT_EQ(nfds, 1);
  UniqueFd received(got[0]);
  ASSERT_EQ(write(pw.get(), "hi", 2), 2);
  char in[2];
  ASSERT_EQ(read(received.get(), in, 2), 2);
  EXPECT_EQ(std::string(in, 2), "hi");
  a.reset();
  EXPECT_EQ(proto::recv_packet(b.get(), buf, got, &nfds), 0);  // end of stream
}

TEST(ExitFile, RoundTripWithEscapes) {
  ExitRecord r;
  r.exit_code = 137;
  r.signal = 9;
  r.exited_at_ns = 1795401253102151025;
  snprintf(r.reason, sizeof r.reason, "create failed: exec: \"nope\": not found\n\ttab \\ é");
  char text[8192];
  size_t n = format_exit_record(r, text, sizeof text);
  const std::string prefix =
      "{\"version\":1,\"exit_code\":137,\"signal\":9,\"exited_at\":1795401253102151025,\"reason\":\"";
  EXPECT_EQ(std::string(text, prefix.size()), prefix);
  EXPECT_EQ(text[n - 1], '\n');
  test::TempDir dir("berth-monitor-unit");
  test::write_file(dir / "exit.json", std::string(text, n));
  auto back = read_exit_file(dir / "exit.json");
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(back->exit_code, 137);
  EXPECT_EQ(back->signal, 9);
  EXPECT_EQ(back->exited_at_ns, 1795401253102151025);
  EXPECT_EQ(back->reason, r.reason);
}

TEST(ExitFile, MissingAndMalformedFiles) {
  test::TempDir dir("berth-monitor-unit");
  auto missing = read_exit_file(dir / "none.json");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), Code::not_found);
  EXPECT_NE(missing.status().message().find(dir / "none.json"), std::string::npos);
  for (const char* bad : {"", "{}", "{\"version\":2,\"exit_code\":1,\"signal\":0,\"exited_at\":1,\"reason\":\"\"}",
                          "{\"version\":1,\"exit_code\":\"1\",\"signal\":0,\"exited_at\":1,\"reason\":\"\"}",
                          "{\"version\":1,\"exit_code\":1,\"signal\":0,\"exited_at\":1}", "not json"}) {
    test::write_file(dir / "bad.json", bad);
    auto r = read_exit_file(dir / "bad.json");
    EXPECT_FALSE(r.ok()) << bad;
  }
}

TEST(FlatJson, RuntimeLogLinesOfRuncAndCrun) {
  const std::string runc =
      R"({"level":"error","msg":"exec: \"nope\": executable file not found in $PATH","time":"2026-11-23T02:26:01Z"})";
  const std::string crun =
      R"({"msg": "executable file `nope` not found: No such file \u00e9", "level": "error", "extra": {"a": [1, "}"]}})";
  JsonField f;
  char out[256];
  ASSERT_TRUE(find_json_field(runc.data(), runc.size(), "msg", &f));
  json_string_value(f, out, sizeof out);
  EXPECT_STREQ(out, "exec: \"nope\": executable file not found in $PATH");
  ASSERT_TRUE(find_json_field(crun.data(), crun.size(), "level", &f));
  EXPECT_EQ(std::string(f.begin, f.len), "error");
  ASSERT_TRUE(find_json_field(crun.data(), crun.size(), "msg", &f));
  json_string_value(f, out, sizeof out);
  EXPECT_STREQ(out, "executable file `nope` not found: No such file \xc3\xa9");
  EXPECT_FALSE(find_json_field(crun.data(), crun.size(), "a", &f));  // only top-level members
  EXPECT_FALSE(find_json_field("[1]", 3, "msg", &f));
}

}  // namespace
}  // namespace berth
