// The auth file is read in berthd (root may be its only reader) and re-read when its identity
// (inode, size, mtime) changes; a helper runs as a child of berthd with its environment, bounded by
// a timeout and killed with its process group after it. Helper answers are cached per helper and
// server URL for helper_cache, or until the secret's own JWT expiry when it is sooner.
#include "berth/node_credentials.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <nlohmann/json.hpp>

#include <spdlog/spdlog.h>

#include "base64_bytes.h"
#include "berth/command.h"
#include "berth/file_identity.h"
#include "berth/file_text.h"
#include "berth/json_fields.h"
#include "berth/mutex.h"

namespace berth {

using nlohmann::json;

namespace {

bool names_docker_hub(const std::string& host) {
  return host == "docker.io" || host == "index.docker.io" || host == "registry-1.docker.io";
}

// The server URL a helper is asked about: docker's own name for Docker Hub, the host otherwise.
std::string helper_server_url(const std::string& domain) {
  return names_docker_hub(domain) ? "https://index.docker.io/v1/" : domain;
}

bool valid_helper_name(const std::string& name) {
  return !name.empty() && name.size() <= 64 && std::all_of(name.begin(), name.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.';
  }) && name[0] != '.';
}

}  // namespace

std::string auth_file_key(const std::string& key) {
  std::string k = key;
  // Every scheme in front, however many ("https://http://h" is "h"), for the same reason as below.
  for (bool again = true; again;) {
    again = false;
    for (const std::string scheme : {"https://", "http://"})
      if (k.rfind(scheme, 0) == 0) {
        k.erase(0, scheme.size());
        again = true;
      }
  }
  // Trailing slashes and docker's API suffixes, until none is left (so that a key normalised once
  // is normalised: "h/v2//" is "h", not "h/v2").
  for (bool again = true; again;) {
    again = false;
    while (!k.empty() && k.back() == '/') k.pop_back();
    for (const std::string s : {"/v1", "/v2"})
      if (k.size() > s.size() && k.compare(k.size() - s.size(), s.size(), s) == 0) {
        k.resize(k.size() - s.size());
        again = true;
      }
  }
  size_t slash = k.find('/');
  std::string host = k.substr(0, slash);
  if (names_docker_hub(host)) k = "docker.io" + (slash == std::string::npos ? "" : k.substr(slash));
  return k;
}

Result<AuthFile> parse_auth_file(const std::string& text) {
  auto j = json::parse(text, nullptr, false);
  if (!j.is_object()) return invalid_argument("not a JSON object");
  AuthFile out;
  JsonFields top(j);
  const json* auths = top.object("auths");
  out.cred_helpers = top.string_map("credHelpers");
  out.creds_store = top.string("credsStore");
  if (!top.ok()) return top.status();
  if (!out.creds_store.empty() && !valid_helper_name(out.creds_store))
    return invalid_argument("credsStore: not a helper name");
  std::map<std::string, std::string> helpers;
  for (const auto& [host, name] : out.cred_helpers) {
    if (!valid_helper_name(name)) return invalid_argument("credHelpers[\"" + host + "\"]: not a helper name");
    helpers[auth_file_key(host)] = name;
  }
  out.cred_helpers = std::move(helpers);
  for (auto it = auths ? auths->begin() : json::const_iterator(); auths && it != auths->end(); ++it) {
    const std::string where = "auths[\"" + it.key() + "\"]";
    if (!it.value().is_object()) return invalid_argument(where + ": not an object");
    JsonFields e = top.nested(it.value(), where);
    RegistryCredentials c;
    std::string auth = e.string("auth");
    c.username = e.string("username");
    c.password = e.string("password");
    c.identity_token = e.string("identitytoken");
    c.registry_token = e.string("registrytoken");
    if (!e.ok()) return top.status();
    if (!auth.empty()) {
      auto pair = decode_base64_bytes(auth);
      size_t colon = pair ? pair->find(':') : std::string::npos;
      if (colon == std::string::npos) return invalid_argument(where + ".auth: not a base64 'user:password' pair");
      c.username = pair->substr(0, colon);
      c.password = pair->substr(colon + 1);
    }
    if (c.empty()) continue;  // docker writes {} for hosts whose secret is in a helper
    std::string key = auth_file_key(it.key());
    if (key.empty()) return invalid_argument(where + ": no registry named");
    out.auths[key] = std::move(c);
  }
  return out;
}

Result<RegistryCredentials> parse_helper_answer(const std::string& text) {
  auto j = json::parse(text, nullptr, false);
  if (!j.is_object()) return invalid_argument("not a JSON object");
  JsonFields f(j);
  std::string user = f.string("Username");
  std::string secret = f.string("Secret");
  if (!f.ok()) return f.status();
  if (secret.empty()) return invalid_argument("no Secret");
  RegistryCredentials c;
  if (user == "<token>")
    c.identity_token = secret;
  else
    c = {user, secret, "", ""};
  return c;
}

