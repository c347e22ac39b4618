// One curl easy handle per request (handles are cheap; sharing them across the parallel layer
// fetches would need locking). Loopback registries get docker's treatment: HTTPS first, plain HTTP
// when the registry does not speak TLS; a TLS server whose certificate fails is never downgraded.
#include "registry_client.h"

#include <arpa/inet.h>
#include <curl/curl.h>
#include <sys/socket.h>

#include <cctype>
#include <utility>
#include <nlohmann/json.hpp>

#include "bearer_realm.h"
#include "berth/json_fields.h"
#include "berth/mutex.h"
#include "pull_libraries.h"
#include "registry_error.h"
#include "sha256.h"

namespace berth {

// The layer threads of one pull share its endpoints: what a request learns (the scheme a loopback
// registry answers in, a challenge's answer) is kept under mu for the next request.
struct RegistryClient::Endpoint {
  Mutex mu;
  std::string base BERTH_GUARDED_BY(mu);  // scheme://host[:port][/prefix], no trailing slash
  std::string host;                       // for messages
  bool mirror = false;
  bool gets_credentials = true;  // the pull's credentials may answer its challenges
  bool may_fall_back_to_http BERTH_GUARDED_BY(mu) = false;
  std::string ca_file;
  std::string ca_pem;                              // ca_file's bytes, when they were read beforehand
  std::string authorization BERTH_GUARDED_BY(mu);  // "Bearer …" / "Basic …" once a challenge was answered
};

struct RegistryClient::Response {
  long code = 0;
  std::string content_type, docker_digest, www_authenticate, content_range, body;
};

namespace {

constexpr long kConnectTimeoutSeconds = 30;

// The endpoint's CA bundle: the bytes read beforehand, else the file.
void trust_ca_file(const CurlLibrary& api, CURL* curl, const RegistryClient::Endpoint& ep) {
  if (!ep.ca_pem.empty()) {
    curl_blob blob{const_cast<char*>(ep.ca_pem.data()), ep.ca_pem.size(), CURL_BLOB_COPY};
    api.easy_setopt(curl, CURLOPT_CAINFO_BLOB, &blob);
  } else if (!ep.ca_file.empty()) {
    api.easy_setopt(curl, CURLOPT_CAINFO, ep.ca_file.c_str());
  }
}

// curl 7.88 makes its sockets without close-on-exec; berth's are made here, with it.
curl_socket_t open_cloexec_socket(void*, curlsocktype, curl_sockaddr* a) {
  return ::socket(a->family, a->socktype | SOCK_CLOEXEC, a->protocol);
}

constexpr const char* kManifestAccept =
    "Accept: application/vnd.oci.image.manifest.v1+json, application/vnd.oci.image.index.v1+json, "
    "application/vnd.docker.distribution.manifest.v2+json, "
    "application/vnd.docker.distribution.manifest.list.v2+json, "
    "application/vnd.docker.distribution.manifest.v1+prettyjws;q=0.1, application/json;q=0.1";

std::string base64(const std::string& in) {
  static const char* t = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  size_t i = 0;
  for (; i + 2 < in.size(); i += 3) {
    unsigned v = (unsigned char)in[i] << 16 | (unsigned char)in[i + 1] << 8 | (unsigned char)in[i + 2];
    out += {t[v >> 18], t[(v >> 12) & 63], t[(v >> 6) & 63], t[v & 63]};
  }
  if (i + 1 == in.size()) {
    unsigned v = (unsigned char)in[i] << 16;
    out += {t[v >> 18], t[(v >> 12) & 63], '=', '='};
  } else if (i + 2 == in.size()) {
    unsigned v = (unsigned char)in[i] << 16 | (unsigned char)in[i + 1] << 8;
    out += {t[v >> 18], t[(v >> 12) & 63], t[(v >> 6) & 63], '='};
  }
  return out;
}

std::string url_escape(const std::string& s) {
  std::string out;
  for (unsigned char c : s) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~')
      out += static_cast<char>(c);
    else {
      char buf[4];
      std::snprintf(buf, sizeof buf, "%%%02X", c);
      out += buf;
    }
  }
  return out;
}

// Answers berth reads whole are capped while they stream: a manifest, index or token answer
// larger than this is refused, an error body is cut (its start says enough).
constexpr size_t kMaxDocumentBytes = 8u << 20;
constexpr size_t kMaxErrorBodyBytes = 64u << 10;
constexpr size_t kMaxTokenAnswerBytes = 1u << 20;

struct Transfer {
  RegistryClient::Response* resp;
  const std::function<Status(const char*, size_t)>* sink;
  const CurlLibrary* api;
  CURL* curl;
  Status sink_status;
  const std::function<void(size_t)>* on_bytes;
  IdleWatch idle;
  IdleWatch::Clock::time_point started;
  bool tls = false;
  uint64_t received = 0;
  bool idle_expired = false;
  const std::function<Status()>* stop = nullptr;
  Status stop_status;
  bool stopped = false;
  bool error_body_cut = false;
  const RegistryClient::BodyStart* body_start = nullptr;
  bool body_started = false;
};

size_t on_header(char* data, size_t size, size_t n, void* user) {
  auto* t = static_cast<Transfer*>(user);
  t->received += size * n;
  std::string line(data, size * n);
  if (line.rfind("HTTP/", 0) == 0) t->resp->content_range.clear();  // a new answer (after a redirect)
  size_t colon = line.find(':');
  if (colon != std::string::npos) {
    std::string key = line.substr(0, colon);
    for (char& c : key) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    std::string value = line.substr(colon + 1);
    while (!value.empty() && (value.front() == ' ')) value.erase(0, 1);
    while (!value.empty() && (value.back() == '\r' || value.back() == '\n' || value.back() == ' ')) value.pop_back();
    if (key == "content-type")
      t->resp->content_type = value;
    else if (key == "docker-content-digest")
      t->resp->docker_digest = value;
    else if (key == "www-authenticate")
      t->resp->www_authenticate = value;
    else if (key == "content-range")
      t->resp->content_range = value;
  }
  return size * n;
}

size_t on_body(char* data, size_t size, size_t n, void* user) {
  auto* t = static_cast<Transfer*>(user);
  long code = 0;
  t->api->easy_getinfo(t->curl, CURLINFO_RESPONSE_CODE, &code);
  size_t len = size * n;
  t->received += len;
  if (t->on_bytes && *t->on_bytes) (*t->on_bytes)(len);
  bool body = code == 200 || code == 206;
  if (body && t->sink) {
    if (!t->body_started && t->body_start && *t->body_start) {
      t->body_started = true;
      t->sink_status = (*t->body_start)(code, t->resp->content_range);
      if (!t->sink_status.ok()) return 0;
    }
    t->sink_status = (*t->sink)(data, len);
    return t->sink_status.ok() ? len : 0;  // 0 aborts the transfer
  }
  if (!body) {
    size_t room = kMaxErrorBodyBytes - std::min(kMaxErrorBodyBytes, t->resp->body.size());
    t->resp->body.append(data, std::min(room, len));
    if (len <= room) return len;
    t->error_body_cut = true;
    return 0;  // enough of it: the transfer ends here
  }
  if (t->resp->body.size() + len > kMaxDocumentBytes) {
    t->sink_status = Status(Code::resource_exhausted, "answer larger than " + std::to_string(kMaxDocumentBytes >> 20) +
                                                          " MiB (not a manifest berth accepts)");
    return 0;
  }
  t->resp->body.append(data, len);
  return len;
}

int on_progress(void* user, curl_off_t, curl_off_t, curl_off_t, curl_off_t) {
  auto* t = static_cast<Transfer*>(user);
  if (t->stop && *t->stop) {
    t->stop_status = (*t->stop)();
    if (!t->stop_status.ok()) {
      t->stopped = true;
      return 1;
    }
  }
  auto now = IdleWatch::Clock::now();
  curl_off_t connected_us = 0;
  t->api->easy_getinfo(t->curl, t->tls ? CURLINFO_APPCONNECT_TIME_T : CURLINFO_CONNECT_TIME_T, &connected_us);
  // Past the connect timeout it is connected whatever the timer says (curl would have given up
  // otherwise): a timer that stays 0 must not leave a transfer without an idle limit.
  bool connected =
      connected_us > 0 || t->received > 0 || now - t->started >= std::chrono::seconds(kConnectTimeoutSeconds);
  if (!t->idle.stalled(connected, t->received, now)) return 0;
  t->idle_expired = true;
  return 1;  // aborts the transfer (CURLE_ABORTED_BY_CALLBACK)
}

}  // namespace

