// NRI's wire (nri/): ttrpc frames and envelopes and the connection multiplexer, against bytes laid
// out by hand from the protocol's facts (big-endian headers, field numbers), cut at every offset.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "berth/nri_mux.h"
#include "berth/ttrpc_wire.h"

namespace berth {
namespace {

std::string bytes(std::initializer_list<int> b) {
  std::string out;
  for (int c : b) out.push_back(static_cast<char>(c));
  return out;
}

TEST(TtrpcWire, AFrameHasItsHeaderBigEndianAndComesOutWholeHoweverItIsCut) {
  auto f = ttrpc::encode_frame(0x01020305, ttrpc::MessageType::request, 0, "abc");
  ASSERT_TRUE(f.ok());
  EXPECT_EQ(*f, bytes({0, 0, 0, 3, 1, 2, 3, 5, 1, 0}) + "abc");
  const std::string two = *f + *ttrpc::encode_frame(7, ttrpc::MessageType::response, 0, "");
  for (size_t cut = 0; cut <= two.size(); ++cut) {
    ttrpc::FrameReader r;
    r.feed(two.substr(0, cut));
    std::vector<ttrpc::Frame> got;
    while (auto x = r.next()) got.push_back(*x);
    r.feed(two.substr(cut));
    while (auto x = r.next()) got.push_back(*x);
    ASSERT_EQ(got.size(), 2u) << cut;
    EXPECT_EQ(got[0].stream_id, 0x01020305u);
    EXPECT_EQ(got[0].type, 1);
    EXPECT_EQ(got[0].data, "abc");
    EXPECT_EQ(got[1].stream_id, 7u);
    EXPECT_EQ(got[1].type, 2);
    EXPECT_EQ(got[1].data, "");
  }
}

TEST(TtrpcWire, AFrameOverFourMiBIsDroppedAsItArrivesAndNamedOnItsStream) {
  std::string big(ttrpc::kMaxFrameData + 1, 'x');
  auto refused = ttrpc::encode_frame(1, ttrpc::MessageType::request, 0, big);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), Code::resource_exhausted);
  // A peer's oversized frame: its header, then its data in pieces; then a frame that fits.
  ttrpc::FrameReader r;
  r.feed(bytes({0, 0x40, 0, 1, 0, 0, 0, 9, 1, 0}));
  EXPECT_FALSE(r.next().has_value());
  r.feed(std::string(1 << 20, 'y'));
  EXPECT_FALSE(r.next().has_value());
  r.feed(std::string((3 << 20) + 1, 'y') + *ttrpc::encode_frame(11, ttrpc::MessageType::request, 0, "ok"));
  auto dropped = r.next();
  ASSERT_TRUE(dropped.has_value());
  EXPECT_TRUE(dropped->oversized);
  EXPECT_EQ(dropped->stream_id, 9u);
  EXPECT_EQ(dropped->length, ttrpc::kMaxFrameData + 1);
  EXPECT_TRUE(dropped->data.empty());
  auto call = ttrpc::decode_request(*dropped);
  EXPECT_EQ(call.status().code(), Code::resource_exhausted);
  auto next = r.next();
  ASSERT_TRUE(next.has_value());
  EXPECT_EQ(next->stream_id, 11u);
  EXPECT_EQ(next->data, "ok");
}