std::optional<int64_t> jwt_expiry(const std::string& secret) {
  size_t a = secret.find('.');
  size_t b = a == std::string::npos ? a : secret.find('.', a + 1);
  if (b == std::string::npos || b - a - 1 > 8192) return std::nullopt;
  auto text = decode_base64_bytes(secret.substr(a + 1, b - a - 1), true);
  if (!text) return std::nullopt;
  auto j = json::parse(*text, nullptr, false);
  if (!j.is_object() || !j.contains("exp") || !j["exp"].is_number()) return std::nullopt;
  double exp = j["exp"].get<double>();
  if (!(exp > 0 && exp < 1e12)) return std::nullopt;
  return static_cast<int64_t>(exp);
}

struct NodeCredentials::State {
  Mutex mu;
  std::optional<FileIdentity> read_as BERTH_GUARDED_BY(mu);  // the version `file` came from
  AuthFile file BERTH_GUARDED_BY(mu);
  struct Cached {
    RegistryCredentials creds;
    std::chrono::steady_clock::time_point until;
  };
  std::map<std::string, Cached> answers BERTH_GUARDED_BY(mu);  // by helper and server URL
};

NodeCredentials::NodeCredentials(NodeCredentialsOptions options)
    : opt_(std::move(options)), state_(std::make_unique<State>()) {}
NodeCredentials::~NodeCredentials() = default;

Result<RegistryCredentials> NodeCredentials::lookup(const ImageReference& ref) {
  if (opt_.auth_file.empty()) return RegistryCredentials{};
  std::string helper;
  {
    MutexLock lock(state_->mu);
    auto id = file_identity(opt_.auth_file);
    if (id != state_->read_as) {
      state_->read_as = id;
      state_->file = {};
      state_->answers.clear();  // the file may name other helpers now
      if (!id) {
        spdlog::warn("registry_auth_file {}: cannot be read: no node credentials", opt_.auth_file);
      } else if (auto text = read_file_bytes(opt_.auth_file); !text.ok()) {
        spdlog::error("registry_auth_file: {}: no node credentials", text.status().message());
      } else if (auto parsed = parse_auth_file(*text); !parsed.ok()) {
        spdlog::error("registry_auth_file {}: {}: no node credentials until it is fixed", opt_.auth_file,
                      parsed.status().message());
      } else {
        state_->file = std::move(*parsed);
        spdlog::info("registry_auth_file {}: read ({} registries, {} helpers{})", opt_.auth_file,
                     state_->file.auths.size(), state_->file.cred_helpers.size(),
                     state_->file.creds_store.empty() ? "" : ", a credsStore");
      }
    }
    // The longest key first: host/a/b/c, host/a/b, host/a, host.
    std::string domain = auth_file_key(ref.domain);
    std::string path = domain + "/" + ref.repository;
    for (;;) {
      if (auto it = state_->file.auths.find(path); it != state_->file.auths.end()) return it->second;
      size_t slash = path.rfind('/');
      if (slash == std::string::npos) break;
      path.resize(slash);
    }
    auto h = state_->file.cred_helpers.find(domain);
    helper = h != state_->file.cred_helpers.end() ? h->second : state_->file.creds_store;
    if (helper.empty()) return RegistryCredentials{};
    auto cached = state_->answers.find(helper + "\n" + domain);
    if (cached != state_->answers.end() && std::chrono::steady_clock::now() < cached->second.until)
      return cached->second.creds;
  }

  // Outside the lock: a slow helper holds up only the pulls that need it.
  const std::string program = "docker-credential-" + helper;
  const std::string what = "credential helper " + program + " for " + ref.domain;
  auto run = run_command({.argv = {program, "get"},
                          .stdin_data = helper_server_url(ref.domain),
                          .timeout = opt_.helper_timeout,
                          .output_limit = 1 << 20});
  if (!run.ok()) {
    if (run.status().sys_errno() == ENOENT) return Status(Code::failed_precondition, what + ": not found in PATH");
    return Status(Code::unavailable, what + ": " + run.status().message());
  }
  RegistryCredentials creds;
  if (run->timed_out) {
    return Status(Code::unavailable,
                  what + ": no answer within " + std::to_string(opt_.helper_timeout.count()) + " ms; killed");
  } else if (!run->success()) {
    // Its output is not quoted: a helper may echo what it was given or what it holds.
    bool none = run->out.find("credentials not found") != std::string::npos ||
                run->err.find("credentials not found") != std::string::npos;
    if (!none) return Status(Code::unavailable, what + ": " + run->describe(opt_.helper_timeout));
  } else if (auto answer = parse_helper_answer(run->out); !answer.ok()) {
    return Status(Code::unavailable, what + ": its answer: " + answer.status().message());
  } else {
    creds = std::move(*answer);
  }
  auto until = std::chrono::steady_clock::now() + opt_.helper_cache;
  const std::string& secret = creds.identity_token.empty() ? creds.password : creds.identity_token;
  if (auto exp = jwt_expiry(secret)) {
    // A minute early, so that no pull starts with a token about to lapse.
    auto left = std::chrono::seconds(*exp - 60) - std::chrono::system_clock::now().time_since_epoch();
    until = std::min(until, std::chrono::steady_clock::now() + std::chrono::duration_cast<std::chrono::seconds>(left));
  }
  MutexLock lock(state_->mu);
  state_->answers[helper + "\n" + auth_file_key(ref.domain)] = {creds, until};
  return creds;
}

}  // namespace berth
