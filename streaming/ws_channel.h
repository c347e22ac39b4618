// The channel framing of Kubernetes WebSocket subprotocols: every message starts with the channel
// number (one byte; an ASCII digit with base64 payload in the base64.* variants), and v5 adds a
// close signal, channel 255 followed by the channel being closed. Also subprotocol negotiation.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace berth::streaming::ws {

constexpr uint8_t kStdin = 0, kStdout = 1, kStderr = 2, kError = 3, kResize = 4, kCloseSignal = 255;

enum class Codec { binary, base64 };

struct Subprotocol {
  std::string name;  // "" when the client asked for none
  Codec codec = Codec::binary;
  bool status_json = false;   // v4+: the error channel carries a Kubernetes Status object
  bool close_signal = false;  // v5: the client may close one channel
};

// The first of the client's offers (its order of preference) that the server supports; "" when
// the client offered none (binary, as kubelet does); nothing when none is supported.
std::optional<Subprotocol> negotiate_remotecommand(const std::vector<std::string>& offers);
std::optional<Subprotocol> negotiate_portforward(const std::vector<std::string>& offers);
// Values of a Sec-WebSocket-Protocol header, split at commas and trimmed.
std::vector<std::string> split_offers(std::string_view header);

// A whole message for `channel`.
std::string encode(Codec codec, uint8_t channel, std::string_view data);

struct Decoded {
  enum Kind { data, close, invalid } kind = invalid;
  uint8_t channel = 0;
  std::string payload;
};
// One message from the client. Empty messages and bad base64 are `invalid` (dropped by callers).
Decoded decode(const Subprotocol& proto, std::string_view message);

std::string base64_encode(std::string_view data);
std::optional<std::string> base64_decode(std::string_view text);  // padded standard alphabet

}  // namespace berth::streaming::ws