TEST(TtrpcWire, RequestsAndResponsesCarryTtrpcsFieldNumbers) {
  // Request{service = 1, method = 2, payload = 3, timeout_nano = 4}, as a Go plugin encodes it.
  const std::string req = bytes({0x0a, 3}) + "svc" + bytes({0x12, 1}) + "m" + bytes({0x1a, 2}) + "pl" +
                          bytes({0x20, 0x80, 0x94, 0xeb, 0xdc, 0x03});
  ttrpc::Frame f{.stream_id = 3, .type = 1, .data = req};
  auto call = ttrpc::decode_request(f);
  ASSERT_TRUE(call.ok()) << call.status().message();
  EXPECT_EQ(call->service, "svc");
  EXPECT_EQ(call->method, "m");
  EXPECT_EQ(call->payload, "pl");
  EXPECT_EQ(call->timeout_ns, 1000000000);
  auto encoded = ttrpc::encode_request(*call);
  ASSERT_TRUE(encoded.ok());
  EXPECT_EQ(encoded->substr(ttrpc::kFrameHeaderBytes), req);

  // Response{status = 1 {code = 1, message = 2}, payload = 2}: success carries an empty status.
  auto ok = ttrpc::encode_response({.stream_id = 3, .payload = "out"});
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ(ok->substr(ttrpc::kFrameHeaderBytes), bytes({0x0a, 0}) + bytes({0x12, 3}) + "out");
  auto failed = ttrpc::encode_response({.stream_id = 5, .status = Status(Code::deadline_exceeded, "late")});
  ASSERT_TRUE(failed.ok());
  EXPECT_EQ(failed->substr(ttrpc::kFrameHeaderBytes), bytes({0x0a, 8, 0x08, 4, 0x12, 4}) + "late");
  ttrpc::FrameReader r;
  r.feed(*failed);
  auto back = ttrpc::decode_response(*r.next());
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->status.code(), Code::deadline_exceeded);
  EXPECT_EQ(back->status.message(), "late");
  // No status at all is success too; an unknown code is an internal error; a request is no answer.
  auto bare = ttrpc::decode_response({.stream_id = 1, .type = 2, .data = bytes({0x12, 1}) + "p"});
  ASSERT_TRUE(bare.ok());
  EXPECT_TRUE(bare->status.ok());
  EXPECT_EQ(bare->payload, "p");
  auto odd = ttrpc::decode_response({.stream_id = 1, .type = 2, .data = bytes({0x0a, 2, 0x08, 10})});
  ASSERT_TRUE(odd.ok());
  EXPECT_EQ(odd->status.code(), Code::internal);
  EXPECT_EQ(ttrpc::decode_response({.stream_id = 1, .type = 1}).status().code(), Code::invalid_argument);
  EXPECT_EQ(ttrpc::decode_request({.stream_id = 1, .type = 1, .data = "\xff"}).status().code(), Code::invalid_argument);
  for (Code c : {Code::ok, Code::invalid_argument, Code::not_found, Code::unimplemented, Code::cancelled})
    EXPECT_EQ(ttrpc::code_of_grpc(ttrpc::grpc_code(c)), c);
  EXPECT_EQ(ttrpc::grpc_code(Code::unimplemented), 12);
}

TEST(NriMux, FramesNameTheirConnectionAndComeApartHoweverTheStreamIsCut) {
  EXPECT_EQ(nri_mux::encode(2, "hi"), bytes({0, 0, 0, 2, 0, 0, 0, 2}) + "hi");
  // A message larger than one frame is sent in frames of kSendPayload.
  const std::string big(nri_mux::kSendPayload * 2 + 5, 'b');
  const std::string stream = nri_mux::encode(1, big) + nri_mux::encode(2, "x") + nri_mux::encode(0, "dropped");
  for (size_t step : {size_t{1}, size_t{7}, size_t{4096}, stream.size()}) {
    nri_mux::Demux d;
    std::map<uint32_t, std::string> got;
    std::vector<size_t> sizes;
    for (size_t off = 0; off < stream.size(); off += step) {
      d.feed(stream.substr(off, step));
      for (;;) {
        auto p = d.next();
        ASSERT_TRUE(p.ok());
        if (!*p) break;
        got[(*p)->conn] += (*p)->payload;
        if ((*p)->conn == 1) sizes.push_back((*p)->payload.size());
      }
    }
    EXPECT_EQ(got[1], big);
    EXPECT_EQ(got[2], "x");
    EXPECT_EQ(got[0], "dropped") << "conn 0 is the caller's to drop";
    EXPECT_EQ(sizes, (std::vector<size_t>{4096, 4096, 5}));
  }
}

TEST(NriMux, AnOversizedFrameBreaksTheConnectionForGood) {
  nri_mux::Demux d;
  d.feed(bytes({0, 0, 0, 1, 0, 0x40, 0, 0x0b}));  // 10 + 4 MiB + 1
  auto p = d.next();
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.status().message(),
            "nri: a multiplexed frame of 4194315 bytes for connection 1 is over the 4194314 one holds");
  d.feed(nri_mux::encode(1, "later"));
  EXPECT_FALSE(d.next().ok());
}

}  // namespace
}  // namespace berth
