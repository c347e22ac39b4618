// The berth-pull pipe protocol: frames come whole or not at all, and every message decodes back
// to what was encoded; a helper's bad answer is an error naming the field, never a throw.
#include <gtest/gtest.h>

#include "../../image/pull_worker_protocol.h"

namespace berth {
namespace {

namespace proto = pull_protocol;

TEST(PullProtocol, FramesArriveWholeWhateverTheCuts) {
  std::string stream = proto::frame("first") + proto::frame("") + proto::frame(std::string(70000, 'x'));
  std::string buffer;
  std::vector<std::string> got;
  for (size_t off = 0; off < stream.size(); off += 7) {
    buffer.append(stream, off, 7);
    for (;;) {
      auto f = proto::take_frame(buffer);
      ASSERT_TRUE(f.ok()) << f.status().message();
      if (!*f) break;
      got.push_back(**f);
    }
  }
  ASSERT_EQ(got.size(), 3u);
  EXPECT_EQ(got[0], "first");
  EXPECT_EQ(got[1], "");
  EXPECT_EQ(got[2].size(), 70000u);
  EXPECT_TRUE(buffer.empty());
}

TEST(PullProtocol, AnOversizedFrameIsRefusedBeforeItIsRead) {
  std::string buffer("\x00\x00\x00\x04", 4);  // 64 MiB announced
  auto f = proto::take_frame(buffer);
  ASSERT_FALSE(f.ok());
  EXPECT_NE(f.status().message().find("a frame of 67108864 bytes; at most"), std::string::npos) << f.status().message();
}

TEST(PullProtocol, RequestsHelloAndRepliesRoundTrip) {
  proto::Request blob{.op = proto::Request::Op::blob,
                      .digest = "sha256:" + std::string(64, 'a'),
                      .size = 4096,
                      .offset = 1024,
                      .what = "layer x"};
  auto r = proto::decode_request(proto::encode_request(blob));
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->op, proto::Request::Op::blob);
  EXPECT_EQ(r->digest, blob.digest);
  EXPECT_EQ(r->size, 4096);
  EXPECT_EQ(r->offset, 1024u);  // a download continued
  EXPECT_EQ(r->what, "layer x");

  proto::Hello hello{.store = "/var/lib/berth/images"};
  hello.registry.hosts["registry.example"] = {
      .mirrors = {"http://127.0.0.1:5000"}, .insecure = true, .ca_file = "/ca.pem"};
  hello.registry.idle_timeout_seconds = 7;
  auto h = proto::decode_hello(proto::encode_hello(hello));
  ASSERT_TRUE(h.ok()) << h.status().message();
  EXPECT_EQ(h->store, hello.store);
  EXPECT_EQ(h->registry.hosts.at("registry.example").mirrors, hello.registry.hosts.at("registry.example").mirrors);
  EXPECT_TRUE(h->registry.hosts.at("registry.example").insecure);
  EXPECT_EQ(h->registry.idle_timeout_seconds, 7);

  // Each pull a helper serves begins with its reference and credentials, and ends.
  proto::Request begin{
      .op = proto::Request::Op::begin,
      .reference = "registry.example/app:v1",
      .credentials = {.username = "u", .password = "p\"w", .identity_token = "", .registry_token = "t"}};
  auto b = proto::decode_request(proto::encode_request(begin));
  ASSERT_TRUE(b.ok()) << b.status().message();
  EXPECT_EQ(b->op, proto::Request::Op::begin);
  EXPECT_EQ(b->reference, "registry.example/app:v1");
  EXPECT_EQ(b->credentials.username, "u");
  EXPECT_EQ(b->credentials.password, "p\"w");
  EXPECT_EQ(b->credentials.registry_token, "t");
  auto e = proto::decode_request(proto::encode_request({.op = proto::Request::Op::end}));
  ASSERT_TRUE(e.ok()) << e.status().message();
  EXPECT_EQ(e->op, proto::Request::Op::end);

  proto::Reply failed{.status = Status(Code::unavailable, "registry 127.0.0.1: 503"), .registry_bytes = 12};
  auto rep = proto::decode_reply(proto::encode_reply(failed));
  ASSERT_TRUE(rep.ok()) << rep.status().message();
  EXPECT_EQ(rep->status.code(), Code::unavailable);
  EXPECT_EQ(rep->status.message(), "registry 127.0.0.1: 503");
  EXPECT_EQ(rep->registry_bytes, 12u);
}

TEST(PullProtocol, ABadReplyNamesTheField) {
  struct Case {
    const char* payload;
    const char* why;
  } cases[] = {
      {"[]", "berth-pull reply: not a JSON object"},
      {R"({"message":"x"})", "berth-pull reply: field 'code': missing"},
      {R"({"code":99})", "berth-pull reply: field 'code': unknown status code 99"},
      {R"({"code":0,"registry_bytes":-1})", "berth-pull reply: field 'registry_bytes': integer -1 out of range"},
  };
  for (const auto& c : cases) {
    auto r = proto::decode_reply(c.payload);
    ASSERT_FALSE(r.ok()) << c.payload;
    EXPECT_EQ(r.status().code(), Code::internal);
    EXPECT_EQ(r.status().message(), c.why);
  }
  // A prefetched blob is held in the fetcher's memory: its size is known and small.
  auto prefetch = proto::decode_request(
      proto::encode_request({.op = proto::Request::Op::prefetch, .digest = "sha256:ab", .size = 1 << 20}));
  ASSERT_TRUE(prefetch.ok()) << prefetch.status().message();
  EXPECT_EQ(prefetch->op, proto::Request::Op::prefetch);
  EXPECT_EQ(prefetch->digest, "sha256:ab");
  EXPECT_EQ(prefetch->size, 1 << 20);
  for (int64_t size : {int64_t{-1}, int64_t{(1 << 20) + 1}}) {
    auto big = proto::decode_request(
        proto::encode_request({.op = proto::Request::Op::prefetch, .digest = "sha256:ab", .size = size}));
    ASSERT_FALSE(big.ok()) << size;
    EXPECT_EQ(big.status().message(),
              "request: field 'size': a prefetched blob has a known size of at most 1048576 bytes");
  }
  auto unknown = proto::decode_request(R"({"op":"mount","what":"x"})");
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.status().message(), "request: field 'op': unknown operation 'mount'");
}

}  // namespace
}  // namespace berth
