// Name reservations: CRI's rule that a sandbox (name, namespace, uid, attempt) or a container
// (pod, name, attempt) names one object at a time. Thread-safe.
#pragma once

#include <map>
#include <mutex>
#include <string>

#include "berth/mutex.h"
#include "berth/status.h"

namespace berth {

class NameReservations {
 public:
  // A taken name is ALREADY_EXISTS: "<kind> name <key> is reserved for <kind> <holder id>".
  Status reserve(const std::string& key, const std::string& id, const std::string& kind) {
    MutexLock lock(mu_);
    if (auto it = names_.find(key); it != names_.end())
      return already_exists(kind + " name " + key + " is reserved for " + kind + " " + it->second);
    names_[key] = id;
    return ok_status();
  }
  // Releases `key` only while `id` holds it.
  void release(const std::string& key, const std::string& id) {
    MutexLock lock(mu_);
    if (auto it = names_.find(key); it != names_.end() && it->second == id) names_.erase(it);
  }

 private:
  Mutex mu_;
  std::map<std::string, std::string> names_ BERTH_GUARDED_BY(mu_);
};

}  // namespace berth
