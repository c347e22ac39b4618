// Client-side SPDY/3.1 frames and header compression for the streaming tests.
#include "spdy_codec.h"

#include <zlib.h>

namespace berth::test::spdyc {

const std::string& dictionary() {
  static const std::string dict = [] {
    // clang-format off
    const char* words[] = {
        "options", "head", "post", "put", "delete", "trace", "accept", "accept-charset", "accept-encoding",
        "accept-language", "accept-ranges", "age", "allow", "authorization", "cache-control", "connection",
        "content-base", "content-encoding", "content-language", "content-length", "content-location", "content-md5",
        "content-range", "content-type", "date", "etag", "expect", "expires", "from", "host", "if-match",
        "if-modified-since", "if-none-match", "if-range", "if-unmodified-since", "last-modified", "location",
        "max-forwards", "pragma", "proxy-authenticate", "proxy-authorization", "range", "referer", "retry-after",
        "server", "te", "trailer", "transfer-encoding", "upgrade", "user-agent", "vary", "via", "warning",
        "www-authenticate", "method", "get", "status", "200 OK", "version", "HTTP/1.1", "url", "public",
        "set-cookie", "keep-alive", "origin"};
    // clang-format on
    std::string d;
    for (const char* w : words) d += u32(uint32_t(std::string_view(w).size())) + w;
    d += "100101201202205206300302303304305306307402405406407408409410411412413414415416417502504505";
    d += "203 Non-Authoritative Information204 No Content301 Moved Permanently400 Bad Request401 Unauthorized"
         "403 Forbidden404 Not Found500 Internal Server Error501 Not Implemented503 Service Unavailable";
    d += "Jan Feb Mar Apr May Jun Jul Aug Sept Oct Nov Dec 00:00:00 Mon, Tue, Wed, Thu, Fri, Sat, Sun, GMT";
    d += "chunked,text/html,image/png,image/jpg,image/gif,application/xml,application/xhtml+xml,text/plain,"
         "text/javascript,publicprivatemax-age=gzip,deflate,sdchcharset=utf-8charset=iso-8859-1,utf-,*,enq=0.";
    return d;
  }();
  return dict;
}

std::string u32(uint32_t v) {
  std::string s(4, '\0');
  for (int i = 0; i < 4; ++i) s[i] = char(v >> (24 - 8 * i));
  return s;
}

uint32_t be32(std::string_view s, size_t at) {
  uint32_t v = 0;
  for (int i = 0; i < 4; ++i) v = (v << 8) | uint8_t(s[at + i]);
  return v;
}

std::optional<Frame> take_frame(std::string& buf) {
  if (buf.size() < 8) return std::nullopt;
  uint32_t len = be32(buf, 4) & 0xffffff;
  if (buf.size() < 8 + len) return std::nullopt;
  Frame f;
  f.control = uint8_t(buf[0]) & 0x80;
  f.flags = uint8_t(buf[4]);
  if (f.control)
    f.type = uint16_t((uint8_t(buf[2]) << 8) | uint8_t(buf[3]));
  else
    f.stream = be32(buf, 0) & 0x7fffffff;
  f.payload = buf.substr(8, len);
  if (f.control && f.payload.size() >= 4 && f.type != SETTINGS && f.type != PING)
    f.stream = be32(f.payload, 0) & 0x7fffffff;
  buf.erase(0, 8 + len);
  return f;
}

std::string control(uint16_t type, uint8_t flags, const std::string& payload) {
  std::string f;
  f += char(0x80);
  f += char(3);
  f += char(type >> 8);
  f += char(type & 0xff);
  f += u32((uint32_t(flags) << 24) | uint32_t(payload.size()));
  return f + payload;
}

std::string data(uint32_t stream, uint8_t flags, std::string_view bytes) {
  return u32(stream & 0x7fffffff) + u32((uint32_t(flags) << 24) | uint32_t(bytes.size())) + std::string(bytes);
}

Deflater::Deflater() : z_(std::make_unique<z_stream_s>()) {
  *z_ = {};
  deflateInit(z_.get(), 6);
  deflateSetDictionary(z_.get(), reinterpret_cast<const Bytef*>(dictionary().data()), uInt(dictionary().size()));
}
Deflater::~Deflater() { deflateEnd(z_.get()); }

std::string Deflater::block(const Headers& headers) {
  std::string raw = u32(uint32_t(headers.size()));
  for (const auto& [k, v] : headers) raw += u32(uint32_t(k.size())) + k + u32(uint32_t(v.size())) + v;
  std::string out(raw.size() + 256, '\0');
  z_->next_in = reinterpret_cast<Bytef*>(raw.data());
  z_->avail_in = uInt(raw.size());
  z_->next_out = reinterpret_cast<Bytef*>(out.data());
  z_->avail_out = uInt(out.size());
  deflate(z_.get(), Z_SYNC_FLUSH);
  out.resize(out.size() - z_->avail_out);
  return out;
}

Inflater::Inflater() : z_(std::make_unique<z_stream_s>()) {
  *z_ = {};
  inflateInit(z_.get());
}
Inflater::~Inflater() { inflateEnd(z_.get()); }

std::optional<Headers> Inflater::block(std::string_view compressed) {
  std::string raw;
  z_->next_in = reinterpret_cast<Bytef*>(const_cast<char*>(compressed.data()));
  z_->avail_in = uInt(compressed.size());
  for (;;) {
    char buf[8192];
    z_->next_out = reinterpret_cast<Bytef*>(buf);
    z_->avail_out = sizeof(buf);
    int rc = inflate(z_.get(), Z_SYNC_FLUSH);
    if (rc == Z_NEED_DICT) {
      if (inflateSetDictionary(z_.get(), reinterpret_cast<const Bytef*>(dictionary().data()),
                               uInt(dictionary().size())) != Z_OK)
        return std::nullopt;
      continue;
    }
    raw.append(buf, sizeof(buf) - z_->avail_out);
    if (rc != Z_OK && rc != Z_BUF_ERROR) return std::nullopt;
    if (z_->avail_in == 0 && z_->avail_out != 0) break;
  }
  if (raw.size() < 4) return std::nullopt;
  Headers h;
  size_t at = 4;
  uint32_t n = be32(raw, 0);
  for (uint32_t i = 0; i < n; ++i) {
    if (at + 4 > raw.size()) return std::nullopt;
    uint32_t kl = be32(raw, at);
    at += 4;
    if (at + kl + 4 > raw.size()) return std::nullopt;
    std::string k = raw.substr(at, kl);
    at += kl;
    uint32_t vl = be32(raw, at);
    at += 4;
    if (at + vl > raw.size()) return std::nullopt;
    h.emplace_back(k, raw.substr(at, vl));
    at += vl;
  }
  return h;
}

}  // namespace berth::test::spdyc
