// Kubernetes WebSocket channel framing and subprotocol negotiation (kubelet accepts "",
// channel.k8s.io, base64.channel.k8s.io, v4.channel.k8s.io, v4.base64.channel.k8s.io for remote
// commands, and v5.channel.k8s.io in newer releases; port forwarding uses "", v4.channel.k8s.io,
// v4.base64.channel.k8s.io).
#include "ws_channel.h"

#include <array>

namespace berth::streaming::ws {

namespace {

const char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

std::optional<Subprotocol> lookup(std::string_view name, bool remotecommand) {
  if (name.empty() || name == "channel.k8s.io") return Subprotocol{std::string(name), Codec::binary, false, false};
  if (name == "base64.channel.k8s.io") return Subprotocol{std::string(name), Codec::base64, false, false};
  if (name == "v4.channel.k8s.io") return Subprotocol{std::string(name), Codec::binary, true, false};
  if (name == "v4.base64.channel.k8s.io") return Subprotocol{std::string(name), Codec::base64, true, false};
  if (remotecommand && name == "v5.channel.k8s.io") return Subprotocol{std::string(name), Codec::binary, true, true};
  return std::nullopt;
}

std::optional<Subprotocol> negotiate(const std::vector<std::string>& offers, bool remotecommand) {
  if (offers.empty()) return lookup("", remotecommand);
  for (const auto& offer : offers) {
    if (offer.empty()) continue;
    if (!remotecommand && (offer == "channel.k8s.io" || offer == "base64.channel.k8s.io")) continue;
    if (auto p = lookup(offer, remotecommand)) return p;
  }
  return std::nullopt;
}

}  // namespace

std::optional<Subprotocol> negotiate_remotecommand(const std::vector<std::string>& offers) {
  return negotiate(offers, true);
}

std::optional<Subprotocol> negotiate_portforward(const std::vector<std::string>& offers) {
  return negotiate(offers, false);
}

std::vector<std::string> split_offers(std::string_view header) {
  std::vector<std::string> out;
  while (!header.empty()) {
    size_t comma = header.find(',');
    std::string_view item = header.substr(0, comma);
    while (!item.empty() && (item.front() == ' ' || item.front() == '\t')) item.remove_prefix(1);
    while (!item.empty() && (item.back() == ' ' || item.back() == '\t')) item.remove_suffix(1);
    if (!item.empty()) out.emplace_back(item);
    if (comma == std::string_view::npos) break;
    header.remove_prefix(comma + 1);
  }
  return out;
}

std::string encode(Codec codec, uint8_t channel, std::string_view data) {
  std::string out;
  if (codec == Codec::binary) {
    out.reserve(1 + data.size());
    out.push_back(char(channel));
    out.append(data);
  } else {
    out.push_back(char('0' + channel));
    out += base64_encode(data);
  }
  return out;
}

Decoded decode(const Subprotocol& proto, std::string_view message) {
  Decoded d;
  if (message.empty()) return d;
  uint8_t first = uint8_t(message[0]);
  if (proto.close_signal && proto.codec == Codec::binary && first == kCloseSignal) {
    if (message.size() != 2) return d;
    d.kind = Decoded::close;
    d.channel = uint8_t(message[1]);
    return d;
  }
  if (proto.codec == Codec::binary) {
    d.channel = first;
    d.payload.assign(message.substr(1));
  } else {
    if (first < '0' || first > '9') return d;
    d.channel = uint8_t(first - '0');
    auto raw = base64_decode(message.substr(1));
    if (!raw) return d;
    d.payload = std::move(*raw);
  }
  d.kind = Decoded::data;
  return d;
}

std::string base64_encode(std::string_view data) {
  std::string out;
  out.reserve((data.size() + 2) / 3 * 4);
  size_t i = 0;
  for (; i + 3 <= data.size(); i += 3) {
    uint32_t v = (uint8_t(data[i]) << 16) | (uint8_t(data[i + 1]) << 8) | uint8_t(data[i + 2]);
    out += kAlphabet[v >> 18];
    out += kAlphabet[(v >> 12) & 63];
    out += kAlphabet[(v >> 6) & 63];
    out += kAlphabet[v & 63];
  }
  size_t rest = data.size() - i;
  if (rest > 0) {
    uint32_t v = uint8_t(data[i]) << 16;
    if (rest == 2) v |= uint8_t(data[i + 1]) << 8;
    out += kAlphabet[v >> 18];
    out += kAlphabet[(v >> 12) & 63];
    out += rest == 2 ? kAlphabet[(v >> 6) & 63] : '=';
    out += '=';
  }
  return out;
}

std::optional<std::string> base64_decode(std::string_view text) {
  static const auto table = [] {
    std::array<int8_t, 256> t{};
    t.fill(-1);
    for (int i = 0; i < 64; ++i) t[uint8_t(kAlphabet[i])] = int8_t(i);
    return t;
  }();
  if (text.size() % 4 != 0) return std::nullopt;
  std::string out;
  out.reserve(text.size() / 4 * 3);
  for (size_t i = 0; i < text.size(); i += 4) {
    int v[4];
    int pad = 0;
    for (int k = 0; k < 4; ++k) {
      char c = text[i + k];
      if (c == '=' && i + 4 == text.size() && k >= 2) {
        v[k] = 0;
        ++pad;
        continue;
      }
      if (pad > 0) return std::nullopt;
      v[k] = table[uint8_t(c)];
      if (v[k] < 0) return std::nullopt;
    }
    uint32_t n = (uint32_t(v[0]) << 18) | (uint32_t(v[1]) << 12) | (uint32_t(v[2]) << 6) | uint32_t(v[3]);
    out += char(n >> 16);
    if (pad < 2) out += char((n >> 8) & 0xff);
    if (pad < 1) out += char(n & 0xff);
  }
  return out;
}

}  // namespace berth::streaming::ws