bool IdleWatch::stalled(bool connected, uint64_t received, Clock::time_point now) {
  if (!connected || !started_ || received != received_) {
    started_ = connected;
    received_ = received;
    last_ = now;
    return false;
  }
  return timeout_ > Clock::duration::zero() && now - last_ >= timeout_;
}

RegistryClient::RegistryClient(const RegistryOptions& options, ImageReference ref, RegistryCredentials creds,
                               std::function<Status()> stop, std::shared_ptr<RegistryConnections> connections)
    : options_(options),
      ref_(std::move(ref)),
      creds_(std::move(creds)),
      stop_(std::move(stop)),
      connections_(std::move(connections)) {
  auto it = options_.hosts.find(ref_.domain);
  const RegistryHostSettings settings = it == options_.hosts.end() ? RegistryHostSettings{} : it->second;
  for (std::string m : settings.mirrors) {
    while (!m.empty() && m.back() == '/') m.pop_back();
    auto ep = std::make_unique<Endpoint>();
    ep->base = m.find("://") == std::string::npos ? "https://" + m : m;
    ep->host = ep->base.substr(ep->base.find("://") + 3);
    ep->mirror = true;
    ep->gets_credentials = settings.mirror_credentials;
    ep->ca_file = settings.ca_file;
    ep->ca_pem = settings.ca_pem;
    endpoints_.push_back(std::move(ep));
  }
  auto up = std::make_unique<Endpoint>();
  up->host = ref_.api_host();
  up->base = (settings.insecure ? "http://" : "https://") + up->host;
  up->may_fall_back_to_http = !settings.insecure && is_loopback_host(up->host);
  if (up->may_fall_back_to_http && connections_ && connections_->speaks_plain_http(up->host)) {
    up->base = "http://" + up->host;  // an earlier pull of this process found out
    up->may_fall_back_to_http = false;
  }
  up->ca_file = settings.ca_file;
  up->ca_pem = settings.ca_pem;
  endpoints_.push_back(std::move(up));
}

