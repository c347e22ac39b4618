// RegistryConnections; see registry_connections.h.
#include "registry_connections.h"

#include "pull_libraries.h"

namespace berth {

Result<std::shared_ptr<RegistryConnections>> RegistryConnections::make() {
  auto libs = pull_libraries(PullLibrary::curl);
  if (!libs.ok()) return libs.status();
  const CurlLibrary& api = (*libs)->curl;
  std::shared_ptr<RegistryConnections> c(new RegistryConnections());
  c->share_ = api.share_init();
  if (!c->share_) return internal_error("registry connections: curl_share_init failed");
  CURLSHcode rc = CURLSHE_OK;
  for (curl_lock_data d : {CURL_LOCK_DATA_CONNECT, CURL_LOCK_DATA_SSL_SESSION, CURL_LOCK_DATA_DNS})
    if (rc == CURLSHE_OK) rc = api.share_setopt(c->share_, CURLSHOPT_SHARE, d);
  if (rc == CURLSHE_OK) rc = api.share_setopt(c->share_, CURLSHOPT_LOCKFUNC, &RegistryConnections::lock);
  if (rc == CURLSHE_OK) rc = api.share_setopt(c->share_, CURLSHOPT_UNLOCKFUNC, &RegistryConnections::unlock);
  if (rc == CURLSHE_OK) rc = api.share_setopt(c->share_, CURLSHOPT_USERDATA, c.get());
  if (rc != CURLSHE_OK)
    return internal_error("registry connections: curl_share_setopt failed (CURLSHcode " + std::to_string(rc) + ")");
  return c;
}

RegistryConnections::~RegistryConnections() {
  // Every easy handle that used the share was cleaned up by now (each request's own).
  if (!share_) return;
  if (auto libs = pull_libraries(PullLibrary::curl); libs.ok()) (*libs)->curl.share_cleanup(share_);
}

void RegistryConnections::remember_plain_http(const std::string& host) {
  MutexLock lock(mu_);
  plain_http_.insert(host);
}

bool RegistryConnections::speaks_plain_http(const std::string& host) const {
  MutexLock lock(mu_);
  return plain_http_.count(host) > 0;
}

void RegistryConnections::lock(CURL*, curl_lock_data data, curl_lock_access, void* self) {
  if (data >= 0 && data < CURL_LOCK_DATA_LAST) static_cast<RegistryConnections*>(self)->locks_[data].lock();
}

void RegistryConnections::unlock(CURL*, curl_lock_data data, void* self) {
  if (data >= 0 && data < CURL_LOCK_DATA_LAST) static_cast<RegistryConnections*>(self)->locks_[data].unlock();
}

}  // namespace berth
