// RegistryConnections: one curl share holding open connections, TLS sessions and DNS answers, so
// that the requests of a pull, and the pulls a berth-pull helper serves one after another, go over
// what earlier requests opened instead of connecting and handshaking again. curl hands a cached
// connection only to a request for the same scheme, host and port with the same TLS settings (CA,
// verification); credentials travel in each request's own header, so a connection carries
// nothing of one request's authorization to the next.
#pragma once

#include <curl/curl.h>

#include <memory>
#include <set>
#include <string>

#include "berth/mutex.h"
#include "berth/status.h"

namespace berth {

class RegistryConnections {
 public:
  // Loads libcurl if it is not yet (pull_libraries).
  static Result<std::shared_ptr<RegistryConnections>> make();
  ~RegistryConnections();
  RegistryConnections(const RegistryConnections&) = delete;
  RegistryConnections& operator=(const RegistryConnections&) = delete;

  // For CURLOPT_SHARE of every easy handle of the requests that may reuse each other's connections.
  CURLSH* share() const { return share_; }

  // A loopback registry without TLS (docker's rule lets berth fall back to http for those): found
  // out by the first request to it, not by every pull's.
  void remember_plain_http(const std::string& host);
  bool speaks_plain_http(const std::string& host) const;

 private:
  RegistryConnections() = default;
  // curl takes and releases these around its use of the shared data, in two callbacks.
  static void lock(CURL*, curl_lock_data data, curl_lock_access, void* self) BERTH_NO_THREAD_SAFETY_ANALYSIS;
  static void unlock(CURL*, curl_lock_data data, void* self) BERTH_NO_THREAD_SAFETY_ANALYSIS;

  CURLSH* share_ = nullptr;
  // One per kind of shared data, as curl asks: transfers on several threads may share it.
  Mutex locks_[CURL_LOCK_DATA_LAST];
  mutable Mutex mu_;
  std::set<std::string> plain_http_ BERTH_GUARDED_BY(mu_);
};

}  // namespace berth