RegistryClient::~RegistryClient() = default;

Result<RegistryClient::Response> RegistryClient::request(Endpoint& ep, const std::string& path,
                                                         const std::vector<std::string>& headers,
                                                         const std::function<Status(const char*, size_t)>* sink,
                                                         const BodyStart* body_start) {
  auto libs = pull_libraries(PullLibrary::curl);
  if (!libs.ok()) return libs.status();
  const CurlLibrary& api = (*libs)->curl;
  bool answered_challenge = false;
  for (int attempt = 0; attempt < 3; ++attempt) {
    std::string url, auth;
    {
      MutexLock lock(ep.mu);
      url = ep.base + "/v2/" + ref_.repository + path;
      auth = ep.authorization;
    }
    Response resp;
    CURL* curl = api.easy_init();
    if (!curl) return internal_error("registry " + ep.host + ": cannot create a curl handle");
    Transfer t{&resp,
               sink,
               &api,
               curl,
               ok_status(),
               &options_.on_bytes,
               IdleWatch(std::chrono::seconds(options_.idle_timeout_seconds))};
    t.tls = url.rfind("https://", 0) == 0;
    t.started = IdleWatch::Clock::now();
    t.stop = &stop_;
    t.body_start = body_start;
    curl_slist* hdrs = nullptr;
    for (const auto& h : headers) hdrs = api.slist_append(hdrs, h.c_str());
    if (!auth.empty()) hdrs = api.slist_append(hdrs, ("Authorization: " + auth).c_str());
    api.easy_setopt(curl, CURLOPT_URL, url.c_str());
    api.easy_setopt(curl, CURLOPT_OPENSOCKETFUNCTION, open_cloexec_socket);
    api.easy_setopt(curl, CURLOPT_HTTPHEADER, hdrs);
    api.easy_setopt(curl, CURLOPT_USERAGENT, "berth/" BERTH_VERSION);
    // Blobs are often redirected to storage elsewhere: never to another scheme than http(s), and
    // from https only to https. curl sends our Authorization header to the first host alone.
    api.easy_setopt(curl, CURLOPT_PROTOCOLS_STR, "http,https");
    api.easy_setopt(curl, CURLOPT_REDIR_PROTOCOLS_STR, t.tls ? "https" : "http,https");
    api.easy_setopt(curl, CURLOPT_FOLLOWLOCATION, 1L);
    api.easy_setopt(curl, CURLOPT_MAXREDIRS, 5L);
    api.easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
    api.easy_setopt(curl, CURLOPT_CONNECTTIMEOUT, kConnectTimeoutSeconds);
    // Not curl's low-speed limit: that averages, so a transfer trickling under 1 byte/s would be
    // cut although bytes keep coming. IdleWatch looks for no byte at all.
    api.easy_setopt(curl, CURLOPT_NOPROGRESS, 0L);
    api.easy_setopt(curl, CURLOPT_XFERINFOFUNCTION, on_progress);
    api.easy_setopt(curl, CURLOPT_XFERINFODATA, &t);
    trust_ca_file(api, curl, ep);
    if (connections_) api.easy_setopt(curl, CURLOPT_SHARE, connections_->share());
    api.easy_setopt(curl, CURLOPT_HEADERFUNCTION, on_header);
    api.easy_setopt(curl, CURLOPT_HEADERDATA, &t);
    api.easy_setopt(curl, CURLOPT_WRITEFUNCTION, on_body);
    api.easy_setopt(curl, CURLOPT_WRITEDATA, &t);
    char detail[CURL_ERROR_SIZE] = {};
    api.easy_setopt(curl, CURLOPT_ERRORBUFFER, detail);
    CURLcode rc = api.easy_perform(curl);
    api.easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &resp.code);
    api.slist_free_all(hdrs);
    api.easy_cleanup(curl);

    if (t.stopped) return t.stop_status;
    if (!t.sink_status.ok()) return t.sink_status.context("registry " + ep.host);
    if (rc == CURLE_WRITE_ERROR && t.error_body_cut) rc = CURLE_OK;
    if (rc != CURLE_OK) {
      // A plain-HTTP server answers the ClientHello with HTTP text (OpenSSL: "wrong version
      // number") or drops the connection: only that earns the retry over HTTP. A server that did
      // speak TLS but whose certificate failed is one we must not trust, so that is an error.
      bool not_tls = rc == CURLE_SSL_CONNECT_ERROR || rc == CURLE_RECV_ERROR || rc == CURLE_GOT_NOTHING;
      bool untrusted = rc == CURLE_PEER_FAILED_VERIFICATION || rc == CURLE_SSL_CACERT_BADFILE ||
                       rc == CURLE_SSL_ISSUER_ERROR || rc == CURLE_SSL_CRL_BADFILE ||
                       rc == CURLE_SSL_PINNEDPUBKEYNOTMATCH;
      if (untrusted)
        return Status(Code::unavailable, "registry " + ep.host + ": TLS certificate not trusted: " +
                                             (detail[0] ? detail : api.easy_strerror(rc)) +
                                             " (a ca_file in the registry's settings names the CA to trust)");
      if (url.rfind("https://", 0) == 0 && not_tls) {
        MutexLock lock(ep.mu);
        // docker's rule for loopback registries; another layer thread may have fallen back
        // meanwhile, and this one then retries as well.
        if (ep.may_fall_back_to_http || ep.base.rfind("http://", 0) == 0) {
          ep.base = "http://" + ep.host;
          ep.may_fall_back_to_http = false;
          if (connections_) connections_->remember_plain_http(ep.host);
          continue;
        }
      }
      if (t.idle_expired)
        return Status(Code::deadline_exceeded, "registry " + ep.host + ": received no data for " +
                                                   std::to_string(options_.idle_timeout_seconds) +
                                                   "s; transfer aborted");
      if (rc == CURLE_OPERATION_TIMEDOUT)  // only connecting has a time limit
        return Status(Code::unavailable, "registry " + ep.host + " unreachable: no connection within " +
                                             std::to_string(kConnectTimeoutSeconds) + "s");
      if (rc == CURLE_WRITE_ERROR && !t.sink_status.ok()) return t.sink_status;
      return Status(Code::unavailable, "registry " + ep.host + " unreachable: " + api.easy_strerror(rc));
    }
    if (resp.code == 401 && !answered_challenge && !resp.www_authenticate.empty()) {
      if (Status s = authorize(ep, resp.www_authenticate); !s.ok()) return s;
      answered_challenge = true;
      continue;
    }
    return resp;
  }
  return Status(Code::unauthenticated, "registry " + ep.host + ": authentication failed");
}

