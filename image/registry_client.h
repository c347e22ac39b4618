// RegistryClient: the OCI distribution API over libcurl for one repository: manifests and blobs,
// tried on the configured mirrors first and then the registry itself, with anonymous, bearer-token
// and basic auth. Credentials are only ever put in request headers, never in logs or errors.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "berth/image_reference.h"
#include "berth/mutex.h"
#include "berth/registry_settings.h"
#include "berth/status.h"
#include "registry_connections.h"

namespace berth {

struct FetchedManifest {
  std::string body;
  std::string media_type;
  std::string digest;  // sha256 of body
};

// The pull idle timeout: a transfer is stalled once it has received no byte at all for `timeout`,
// however slowly it moved before. The clock starts when the connection is up (connecting has its
// own timeout). Fed from curl's progress callback, which runs about once a second when idle.
// A zero timeout never expires.
class IdleWatch {
 public:
  using Clock = std::chrono::steady_clock;
  explicit IdleWatch(Clock::duration timeout) : timeout_(timeout) {}
  // `received`: bytes so far, body and header lines (counted once complete).
  bool stalled(bool connected, uint64_t received, Clock::time_point now);

 private:
  Clock::duration timeout_;
  bool started_ = false;
  uint64_t received_ = 0;
  Clock::time_point last_{};
};

class RegistryClient {
 public:
  // `stop`, when set, is asked about once a second during every transfer: a status other than OK
  // (the pull was cancelled or ran out of time) aborts the transfer and is what the call returns.
  // `connections`, when set, is where requests reuse connections (and the clients before this one
  // left them); without it every request connects anew.
  RegistryClient(const RegistryOptions& options, ImageReference ref, RegistryCredentials creds,
                 std::function<Status()> stop = {}, std::shared_ptr<RegistryConnections> connections = nullptr);
  ~RegistryClient();

  // tag or digest; a digest is verified against the body.
  Result<FetchedManifest> get_manifest(const std::string& tag_or_digest);
  // Streams the blob into `sink`; the caller verifies the digest. From byte `from` on (an HTTP
  // range request, to continue a download cut short): a registry that sends the whole blob
  // instead has `restart` called first, for the sink to start over from byte 0.
  Status get_blob(const std::string& digest, const std::function<Status(const char*, size_t)>& sink, uint64_t from = 0,
                  const std::function<Status()>& restart = {});

  // Called once a sinked answer's body starts, with its status code and Content-Range.
  using BodyStart = std::function<Status(long code, const std::string& content_range)>;

  struct Endpoint;
  struct Response;

 private:
  Result<Response> request(Endpoint& ep, const std::string& path, const std::vector<std::string>& headers,
                           const std::function<Status(const char*, size_t)>* sink,
                           const BodyStart* body_start = nullptr);
  Status authorize(Endpoint& ep, const std::string& challenge);
  bool stopped() const { return stop_ && !stop_().ok(); }

  const RegistryOptions& options_;
  ImageReference ref_;
  RegistryCredentials creds_;
  std::function<Status()> stop_;
  std::shared_ptr<RegistryConnections> connections_;
  std::vector<std::unique_ptr<Endpoint>> endpoints_;  // mirrors then upstream
};

}  // namespace berth
