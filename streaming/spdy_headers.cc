// SPDY/3 name/value header blocks and their zlib (de)compression with the SPDY/3 dictionary;
// the dictionary bytes live in spdy_dictionary.cc.
#include "spdy_headers.h"

#include "spdy_frame.h"

#include <zlib.h>

#include <algorithm>
#include <cctype>

namespace berth::spdy {

namespace {

bool get32(std::string_view s, size_t& at, uint32_t& v) {
  if (s.size() - at < 4 || at > s.size()) return false;
  const auto* p = reinterpret_cast<const unsigned char*>(s.data()) + at;
  v = (uint32_t(p[0]) << 24) | (uint32_t(p[1]) << 16) | (uint32_t(p[2]) << 8) | uint32_t(p[3]);
  at += 4;
  return true;
}

std::string lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return char(std::tolower(c)); });
  return out;
}

}  // namespace

std::string encode_header_block(const HeaderList& headers) {
  std::string out;
  put32(out, uint32_t(headers.size()));
  for (const auto& [name, value] : headers) {
    std::string n = lower(name);
    put32(out, uint32_t(n.size()));
    out += n;
    put32(out, uint32_t(value.size()));
    out += value;
  }
  return out;
}

std::optional<HeaderList> decode_header_block(std::string_view raw) {
  size_t at = 0;
  uint32_t count = 0;
  if (!get32(raw, at, count)) return std::nullopt;
  if (count > raw.size() / 8) return std::nullopt;  // every pair needs two lengths
  HeaderList out;
  out.reserve(count);
  for (uint32_t i = 0; i < count; ++i) {
    uint32_t len = 0;
    if (!get32(raw, at, len) || raw.size() - at < len) return std::nullopt;
    std::string name = lower(raw.substr(at, len));
    at += len;
    if (!get32(raw, at, len) || raw.size() - at < len) return std::nullopt;
    out.emplace_back(std::move(name), std::string(raw.substr(at, len)));
    at += len;
  }
  if (at != raw.size()) return std::nullopt;
  return out;
}

std::string find_header(const HeaderList& headers, std::string_view name) {
  std::string want = lower(name);
  for (const auto& [n, v] : headers) {
    if (n == want) return v.substr(0, v.find('\0'));
  }
  return "";
}

HeaderCompressor::HeaderCompressor() : zs_(std::make_unique<z_stream_s>()) {
  *zs_ = {};
  if (deflateInit(zs_.get(), Z_BEST_COMPRESSION) != Z_OK) return;
  ok_ = deflateSetDictionary(zs_.get(), kHeaderDictionary, uInt(kHeaderDictionarySize)) == Z_OK;
}

HeaderCompressor::~HeaderCompressor() { deflateEnd(zs_.get()); }

Result<std::string> HeaderCompressor::compress(const HeaderList& headers) {
  if (!ok_) return internal_error("spdy header compressor: zlib init failed");
  std::string in = encode_header_block(headers);
  std::string out;
  zs_->next_in = reinterpret_cast<Bytef*>(in.data());
  zs_->avail_in = uInt(in.size());
  char chunk[4096];
  do {
    zs_->next_out = reinterpret_cast<Bytef*>(chunk);
    zs_->avail_out = sizeof(chunk);
    int rc = deflate(zs_.get(), Z_SYNC_FLUSH);
    if (rc != Z_OK && rc != Z_BUF_ERROR) {
      ok_ = false;
      return internal_error("spdy header compression: zlib error " + std::to_string(rc));
    }
    out.append(chunk, sizeof(chunk) - zs_->avail_out);
  } while (zs_->avail_out == 0);
  return out;
}

HeaderDecompressor::HeaderDecompressor(size_t max_block) : zs_(std::make_unique<z_stream_s>()), max_block_(max_block) {
  *zs_ = {};
  ok_ = inflateInit(zs_.get()) == Z_OK;
}

HeaderDecompressor::~HeaderDecompressor() { inflateEnd(zs_.get()); }

Result<HeaderList> HeaderDecompressor::decompress(std::string_view compressed) {
  if (!ok_) return invalid_argument("spdy header block: decompression context broken");
  std::string out;
  zs_->next_in = reinterpret_cast<Bytef*>(const_cast<char*>(compressed.data()));
  zs_->avail_in = uInt(compressed.size());
  char chunk[4096];
  while (zs_->avail_in > 0 || out.empty()) {
    zs_->next_out = reinterpret_cast<Bytef*>(chunk);
    zs_->avail_out = sizeof(chunk);
    int rc = inflate(zs_.get(), Z_SYNC_FLUSH);
    if (rc == Z_NEED_DICT) {
      rc = inflateSetDictionary(zs_.get(), kHeaderDictionary, uInt(kHeaderDictionarySize));
      if (rc != Z_OK) break;
      continue;
    }
    out.append(chunk, sizeof(chunk) - zs_->avail_out);
    if (out.size() > max_block_) {
      ok_ = false;
      return invalid_argument("spdy header block larger than " + std::to_string(max_block_) + " bytes");
    }
    if (rc == Z_BUF_ERROR && zs_->avail_in == 0) break;  // all input used, nothing pending
    if (rc != Z_OK) {
      ok_ = false;
      return invalid_argument("spdy header block: zlib error " + std::to_string(rc));
    }
    if (zs_->avail_in == 0 && zs_->avail_out != 0) break;
  }
  if (zs_->avail_in != 0) {
    ok_ = false;
    return invalid_argument("spdy header block: bad compressed data");
  }
  auto headers = decode_header_block(out);
  if (!headers) return invalid_argument("spdy header block: malformed name/value block");
  return std::move(*headers);
}

}  // namespace berth::spdy