Status RegistryClient::authorize(Endpoint& ep, const std::string& challenge) {
  std::string scheme = challenge.substr(0, challenge.find(' '));
  for (char& c : scheme) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  // A mirror gets the registry's credentials only when the configuration says so: without them it
  // answers as for an anonymous pull, and the next endpoint is tried.
  static const RegistryCredentials kNone;
  const RegistryCredentials& creds = ep.gets_credentials ? creds_ : kNone;
  std::string basic =
      creds.username.empty() && creds.password.empty() ? "" : "Basic " + base64(creds.username + ":" + creds.password);
  if (scheme == "basic") {
    if (basic.empty())
      return Status(Code::unauthenticated, "registry " + ep.host + ": 401 unauthorized: credentials required");
    MutexLock lock(ep.mu);
    ep.authorization = basic;
    return ok_status();
  }
  if (scheme != "bearer")
    return Status(Code::unauthenticated, "registry " + ep.host + ": unsupported auth scheme '" + scheme + "'");
  if (!creds.registry_token.empty()) {
    MutexLock lock(ep.mu);
    ep.authorization = "Bearer " + creds.registry_token;
    return ok_status();
  }
  auto params = challenge_params(challenge);
  std::string realm = params["realm"];
  if (realm.empty()) return Status(Code::unauthenticated, "registry " + ep.host + ": bearer challenge without a realm");
  std::string base;
  {
    MutexLock lock(ep.mu);
    base = ep.base;
  }
  if (Status s = check_bearer_realm(base, ep.host, realm, !basic.empty() || !creds.identity_token.empty()); !s.ok())
    return s;
  std::string scope = params.count("scope") ? params["scope"] : "repository:" + ref_.repository + ":pull";
  std::string form = "service=" + url_escape(params["service"]) + "&scope=" + url_escape(scope);

  auto libs = pull_libraries(PullLibrary::curl);
  if (!libs.ok()) return libs.status();
  const CurlLibrary& api = (*libs)->curl;
  std::string body;
  long code = 0;
  CURL* curl = api.easy_init();
  curl_slist* hdrs = nullptr;
  std::string url = realm;
  if (!creds.identity_token.empty()) {
    // OAuth2 refresh-token grant, as docker does with an identity token.
    std::string post =
        form + "&grant_type=refresh_token&client_id=berth&refresh_token=" + url_escape(creds.identity_token);
    api.easy_setopt(curl, CURLOPT_COPYPOSTFIELDS, post.c_str());
  } else {
    url += (url.find('?') == std::string::npos ? "?" : "&") + form;
    if (!basic.empty()) hdrs = api.slist_append(hdrs, ("Authorization: " + basic).c_str());
  }
  api.easy_setopt(curl, CURLOPT_URL, url.c_str());
  api.easy_setopt(curl, CURLOPT_OPENSOCKETFUNCTION, open_cloexec_socket);
  api.easy_setopt(curl, CURLOPT_PROTOCOLS_STR, "http,https");
  api.easy_setopt(curl, CURLOPT_HTTPHEADER, hdrs);
  api.easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
  api.easy_setopt(curl, CURLOPT_CONNECTTIMEOUT, kConnectTimeoutSeconds);
  api.easy_setopt(curl, CURLOPT_TIMEOUT, 60L);
  trust_ca_file(api, curl, ep);
  if (connections_) api.easy_setopt(curl, CURLOPT_SHARE, connections_->share());
  api.easy_setopt(
      curl, CURLOPT_WRITEFUNCTION, +[](char* d, size_t s, size_t n, void* u) -> size_t {
        auto* b = static_cast<std::string*>(u);
        if (b->size() + s * n > kMaxTokenAnswerBytes) return 0;  // aborts: no token answer is that large
        b->append(d, s * n);
        return s * n;
      });
  api.easy_setopt(curl, CURLOPT_WRITEDATA, &body);
  CURLcode rc = api.easy_perform(curl);
  api.easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &code);
  api.slist_free_all(hdrs);
  api.easy_cleanup(curl);
  std::string realm_host = realm.substr(0, realm.find('?'));
  if (rc != CURLE_OK)
    return Status(Code::unavailable,
                  "registry " + ep.host + ": token service " + realm_host + " unreachable: " + api.easy_strerror(rc));
  if (code == 401 || code == 403)
    return Status(Code::unauthenticated, "registry " + ep.host + ": token service " + realm_host +
                                             " refused the credentials (" + std::to_string(code) + ")");
  if (code != 200)
    return Status(Code::unavailable, "registry " + ep.host + ": token service answered " + std::to_string(code));
  auto j = nlohmann::json::parse(body, nullptr, false);
  std::string token;
  if (j.is_object()) {
    JsonFields f(j);
    token = f.string("token", f.string("access_token"));
    if (!f.ok())
      return Status(Code::unavailable,
                    "registry " + ep.host + ": token service " + realm_host + " answer: " + f.status().message());
  }
  if (token.empty()) return Status(Code::unauthenticated, "registry " + ep.host + ": token service returned no token");
  MutexLock lock(ep.mu);
  ep.authorization = "Bearer " + token;
  return ok_status();
}

