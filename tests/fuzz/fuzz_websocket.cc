// Fuzz target: what a WebSocket client's messages go through (streaming/ws_channel.h): the channel
// byte, the base64 variants and the v5 close signal under every subprotocol, the
// Sec-WebSocket-Protocol offer list, and the resize stream of a tty session (terminal_size.h) in
// arbitrary pieces.
#include "fuzz_support.h"
#include "terminal_size.h"
#include "ws_channel.h"

namespace ws = berth::streaming::ws;
using berth::fuzz::Reader;

namespace {

void message(std::string_view bytes) {
  for (const char* name : {"", "channel.k8s.io", "base64.channel.k8s.io", "v4.channel.k8s.io",
                           "v4.base64.channel.k8s.io", "v5.channel.k8s.io"}) {
    // No offer at all is the binary protocol kubelet speaks; an empty offer is no offer.
    auto proto = *name ? ws::negotiate_remotecommand({name}) : ws::negotiate_remotecommand({});
    FUZZ_CHECK(proto);
    auto d = ws::decode(*proto, bytes);
    if (d.kind == ws::Decoded::close) {
      FUZZ_CHECK(proto->close_signal && bytes.size() == 2);
      continue;
    }
    if (d.kind != ws::Decoded::data) continue;
    // berth's encoder gives back a message that decodes to the same channel and payload; a base64
    // channel is one digit, so only channels 0-9 can be written back.
    if (proto->codec == ws::Codec::base64) FUZZ_CHECK(d.channel <= 9);
    if (proto->close_signal && d.channel == ws::kCloseSignal) continue;  // that byte means "close" there
    auto again = ws::decode(*proto, ws::encode(proto->codec, d.channel, d.payload));
    FUZZ_CHECK(again.kind == ws::Decoded::data && again.channel == d.channel && again.payload == d.payload);
  }
}

void base64(std::string_view text) {
  auto raw = ws::base64_decode(text);
  if (raw) {
    FUZZ_CHECK(raw->size() <= text.size() / 4 * 3);
    auto back = ws::base64_decode(ws::base64_encode(*raw));
    FUZZ_CHECK(back && *back == *raw);
  }
  auto enc = ws::base64_encode(text);
  FUZZ_CHECK(enc.size() % 4 == 0);
  auto dec = ws::base64_decode(enc);
  FUZZ_CHECK(dec && *dec == text);
}

void offers(std::string_view header) {
  auto list = ws::split_offers(header);
  for (const auto& o : list) {
    FUZZ_CHECK(!o.empty() && o.find(',') == std::string::npos);
    FUZZ_CHECK(o.front() != ' ' && o.front() != '\t' && o.back() != ' ' && o.back() != '\t');
  }
  auto command = ws::negotiate_remotecommand(list);
  auto forward = ws::negotiate_portforward(list);
  if (forward) FUZZ_CHECK(!forward->close_signal);
  if (list.empty()) FUZZ_CHECK(command && forward && command->name.empty());
}

void resizes(Reader& in) {
  berth::streaming::TerminalSizeDecoder whole, pieces;
  std::string_view all = in.rest();
  auto a = whole.feed(all);
  std::vector<berth::streaming::TerminalSize> b;
  // The same bytes cut at points taken from the bytes themselves.
  size_t at = 0;
  while (at < all.size()) {
    size_t n = 1 + uint8_t(all[at]) % 17;
    if (n > all.size() - at) n = all.size() - at;
    auto got = pieces.feed(all.substr(at, n));
    b.insert(b.end(), got.begin(), got.end());
    at += n;
  }
  FUZZ_CHECK(a.size() == b.size());
  for (size_t i = 0; i < a.size(); ++i) FUZZ_CHECK(a[i].width == b[i].width && a[i].height == b[i].height);
}

}  // namespace

BERTH_FUZZ_TARGET(websocket) {
  Reader in(data, size);
  switch (in.byte() % 4) {
    case 0: {
      std::string m(in.rest());  // a copy, so ASan sees the message's end
      message(m);
      break;
    }
    case 1: {
      std::string t(in.rest());
      base64(t);
      break;
    }
    case 2: {
      std::string h(in.rest());
      offers(h);
      break;
    }
    default: resizes(in);
  }
  return 0;
}
