// Frames and the JSON of hello, requests and replies; see pull_worker_protocol.h. Every decoder
// reads through JsonFields, so a malformed message is an error naming the field, never a throw.
#include "pull_worker_protocol.h"

#include <nlohmann/json.hpp>

#include "berth/json_fields.h"

namespace berth::pull_protocol {

using nlohmann::json;

namespace {

Result<json> parse_object(const std::string& payload, const char* what) {
  json j = json::parse(payload, nullptr, false);
  if (!j.is_object()) return internal_error(std::string(what) + ": not a JSON object");
  return j;
}

Status fields_status(const JsonFields& f, const char* what) {
  return f.ok() ? ok_status() : internal_error(std::string(what) + ": " + f.status().message());
}

constexpr int kMaxCode = static_cast<int>(Code::cancelled);

}  // namespace

std::string frame(std::string_view payload) {
  std::string out(4, '\0');
  uint32_t n = static_cast<uint32_t>(payload.size());
  for (int i = 0; i < 4; ++i) out[static_cast<size_t>(i)] = static_cast<char>((n >> (8 * i)) & 0xff);
  out.append(payload);
  return out;
}

Result<std::optional<std::string>> take_frame(std::string& buffer) {
  if (buffer.size() < 4) return std::optional<std::string>();
  uint32_t n = 0;
  for (int i = 0; i < 4; ++i)
    n |= static_cast<uint32_t>(static_cast<unsigned char>(buffer[static_cast<size_t>(i)])) << (8 * i);
  if (n > kMaxFrameBytes)
    return internal_error("berth-pull sent a frame of " + std::to_string(n) + " bytes; at most " +
                          std::to_string(kMaxFrameBytes) + " are allowed");
  if (buffer.size() - 4 < n) return std::optional<std::string>();
  std::string payload = buffer.substr(4, n);
  buffer.erase(0, 4 + size_t{n});
  return std::optional<std::string>(std::move(payload));
}

std::string encode_hello(const Hello& h) {
  json hosts = json::object();
  for (const auto& [domain, s] : h.registry.hosts)
    hosts[domain] = {{"mirrors", s.mirrors},
                     {"insecure", s.insecure},
                     {"ca_file", s.ca_file},
                     {"mirror_credentials", s.mirror_credentials}};
  return json{{"store", h.store}, {"idle_timeout_seconds", h.registry.idle_timeout_seconds}, {"hosts", hosts}}.dump(
      -1, ' ', false, json::error_handler_t::replace);
}

Result<Hello> decode_hello(const std::string& payload) {
  auto j = parse_object(payload, "hello");
  if (!j.ok()) return j.status();
  JsonFields f(*j);
  Hello h;
  h.store = f.required_string("store");
  h.registry.idle_timeout_seconds = f.integer<int>("idle_timeout_seconds", 60);
  if (const json* hosts = f.object("hosts")) {
    for (const auto& [domain, v] : hosts->items()) {
      JsonFields hf = f.nested(v, "hosts." + domain);
      RegistryHostSettings s;
      s.mirrors = hf.strings("mirrors");
      s.insecure = hf.boolean("insecure", false);
      s.ca_file = hf.string("ca_file");
      s.mirror_credentials = hf.boolean("mirror_credentials", false);
      h.registry.hosts[domain] = std::move(s);
    }
  }
  if (Status s = fields_status(f, "hello"); !s.ok()) return s;
  return h;
}

std::string encode_request(const Request& r) {
  json j;
  switch (r.op) {
    case Request::Op::begin:
      j = {{"op", "begin"},
           {"reference", r.reference},
           {"credentials",
            {{"username", r.credentials.username},
             {"password", r.credentials.password},
             {"identity_token", r.credentials.identity_token},
             {"registry_token", r.credentials.registry_token}}}};
      break;
    case Request::Op::end: j = {{"op", "end"}}; break;
    case Request::Op::manifest: j = {{"op", "manifest"}, {"ref", r.ref}}; break;
    case Request::Op::blob:
      j = {{"op", "blob"}, {"digest", r.digest}, {"size", r.size}};
      if (r.offset > 0) j["offset"] = r.offset;
      break;
    case Request::Op::prefetch: j = {{"op", "prefetch"}, {"digest", r.digest}, {"size", r.size}}; break;
    case Request::Op::unpack: j = {{"op", "unpack"}, {"blob", r.blob_path}, {"dest", r.dest}}; break;
  }
  j["what"] = r.what;
  return j.dump(-1, ' ', false, json::error_handler_t::replace);
}

Result<Request> decode_request(const std::string& payload) {
  auto j = parse_object(payload, "request");
  if (!j.ok()) return j.status();
  JsonFields f(*j);
  Request r;
  std::string op = f.required_string("op");
  r.what = f.string("what");
  if (op == "begin") {
    r.op = Request::Op::begin;
    r.reference = f.required_string("reference");
    if (const json* c = f.object("credentials")) {
      JsonFields cf = f.nested(*c, "credentials");
      r.credentials = {cf.string("username"), cf.string("password"), cf.string("identity_token"),
                       cf.string("registry_token")};
    }
  } else if (op == "end") {
    r.op = Request::Op::end;
  } else if (op == "manifest") {
    r.op = Request::Op::manifest;
    r.ref = f.required_string("ref");
  } else if (op == "blob") {
    r.op = Request::Op::blob;
    r.digest = f.required_string("digest");
    r.size = f.integer<int64_t>("size", -1);
    r.offset = f.integer<uint64_t>("offset", 0);
  } else if (op == "prefetch") {
    r.op = Request::Op::prefetch;
    r.digest = f.required_string("digest");
    r.size = f.integer<int64_t>("size", -1);
    if (f.ok() && (r.size < 0 || r.size > kMaxPrefetchBytes))
      f.fail("size", "a prefetched blob has a known size of at most " + std::to_string(kMaxPrefetchBytes) + " bytes");
  } else if (op == "unpack") {
    r.op = Request::Op::unpack;
    r.blob_path = f.required_string("blob");
    r.dest = f.required_string("dest");
  } else if (f.ok()) {
    f.fail("op", "unknown operation '" + op + "'");
  }
  if (Status s = fields_status(f, "request"); !s.ok()) return s;
  return r;
}

std::string encode_reply(const Reply& r) {
  return json{{"code", static_cast<int>(r.status.code())},
              {"message", r.status.message()},
              {"registry_bytes", r.registry_bytes},
              {"media_type", r.media_type}}
      .dump(-1, ' ', false, json::error_handler_t::replace);
}

Result<Reply> decode_reply(const std::string& payload) {
  auto j = parse_object(payload, "berth-pull reply");
  if (!j.ok()) return j.status();
  JsonFields f(*j);
  Reply r;
  int code = f.required_integer<int>("code");
  std::string message = f.string("message");
  if (f.ok() && (code < 0 || code > kMaxCode)) f.fail("code", "unknown status code " + std::to_string(code));
  r.registry_bytes = f.integer<uint64_t>("registry_bytes", 0);
  r.media_type = f.string("media_type");
  if (Status s = fields_status(f, "berth-pull reply"); !s.ok()) return s;
  if (code != 0)
    r.status = Status(static_cast<Code>(code), message.empty() ? "berth-pull failed without a message" : message);
  return r;
}

}  // namespace berth::pull_protocol