static Status http_error(const std::string& host, const std::string& what, long code, const std::string& body) {
  std::string detail = registry_error_text(body);
  std::string msg = "registry " + host + ": " + what + ": " + std::to_string(code);
  if (!detail.empty()) msg += " (" + detail + ")";
  Code c = code == 404                    ? Code::not_found
           : (code == 401 || code == 403) ? Code::unauthenticated
           : code == 429                  ? Code::resource_exhausted
                                          : Code::unavailable;
  return Status(c, msg);
}

Result<FetchedManifest> RegistryClient::get_manifest(const std::string& tag_or_digest) {
  Status last;
  for (auto& ep : endpoints_) {
    auto resp = request(*ep, "/manifests/" + tag_or_digest, {kManifestAccept}, nullptr);
    if (!resp.ok()) {
      last = resp.status();
      if (stopped()) return last;
      continue;
    }
    if (resp->code != 200) {
      last = http_error(ep->host, "manifest " + ref_.name() + ":" + tag_or_digest, resp->code, resp->body);
      continue;
    }
    FetchedManifest m{std::move(resp->body), resp->content_type, ""};
    m.media_type = m.media_type.substr(0, m.media_type.find(';'));
    m.digest = Sha256::of(m.body);
    if (is_sha256_digest(tag_or_digest) && m.digest != tag_or_digest) {
      last = internal_error("registry " + ep->host + ": manifest " + tag_or_digest +
                            ": digest mismatch: content hashes to " + m.digest);
      continue;
    }
    // Blobs come from where the manifest came from first.
    if (ep != endpoints_.front())
      std::rotate(endpoints_.begin(), std::find(endpoints_.begin(), endpoints_.end(), ep), endpoints_.end());
    return m;
  }
  return last;
}

