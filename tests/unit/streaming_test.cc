// Unit tests of the streaming server's pieces: SPDY frames and header blocks (against zlib with
// the SPDY/3 dictionary), the token store, WebSocket channel framing, Status messages, resizes;
// and the caps on what the server reads, driven over raw sockets; and the count of blocking calls
// that an io_context owner waits for (blocking_work.h).
#include <arpa/inet.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>
#include <zlib.h>

#include <atomic>
#include <boost/asio/io_context.hpp>
#include <boost/asio/strand.hpp>
#include <chrono>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <thread>

#include "berth/streaming_server.h"
#include "blocking_work.h"
#include "exit_status.h"
#include "session_limits.h"
#include "spdy_frame.h"
#include "spdy_headers.h"
#include "terminal_size.h"
#include "token_store.h"
#include "ws_channel.h"

using namespace berth;
using namespace berth::streaming;

namespace {

std::string_view payload_of(const std::string& frame) { return std::string_view(frame).substr(spdy::kFrameHeaderSize); }
spdy::FrameHeader header_of(const std::string& frame) {
  return spdy::parse_frame_header(reinterpret_cast<const uint8_t*>(frame.data()));
}

TEST(SpdyFrame, ControlFramesRoundTrip) {
  auto f = spdy::rst_stream_frame(7, spdy::kCancel);
  auto h = header_of(f);
  EXPECT_TRUE(h.control);
  EXPECT_EQ(h.version, 3);
  EXPECT_EQ(h.type, spdy::kRstStream);
  EXPECT_EQ(h.length, 8u);
  auto rst = spdy::parse_rst_stream(payload_of(f));
  ASSERT_TRUE(rst);
  EXPECT_EQ(rst->stream_id, 7u);
  EXPECT_EQ(rst->status, uint32_t(spdy::kCancel));

  auto p = spdy::parse_ping(payload_of(spdy::ping_frame(0xdeadbeef)));
  ASSERT_TRUE(p);
  EXPECT_EQ(*p, 0xdeadbeefu);

  auto g = spdy::parse_goaway(payload_of(spdy::goaway_frame(9, spdy::kGoAwayProtocolError)));
  ASSERT_TRUE(g);
  EXPECT_EQ(g->last_good_stream_id, 9u);
  EXPECT_EQ(g->status, uint32_t(spdy::kGoAwayProtocolError));

  auto w = spdy::parse_window_update(payload_of(spdy::window_update_frame(0, 1 << 20)));
  ASSERT_TRUE(w);
  EXPECT_EQ(w->stream_id, 0u);
  EXPECT_EQ(w->delta, 1u << 20);

  auto s = spdy::parse_settings(payload_of(spdy::settings_frame({{0, spdy::kSettingsInitialWindowSize, 123456}})));
  ASSERT_TRUE(s);
  ASSERT_EQ(s->size(), 1u);
  EXPECT_EQ((*s)[0].id, spdy::kSettingsInitialWindowSize);
  EXPECT_EQ((*s)[0].value, 123456u);

  auto syn = spdy::syn_stream_frame(5, 0, 3, spdy::kFlagFin, "hdrs");
  auto sh = header_of(syn);
  EXPECT_EQ(sh.type, spdy::kSynStream);
  EXPECT_EQ(sh.flags, spdy::kFlagFin);
  auto ss = spdy::parse_syn_stream(payload_of(syn));
  ASSERT_TRUE(ss);
  EXPECT_EQ(ss->stream_id, 5u);
  EXPECT_EQ(ss->priority, 3);
  EXPECT_EQ(ss->header_block, "hdrs");

  // The parsed block points into the frame, which must outlive it (ASan found the temporary).
  std::string reply_frame = spdy::syn_reply_frame(5, 0, "x");
  auto reply = spdy::parse_stream_headers(payload_of(reply_frame));
  ASSERT_TRUE(reply);
  EXPECT_EQ(reply->stream_id, 5u);
  EXPECT_EQ(reply->header_block, "x");
}

TEST(SpdyFrame, DataFrameAndMalformedPayloads) {
  auto f = spdy::data_frame(0x7fffffff, spdy::kFlagFin, "hello");
  ASSERT_EQ(f.size(), 13u);
  auto h = header_of(f);
  EXPECT_FALSE(h.control);
  EXPECT_EQ(h.stream_id, 0x7fffffffu);
  EXPECT_EQ(h.flags, spdy::kFlagFin);
  EXPECT_EQ(h.length, 5u);
  EXPECT_EQ(payload_of(f), "hello");
  EXPECT_FALSE(spdy::parse_rst_stream("1234567"));
  EXPECT_FALSE(spdy::parse_settings(std::string("\0\0\0\2\0\0\0\7", 8)));  // two entries announced, none there
  EXPECT_FALSE(spdy::parse_syn_stream("short"));
  // 0xff bytes: a control frame of version 0x7fff.
  std::string junk(8, '\xff');
  auto j = header_of(junk);
  EXPECT_TRUE(j.control);
  EXPECT_NE(j.version, spdy::kVersion);
}

TEST(SpdyHeaders, DictionaryIsTheSpdy3One) {
  EXPECT_EQ(spdy::kHeaderDictionarySize, 1423u);
  EXPECT_EQ(adler32(1, spdy::kHeaderDictionary, uInt(spdy::kHeaderDictionarySize)), 0xe3c6a7c2u);
}

TEST(SpdyHeaders, BlockRoundTripAndCaseInsensitiveLookup) {
  spdy::HeaderList h = {{"StreamType", "stdout"}, {"port", "8080"}, {"multi", std::string("a\0b", 3)}};
  auto decoded = spdy::decode_header_block(spdy::encode_header_block(h));
  ASSERT_TRUE(decoded);
  EXPECT_EQ((*decoded)[0].first, "streamtype");
  EXPECT_EQ(spdy::find_header(*decoded, "streamType"), "stdout");
  EXPECT_EQ(spdy::find_header(*decoded, "multi"), "a");
  EXPECT_EQ(spdy::find_header(*decoded, "absent"), "");
  EXPECT_FALSE(spdy::decode_header_block(std::string("\0\0\0\1\0\0\0\5ab", 10)));
}

TEST(SpdyHeaders, CompressionContextsStayInStep) {
  spdy::HeaderCompressor c;
  spdy::HeaderDecompressor d;
  for (int i = 0; i < 50; ++i) {
    spdy::HeaderList h = {
        {"streamtype", i % 2 ? "data" : "error"}, {"port", std::to_string(1000 + i)}, {"requestid", std::to_string(i)}};
    auto block = c.compress(h);
    ASSERT_TRUE(block.ok());
    auto back = d.decompress(*block);
    ASSERT_TRUE(back.ok()) << back.status().message();
    EXPECT_EQ(*back, h);
  }
}

// A block compressed by plain zlib with the dictionary (as any SPDY/3 peer does) decompresses.
TEST(SpdyHeaders, DecompressesWhatZlibWithTheDictionaryMakes) {
  std::string raw = spdy::encode_header_block({{"streamtype", "error"}});
  z_stream z{};
  ASSERT_EQ(deflateInit(&z, Z_DEFAULT_COMPRESSION), Z_OK);
  ASSERT_EQ(deflateSetDictionary(&z, spdy::kHeaderDictionary, uInt(spdy::kHeaderDictionarySize)), Z_OK);
  std::string out(512, '\0');
  z.next_in = reinterpret_cast<Bytef*>(raw.data());
  z.avail_in = uInt(raw.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = uInt(out.size());
  ASSERT_EQ(deflate(&z, Z_SYNC_FLUSH), Z_OK);
  out.resize(out.size() - z.avail_out);
  deflateEnd(&z);
  // zlib header announces the SPDY/3 dictionary id.
  EXPECT_EQ(uint8_t(out[2]), 0xe3);
  EXPECT_EQ(uint8_t(out[5]), 0xc2);
  spdy::HeaderDecompressor d;
  auto h = d.decompress(out);
  ASSERT_TRUE(h.ok()) << h.status().message();
  EXPECT_EQ(spdy::find_header(*h, "streamtype"), "error");
}

TEST(SpdyHeaders, GarbageAndBombsAreErrors) {
  spdy::HeaderDecompressor d;
  EXPECT_FALSE(d.decompress("this is not zlib data").ok());
  spdy::HeaderCompressor c;
  spdy::HeaderDecompressor small(1024);
  auto big = c.compress({{"x", std::string(100000, 'a')}});
  ASSERT_TRUE(big.ok());
  EXPECT_LT(big->size(), 1024u);
  EXPECT_FALSE(small.decompress(*big).ok());
}

TEST(TokenStore, SingleUse) {
  TokenStore store(std::chrono::minutes(1), 10);
  PendingRequest req;
  req.kind = SessionKind::attach;
  req.attach.container_id = "c1";
  auto token = store.insert(req);
  ASSERT_TRUE(token.ok());
  EXPECT_EQ(token->size(), 43u);
  EXPECT_EQ(token->find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"),
            std::string::npos);
  auto got = store.consume(*token);
  ASSERT_TRUE(got);
  EXPECT_EQ(got->attach.container_id, "c1");
  EXPECT_FALSE(store.consume(*token));
  EXPECT_FALSE(store.consume("never-issued"));
}

TEST(TokenStore, Expiry) {
  auto now = std::chrono::steady_clock::now();
  TokenStore store(std::chrono::minutes(1), 10, [&] { return now; });
  auto a = store.insert({});
  ASSERT_TRUE(a.ok());
  now += std::chrono::seconds(59);
  auto b = store.insert({});
  ASSERT_TRUE(b.ok());
  now += std::chrono::seconds(2);
  EXPECT_FALSE(store.consume(*a));
  EXPECT_TRUE(store.consume(*b));
}

TEST(TokenStore, CapAndExpiredEntriesFreeRoom) {
  auto now = std::chrono::steady_clock::now();
  TokenStore store(std::chrono::minutes(1), 3, [&] { return now; });
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(store.insert({}).ok());
  auto over = store.insert({});
  ASSERT_FALSE(over.ok());
  EXPECT_EQ(over.status().code(), Code::resource_exhausted);
  now += std::chrono::minutes(2);
  EXPECT_TRUE(store.insert({}).ok());
  EXPECT_EQ(store.size(), 1u);
}

TEST(TokenStore, TokensDiffer) {
  std::set<std::string> seen;
  for (int i = 0; i < 1000; ++i) seen.insert(*random_token());
  EXPECT_EQ(seen.size(), 1000u);
}

TEST(WsChannel, BinaryFraming) {
  ws::Subprotocol v4{"v4.channel.k8s.io", ws::Codec::binary, true, false};
  EXPECT_EQ(ws::encode(ws::Codec::binary, ws::kStdout, "hi"), std::string("\x01hi", 3));
  auto d = ws::decode(v4, std::string("\x00"
                                      "abc",
                                      4));
  EXPECT_EQ(d.kind, ws::Decoded::data);
  EXPECT_EQ(d.channel, ws::kStdin);
  EXPECT_EQ(d.payload, "abc");
  EXPECT_EQ(ws::decode(v4, "").kind, ws::Decoded::invalid);
  // Without v5 a 255 byte is just a channel number.
  auto not_close = ws::decode(v4, std::string("\xff\x00", 2));
  EXPECT_EQ(not_close.kind, ws::Decoded::data);
  EXPECT_EQ(not_close.channel, 255);
}

TEST(WsChannel, V5CloseSignal) {
  auto v5 = ws::negotiate_remotecommand({"v5.channel.k8s.io"});
  ASSERT_TRUE(v5);
  EXPECT_TRUE(v5->close_signal);
  auto d = ws::decode(*v5, std::string("\xff\x00", 2));
  EXPECT_EQ(d.kind, ws::Decoded::close);
  EXPECT_EQ(d.channel, ws::kStdin);
  EXPECT_EQ(ws::decode(*v5, std::string("\xff\x00\x01", 3)).kind, ws::Decoded::invalid);
}

TEST(WsChannel, Base64Framing) {
  ws::Subprotocol b64{"v4.base64.channel.k8s.io", ws::Codec::base64, true, false};
  EXPECT_EQ(ws::encode(ws::Codec::base64, ws::kStdout, "foo\n"), "1Zm9vCg==");
  auto d = ws::decode(b64, "0Zm9vCg==");
  EXPECT_EQ(d.kind, ws::Decoded::data);
  EXPECT_EQ(d.channel, 0);
  EXPECT_EQ(d.payload, "foo\n");
  EXPECT_EQ(ws::decode(b64, "0Zm9vCg=").kind, ws::Decoded::invalid);
  EXPECT_EQ(ws::decode(b64, "x").kind, ws::Decoded::invalid);
  for (int n = 0; n < 40; ++n) {
    std::string s;
    for (int i = 0; i < n; ++i) s.push_back(char(i * 37 + n));
    auto back = ws::base64_decode(ws::base64_encode(s));
    ASSERT_TRUE(back);
    EXPECT_EQ(*back, s);
  }
}

TEST(WsChannel, Negotiation) {
  auto none = ws::negotiate_remotecommand({});
  ASSERT_TRUE(none);
  EXPECT_EQ(none->name, "");
  auto pick = ws::negotiate_remotecommand({"v9.channel.k8s.io", "v4.base64.channel.k8s.io", "v5.channel.k8s.io"});
  ASSERT_TRUE(pick);
  EXPECT_EQ(pick->name, "v4.base64.channel.k8s.io");  // the client's first supported offer
  EXPECT_EQ(pick->codec, ws::Codec::base64);
  EXPECT_FALSE(ws::negotiate_remotecommand({"v9.channel.k8s.io"}));
  EXPECT_FALSE(ws::negotiate_portforward({"v5.channel.k8s.io", "channel.k8s.io"}));
  EXPECT_EQ(ws::negotiate_portforward({"v4.channel.k8s.io"})->name, "v4.channel.k8s.io");
  EXPECT_EQ(ws::split_offers(" a, b ,,c"), (std::vector<std::string>{"a", "b", "c"}));
}

TEST(ExitStatus, Messages) {
  EXPECT_EQ(exit_status_message(true, SessionVerb::exec, 0), R"({"metadata":{},"status":"Success"})");
  EXPECT_EQ(
      exit_status_message(true, SessionVerb::exec, 3),
      R"({"metadata":{},"status":"Failure","message":"command terminated with non-zero exit code: exit status 3",)"
      R"("reason":"NonZeroExitCode","details":{"causes":[{"reason":"ExitCode","message":"3"}]}})");
  EXPECT_EQ(exit_status_message(false, SessionVerb::exec, 0), "");
  EXPECT_EQ(exit_status_message(false, SessionVerb::exec, 3),
            "command terminated with non-zero exit code: exit status 3");
  EXPECT_EQ(exit_status_message(true, SessionVerb::attach, 7), R"({"metadata":{},"status":"Success"})");
  auto failed =
      nlohmann::json::parse(exit_status_message(true, SessionVerb::exec, Result<int>(not_found("no such container"))));
  EXPECT_EQ(failed["reason"], "InternalError");
  EXPECT_EQ(failed["code"], 500);
  EXPECT_EQ(failed["message"], "Internal error occurred: error executing command in container: no such container");
}

TEST(TerminalSize, StreamOfObjects) {
  TerminalSizeDecoder d;
  EXPECT_TRUE(d.feed(R"({"Width":80,"He)").empty());
  auto a = d.feed(R"(ight":24}{"width":100,"height":40}  )");
  ASSERT_EQ(a.size(), 2u);
  EXPECT_EQ(a[0].width, 80);
  EXPECT_EQ(a[0].height, 24);
  EXPECT_EQ(a[1].width, 100);
  EXPECT_EQ(a[1].height, 40);
  EXPECT_TRUE(d.feed(R"({"Width":"x"})").empty());
  auto b = d.feed("\n{\"Width\":1,\"Height\":2,\"s\":\"}{\"}");
  ASSERT_EQ(b.size(), 1u);
  EXPECT_EQ(b[0].height, 2);
}

// A client's resize message is outside input: a size of another type, out of range, or null is
// skipped, and the other member of the message still counts.
TEST(TerminalSize, MembersThatDoNotReadAreSkipped) {
  TerminalSizeDecoder d;
  for (const char* bad : {R"({"Width":-1,"Height":70000})", R"({"width":1.5,"height":null})", R"({"WIDTH":"80"})"})
    EXPECT_TRUE(d.feed(bad).empty()) << bad;
  auto sizes = d.feed(R"({"Width":true,"Height":30})");
  ASSERT_EQ(sizes.size(), 1u);
  EXPECT_EQ(sizes[0].height, 30);
  EXPECT_EQ(sizes[0].width, 0);
}

// A capture that takes a while to be let go of (the window in which a pool thread still holds what
// a blocking call captured) and notes how much work was still counted when it went.
class SlowRelease {
 public:
  SlowRelease(const std::atomic<int>& counted, std::atomic<int>& seen, std::chrono::milliseconds wait)
      : counted_(counted), seen_(seen), wait_(wait) {}
  ~SlowRelease() {
    std::this_thread::sleep_for(wait_);
    seen_ = counted_.load();
  }

 private:
  const std::atomic<int>& counted_;
  std::atomic<int>& seen_;
  std::chrono::milliseconds wait_;
};

class NoBackend : public StreamingBackend {
 public:
  Result<StreamIo> exec(const ExecTarget&) override { return not_found("no exec here"); }
  Result<StreamIo> attach(const AttachTarget&) override { return not_found("no attach here"); }
  Result<UniqueFd> connect_port(const std::string&, int32_t) override { return not_found("no pods here"); }
};

struct BlockingWorkFixture : ::testing::Test {
  void SetUp() override {
    ASSERT_TRUE(workers.start(1, "worker").ok());
    ASSERT_TRUE(connectors.start(1, "connect").ok());
  }
  // Runs `ioc` as the fuzz target's loop does: until no blocking call is counted, after which
  // the caller destroys it.
  void run_until_no_work(boost::asio::io_context& ioc) {
    while (ctx.pending_work > 0) {
      ioc.restart();
      ioc.run_one_for(std::chrono::milliseconds(1));
    }
  }
  NoBackend backend;
  WorkerPool workers, connectors;
  ServerContext ctx{backend, workers, connectors, {}, {}, {}, {}};
  std::atomic<int> at_work_release{-1}, at_then_release{-1};
};

// The owner of an io_context destroys it once nothing is counted. A pool thread that was still
// letting go of the work's captures and of its copy of the strand then (the connect of a
// port-forward in fuzz_http_upgrade) touched the gone io_context: under ASan a heap-use-after-free
// in ~strand_impl, and in any build a capture released while the count said the call was over.
TEST_F(BlockingWorkFixture, ACallIsCountedUntilEverythingItCapturedIsReleased) {
  int got = 0;
  {
    boost::asio::io_context ioc;
    auto slow_work = std::make_shared<SlowRelease>(ctx.pending_work, at_work_release, std::chrono::milliseconds(200));
    auto slow_then = std::make_shared<SlowRelease>(ctx.pending_work, at_then_release, std::chrono::milliseconds(0));
    run_blocking(
        ctx, ctx.connectors, boost::asio::make_strand(ioc), [slow_work = std::move(slow_work)] { return 7; },
        [&got, slow_then = std::move(slow_then)](int v) { got = v; });
    run_until_no_work(ioc);
  }
  connectors.join();
  EXPECT_EQ(got, 7);
  EXPECT_GE(at_work_release.load(), 1) << "the work's captures outlived its count";
  EXPECT_GE(at_then_release.load(), 1) << "the continuation's captures outlived its count";
  EXPECT_EQ(ctx.pending_work.load(), 0);
}

// post_work's captures (the backend's cancel and outcome callbacks of a session) are released on
// the worker before the work stops counting.
TEST_F(BlockingWorkFixture, PostedWorkIsCountedUntilItsCapturesAreReleased) {
  std::atomic<bool> ran{false};
  auto slow = std::make_shared<SlowRelease>(ctx.pending_work, at_work_release, std::chrono::milliseconds(200));
  post_work(ctx, [&ran, slow = std::move(slow)] { ran = true; });
  while (ctx.pending_work > 0) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  EXPECT_TRUE(ran);
  EXPECT_GE(at_work_release.load(), 1) << "the work's captures outlived its count";
  workers.join();
}

// Exec sessions that run until their client leaves: no output, no exit.
class IdleBackend : public StreamingBackend {
 public:
  Result<StreamIo> exec(const ExecTarget&) override {
    int out[2], done[2];
    if (::pipe2(out, O_CLOEXEC) != 0 || ::pipe2(done, O_CLOEXEC) != 0) return errno_status(errno, "pipe");
    auto writers = std::make_shared<std::pair<UniqueFd, UniqueFd>>(UniqueFd(out[1]), UniqueFd(done[1]));
    StreamIo io;
    io.stdout_fd = UniqueFd(out[0]);
    io.done_fd = UniqueFd(done[0]);
    io.outcome = [writers]() -> Result<int> { return 0; };
    io.cancel = [this, writers] { ++cancelled; };
    return io;
  }
  Result<StreamIo> attach(const AttachTarget&) override { return not_found("no attach here"); }
  Result<UniqueFd> connect_port(const std::string&, int32_t) override { return not_found("no ports here"); }
  std::atomic<int> cancelled{0};
};

template <class F>
bool eventually(F cond) {
  for (int i = 0; i < 6000 && !cond(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  return cond();
}

class ReadCaps : public ::testing::Test {
 protected:
  void SetUp() override {
    auto s = StreamingServer::start({}, backend_);
    ASSERT_TRUE(s.ok()) << s.status().message();
    server_ = std::move(*s);
  }
  void TearDown() override {
    EXPECT_TRUE(eventually([&] { return server_->active_sessions() == 0; }));
  }

  UniqueFd dial() {
    UniqueFd fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = htons(uint16_t(std::stoi(server_->address().substr(server_->address().rfind(':') + 1))));
    EXPECT_EQ(::connect(fd.get(), reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
    return fd;
  }
  static void send_all(int fd, std::string_view bytes) {  // errors ignored: the server may close first
    while (!bytes.empty()) {
      ssize_t n = ::send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL);
      if (n <= 0) return;
      bytes.remove_prefix(size_t(n));
    }
  }
  // Everything the server sends until it closes the connection (or a minute passes).
  static std::string read_to_close(int fd) {
    std::string in;
    char buf[65536];
    pollfd p{fd, POLLIN, 0};
    while (::poll(&p, 1, 60000) == 1) {
      ssize_t n = ::recv(fd, buf, sizeof buf, 0);
      if (n <= 0) break;
      in.append(buf, size_t(n));
    }
    return in;
  }
  // An upgraded exec connection (stdout and stderr); the bytes after the response are dropped.
  UniqueFd upgrade(bool websocket) {
    auto url = server_->register_exec({"c", {"true"}, false, false, true, true});
    std::string path = url->substr(url->find('/', 7));
    auto fd = dial();
    send_all(fd.get(), "GET " + path + " HTTP/1.1\r\nHost: x\r\n" +
                           (websocket ? "Upgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 13\r\n"
                                        "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
                                        "Sec-WebSocket-Protocol: v5.channel.k8s.io\r\n\r\n"
                                      : "Upgrade: SPDY/3.1\r\nConnection: Upgrade\r\n"
                                        "X-Stream-Protocol-Version: v4.channel.k8s.io\r\n\r\n"));
    std::string head;
    char c;
    while (head.find("\r\n\r\n") == std::string::npos && ::recv(fd.get(), &c, 1, 0) == 1) head += c;
    EXPECT_EQ(head.rfind("HTTP/1.1 101", 0), 0u) << head;
    return fd;
  }
  // The status of the first GOAWAY among SPDY frames, -1 when there is none.
  static int64_t goaway_status(const std::string& frames) {
    for (size_t at = 0; at + spdy::kFrameHeaderSize <= frames.size();) {
      auto h = spdy::parse_frame_header(reinterpret_cast<const uint8_t*>(frames.data() + at));
      std::string_view payload = std::string_view(frames).substr(at + spdy::kFrameHeaderSize, h.length);
      if (h.control && h.type == spdy::kGoAway)
        if (auto g = spdy::parse_goaway(payload)) return g->status;
      at += spdy::kFrameHeaderSize + h.length;
    }
    return -1;
  }

  IdleBackend backend_;
  std::unique_ptr<StreamingServer> server_;
};

TEST_F(ReadCaps, SpdyControlFrameOverTheCapEndsTheSession) {
  auto fd = upgrade(false);
  // A SYN_STREAM announcing 16 MiB: refused from its header, before its payload comes.
  std::string frame = spdy::syn_stream_frame(1, 0, 0, 0, "");
  frame[5] = frame[6] = frame[7] = '\xff';
  send_all(fd.get(), frame + std::string(4096, 'x'));
  EXPECT_EQ(goaway_status(read_to_close(fd.get())), spdy::kGoAwayProtocolError);
}

TEST_F(ReadCaps, SpdyHeaderBombEndsTheSession) {
  auto fd = upgrade(false);
  spdy::HeaderCompressor c;
  auto block = c.compress({{"streamtype", "error"}, {"x-bomb", std::string(64 << 20, 'a')}});
  ASSERT_TRUE(block.ok());
  ASSERT_LT(block->size(), limits::kMaxSpdyControlFrame);
  send_all(fd.get(), spdy::syn_stream_frame(1, 0, 0, 0, *block));
  EXPECT_EQ(goaway_status(read_to_close(fd.get())), spdy::kGoAwayProtocolError);
}

TEST_F(ReadCaps, WebSocketMessageOverTheCapEndsTheSession) {
  auto fd = upgrade(true);
  ASSERT_TRUE(eventually([&] { return server_->active_sessions() == 1; }));
  // A binary frame announcing 64 MiB (masked, as a client's must be), then some of its payload.
  std::string frame = {'\x82', '\xff', 0, 0, 0, 0, 4, 0, 0, 0, 1, 2, 3, 4};
  send_all(fd.get(), frame + std::string(65536, 'x'));
  std::string in = read_to_close(fd.get());
  EXPECT_NE(in.find(std::string{'\x88', '\x02', '\x03', '\xf1'}), std::string::npos);  // close 1009: too big
  EXPECT_TRUE(eventually([&] { return backend_.cancelled == 1; }));
}

TEST_F(ReadCaps, UpgradeRequestOverTheCapIsRefused) {
  auto fd = dial();
  std::string request = "GET /exec/x HTTP/1.1\r\nHost: x\r\n";
  while (request.size() < 4 * limits::kMaxRequestHeader) request += "X-Filler: " + std::string(1000, 'a') + "\r\n";
  send_all(fd.get(), request);
  EXPECT_EQ(read_to_close(fd.get()).rfind("HTTP/1.1 431", 0), 0u);
  auto next = dial();
  send_all(next.get(), "GET /exec/nope HTTP/1.1\r\nHost: x\r\n\r\n");
  EXPECT_EQ(read_to_close(next.get()).rfind("HTTP/1.1 404", 0), 0u);
}

TEST_F(ReadCaps, ConnectionsWaitingForTheirRequestAreCapped) {
  std::vector<UniqueFd> idle;
  for (int i = 0; i < limits::kMaxPendingRequests + 50; ++i) idle.push_back(dial());
  auto closed = [&] {
    int n = 0;
    for (auto& fd : idle) {
      pollfd p{fd.get(), POLLIN, 0};
      char c;
      if (::poll(&p, 1, 0) == 1 && ::recv(fd.get(), &c, 1, MSG_PEEK | MSG_DONTWAIT) <= 0) ++n;
    }
    return n;
  };
  EXPECT_TRUE(eventually([&] { return closed() >= 50; }));
  EXPECT_EQ(closed(), 50);  // the others still wait for their request
  idle.clear();
  EXPECT_TRUE(eventually([&] {
    auto fd = dial();
    send_all(fd.get(), "GET /exec/nope HTTP/1.1\r\nHost: x\r\n\r\n");
    return read_to_close(fd.get()).rfind("HTTP/1.1 404", 0) == 0;
  }));
}

}  // namespace
