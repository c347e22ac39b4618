// Base64 (and base64url) text to bytes with nettle, for what the image module reads in that form:
// auth file pairs, JWT payloads, cosign signatures and PEM keys.
#pragma once

#include <optional>
#include <string>

namespace berth {

// nullopt when `text` is not valid base64 (or base64url, with `url`); padding is optional.
std::optional<std::string> decode_base64_bytes(const std::string& text, bool url = false);

}  // namespace berth