Status RegistryClient::get_blob(const std::string& digest, const std::function<Status(const char*, size_t)>& sink,
                                uint64_t from, const std::function<Status()>& restart) {
  Status last;
  for (auto& ep : endpoints_) {
    uint64_t delivered = 0;
    std::function<Status(const char*, size_t)> counting = [&](const char* d, size_t n) {
      delivered += n;
      return sink(d, n);
    };
    const std::string asked = "bytes " + std::to_string(from) + "-";
    BodyStart body_start = [&](long code, const std::string& range) -> Status {
      if (from == 0) return ok_status();
      if (code == 206) {
        if (range.rfind(asked, 0) == 0) return ok_status();
        return Status(Code::unavailable, "registry " + ep->host + ": blob " + digest + ": asked for " + asked +
                                             ", answered with " + (range.empty() ? "no Content-Range" : range));
      }
      // The whole blob after all (no range support): the sink starts over.
      from = 0;
      return restart ? restart() : internal_error("blob " + digest + ": no way to start over");
    };
    std::vector<std::string> headers;
    if (from > 0) headers.push_back("Range: bytes=" + std::to_string(from) + "-");
    auto resp = request(*ep, "/blobs/" + digest, headers, &counting, &body_start);
    if (!resp.ok()) {
      last = resp.status();
      if (delivered > 0 || stopped()) return last;  // partial data: the caller continues or restarts the blob
      continue;
    }
    if (resp->code == 200 || (resp->code == 206 && from > 0)) return ok_status();
    if (resp->code == 416 && from > 0 && restart) {  // nothing past what the caller has: start over
      if (Status s = restart(); !s.ok()) return s;
      return get_blob(digest, sink, 0, restart);
    }
    last = http_error(ep->host, "blob " + digest, resp->code, resp->body);
  }
  return last;
}

}  // namespace berth
