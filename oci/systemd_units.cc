// SystemdUnits over sd-bus (libsystemd), the library systemd's own tools and crun use for its
// D-Bus API; loaded with dlopen at the first call (posix/shared_library.h), so berthd maps it only
// on a node configured for the systemd cgroup driver. One connection, one call at a time under its
// mutex (an sd_bus is not thread-safe); each call waits for the job systemd queued for it, told by
// the JobRemoved signal, which systemd sends to the client that asked for the job.
#include "berth/systemd_units.h"

#include <systemd/sd-bus.h>

#include <cerrno>
#include <map>
#include <mutex>

#include "berth/mutex.h"
#include "berth/shared_library.h"

namespace berth {

// Named, not anonymous: SystemdUnits::Bus, a member of a class with linkage, holds these types.
namespace systemd_bus {

constexpr const char* kDestination = "org.freedesktop.systemd1";
constexpr const char* kPath = "/org/freedesktop/systemd1";
constexpr const char* kManager = "org.freedesktop.systemd1.Manager";

struct SdBusLibrary {
  decltype(&sd_bus_open_system) open_system;
  decltype(&sd_bus_flush_close_unref) close_unref;
  decltype(&sd_bus_is_open) is_open;
  decltype(&sd_bus_message_new_method_call) new_method_call;
  decltype(&sd_bus_message_append) append;
  decltype(&sd_bus_message_append_array) append_array;
  decltype(&sd_bus_message_open_container) open_container;
  decltype(&sd_bus_message_close_container) close_container;
  decltype(&sd_bus_message_read) read;
  decltype(&sd_bus_message_unref) message_unref;
  decltype(&sd_bus_call) call;
  decltype(&sd_bus_match_signal) match_signal;
  decltype(&sd_bus_slot_unref) slot_unref;
  decltype(&sd_bus_process) process;
  decltype(&sd_bus_wait) wait;
  decltype(&sd_bus_error_free) error_free;
  decltype(&sd_bus_error_has_name) error_has_name;
};

Result<const SdBusLibrary*> sd_bus_library() {
  static Mutex mu;
  static SdBusLibrary lib;
  static bool loaded = false;
  MutexLock lock(mu);
  if (loaded) return &lib;
  SharedLibrary so("libsystemd.so.0");
  so.bind(lib.open_system, "sd_bus_open_system");
  so.bind(lib.close_unref, "sd_bus_flush_close_unref");
  so.bind(lib.is_open, "sd_bus_is_open");
  so.bind(lib.new_method_call, "sd_bus_message_new_method_call");
  so.bind(lib.append, "sd_bus_message_append");
  so.bind(lib.append_array, "sd_bus_message_append_array");
  so.bind(lib.open_container, "sd_bus_message_open_container");
  so.bind(lib.close_container, "sd_bus_message_close_container");
  so.bind(lib.read, "sd_bus_message_read");
  so.bind(lib.message_unref, "sd_bus_message_unref");
  so.bind(lib.call, "sd_bus_call");
  so.bind(lib.match_signal, "sd_bus_match_signal");
  so.bind(lib.slot_unref, "sd_bus_slot_unref");
  so.bind(lib.process, "sd_bus_process");
  so.bind(lib.wait, "sd_bus_wait");
  so.bind(lib.error_free, "sd_bus_error_free");
  so.bind(lib.error_has_name, "sd_bus_error_has_name");
  if (std::string e = so.finish(); !e.empty())
    return failed_precondition("the systemd cgroup driver needs libsystemd: " + e);
  loaded = true;
  return &lib;
}

// A message being built: each step's negative errno is kept, the first one wins.
class MessageBuilder {
 public:
  MessageBuilder(const SdBusLibrary& lib, sd_bus_message* m) : lib_(lib), m_(m) {}
  template <class... A>
  MessageBuilder& append(const char* types, A... args) {
    if (r_ >= 0) r_ = lib_.append(m_, types, args...);
    return *this;
  }
  MessageBuilder& open(char type, const char* contents) {
    if (r_ >= 0) r_ = lib_.open_container(m_, type, contents);
    return *this;
  }
  MessageBuilder& close() {
    if (r_ >= 0) r_ = lib_.close_container(m_);
    return *this;
  }
  MessageBuilder& array(char type, const void* data, size_t size) {
    if (r_ >= 0) r_ = lib_.append_array(m_, type, data, size);
    return *this;
  }
  // An a(sv) of unit properties.
  MessageBuilder& properties(const std::vector<UnitProperty>& props) {
    open('a', "(sv)");
    for (const UnitProperty& p : props) {
      open('r', "sv").append("s", p.name.c_str());
      if (auto* b = std::get_if<bool>(&p.value)) append("v", "b", int(*b));
      if (auto* t = std::get_if<uint64_t>(&p.value)) append("v", "t", *t);
      if (auto* s = std::get_if<std::string>(&p.value)) append("v", "s", s->c_str());
      if (auto* y = std::get_if<std::vector<uint8_t>>(&p.value))
        open('v', "ay").array('y', y->data(), y->size()).close();
      if (auto* u = std::get_if<std::vector<uint32_t>>(&p.value))
        open('v', "au").array('u', u->data(), u->size() * sizeof(uint32_t)).close();
      close();
    }
    return close();
  }
  int result() const { return r_; }

 private:
  const SdBusLibrary& lib_;
  sd_bus_message* m_;
  int r_ = 0;
};

}  // namespace systemd_bus

using namespace systemd_bus;

struct SystemdUnits::Bus {
  explicit Bus(std::chrono::milliseconds t) : job_timeout(t) {}
  ~Bus() {
    MutexLock lock(mu);
    disconnect();
  }

  Mutex mu;
  const std::chrono::milliseconds job_timeout;
  const SdBusLibrary* lib BERTH_GUARDED_BY(mu) = nullptr;
  sd_bus* bus BERTH_GUARDED_BY(mu) = nullptr;
  sd_bus_slot* job_slot BERTH_GUARDED_BY(mu) = nullptr;
  // Jobs systemd reported removed, by object path, with their result ("done", "failed", ...):
  // filled by the signal callback, which runs inside process() with mu held.
  std::map<std::string, std::string> finished BERTH_GUARDED_BY(mu);

  static int on_job_removed(sd_bus_message* m, void* self, sd_bus_error*) {
    auto* b = static_cast<Bus*>(self);
    uint32_t id = 0;
    const char *path = nullptr, *unit = nullptr, *result = nullptr;
    // Called from process(), under the caller's lock of mu.
    if (b->lib_unlocked()->read(m, "uoss", &id, &path, &unit, &result) < 0 || !path || !result) return 0;
    if (b->finished_unlocked().size() > 1024) b->finished_unlocked().clear();  // jobs nobody waits for
    b->finished_unlocked()[path] = result;
    return 0;
  }
  const SdBusLibrary* lib_unlocked() BERTH_NO_THREAD_SAFETY_ANALYSIS { return lib; }
  std::map<std::string, std::string>& finished_unlocked() BERTH_NO_THREAD_SAFETY_ANALYSIS { return finished; }

  void disconnect() BERTH_REQUIRES(mu) {
    if (job_slot) lib->slot_unref(job_slot);
    if (bus) lib->close_unref(bus);
    job_slot = nullptr;
    bus = nullptr;
    finished.clear();
  }

  Status connect() BERTH_REQUIRES(mu) {
    if (!lib) {
      auto l = sd_bus_library();
      if (!l.ok()) return l.status();
      lib = *l;
    }
    if (bus && lib->is_open(bus) > 0) return ok_status();
    disconnect();
    if (int r = lib->open_system(&bus); r < 0) {
      bus = nullptr;
      return errno_status(-r, "systemd: connect to the system bus", Code::unavailable);
    }
    if (int r = lib->match_signal(bus, &job_slot, kDestination, kPath, kManager, "JobRemoved", on_job_removed, this);
        r < 0) {
      disconnect();
      return errno_status(-r, "systemd: subscribe to JobRemoved", Code::unavailable);
    }
    return ok_status();
  }

  // Calls a Manager method built by `fill`; on a connection lost before the call, once more on a
  // new one. The reply is the caller's to unref.
  template <class Fill>
  Result<sd_bus_message*> call(const char* method, const std::string& what, Fill fill) BERTH_REQUIRES(mu) {
    return call_on(kPath, kManager, method, what, fill);
  }
  template <class Fill>
  Result<sd_bus_message*> call_on(const char* path, const char* interface, const char* method, const std::string& what,
                                  Fill fill) BERTH_REQUIRES(mu) {
    for (int attempt = 0;; ++attempt) {
      if (Status s = connect(); !s.ok()) return s.context(what);
      sd_bus_message* m = nullptr;
      int r = lib->new_method_call(bus, &m, kDestination, path, interface, method);
      if (r >= 0) {
        MessageBuilder b(*lib, m);
        fill(b);
        r = b.result();
      }
      if (r < 0) {
        if (m) lib->message_unref(m);
        return errno_status(-r, "systemd: " + what + ": build the " + method + " call");
      }
      sd_bus_error error = SD_BUS_ERROR_NULL;
      sd_bus_message* reply = nullptr;
      r = lib->call(bus, m, uint64_t(job_timeout.count()) * 1000, &error, &reply);
      lib->message_unref(m);
      if (r >= 0) return reply;
      std::string name = error.name ? error.name : "", message = error.message ? error.message : "";
      lib->error_free(&error);
      if (name.empty() && attempt == 0 && (r == -ECONNRESET || r == -ENOTCONN || r == -EPIPE)) {
        disconnect();
        continue;
      }
      Code code = name == "org.freedesktop.systemd1.NoSuchUnit" ? Code::not_found : Code::internal;
      if (name.empty()) return errno_status(-r, "systemd: " + what, code);
      return Status(code, "systemd: " + what + ": " + name + ": " + message);
    }
  }

  // Waits for the job a call's reply names ("o") to be removed, and says how it ended.
  Status wait_job(sd_bus_message* reply, const std::string& what) BERTH_REQUIRES(mu) {
    const char* job = nullptr;
    int r = lib->read(reply, "o", &job);
    std::string path = r >= 0 && job ? job : "";
    lib->message_unref(reply);
    if (path.empty()) return errno_status(r < 0 ? -r : EBADMSG, "systemd: " + what + ": read the job");
    auto deadline = std::chrono::steady_clock::now() + job_timeout;
    for (;;) {
      if (auto it = finished.find(path); it != finished.end()) {
        std::string result = it->second;
        finished.erase(it);
        if (result == "done") return ok_status();
        return internal_error("systemd: " + what + ": the job ended '" + result + "'");
      }
      r = lib->process(bus, nullptr);
      if (r < 0) {
        disconnect();
        return errno_status(-r, "systemd: " + what + ": wait for the job", Code::unavailable);
      }
      if (r > 0) continue;
      auto left = std::chrono::duration_cast<std::chrono::microseconds>(deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0)
        return deadline_exceeded("systemd: " + what + ": the job did not finish within " +
                                 std::to_string(job_timeout.count()) + " ms");
      if (r = lib->wait(bus, uint64_t(left.count())); r < 0 && r != -EINTR) {
        disconnect();
        return errno_status(-r, "systemd: " + what + ": wait for the job", Code::unavailable);
      }
    }
  }
};

SystemdUnits::SystemdUnits(std::chrono::milliseconds job_timeout) : bus_(std::make_unique<Bus>(job_timeout)) {}

SystemdUnits::~SystemdUnits() = default;

Status SystemdUnits::start_scope(const ScopeUnit& scope) {
  std::vector<UnitProperty> props = {
      {"Description", scope.description},
      {"Slice", scope.slice},
      {"Delegate", true},
      // Stopped by berth with its pod, not ordered before the node's shutdown by systemd.
      {"DefaultDependencies", false},
      // Collected also when it ends failed (its processes killed), so nothing of it stays listed.
      {"CollectMode", std::string("inactive-or-failed")},
      {"PIDs", std::vector<uint32_t>{static_cast<uint32_t>(scope.pid)}},
  };
  props.insert(props.end(), scope.properties.begin(), scope.properties.end());
  const std::string what = "start " + scope.name;
  MutexLock lock(bus_->mu);
  auto reply = bus_->call("StartTransientUnit", what, [&](MessageBuilder& b) {
    b.append("ss", scope.name.c_str(), "fail").properties(props).append("a(sa(sv))", 0);
  });
  if (!reply.ok()) return reply.status();
  return bus_->wait_job(*reply, what);
}

Status SystemdUnits::stop_unit(const std::string& name) {
  const std::string what = "stop " + name;
  MutexLock lock(bus_->mu);
  auto reply = bus_->call("StopUnit", what, [&](MessageBuilder& b) { b.append("ss", name.c_str(), "replace"); });
  Status s = reply.ok() ? bus_->wait_job(*reply, what) : reply.status();
  if (s.code() == Code::not_found) s = ok_status();
  if (!s.ok()) return s;
  // A unit that ended failed stays listed until this (or its collection) forgets it.
  auto reset = bus_->call("ResetFailedUnit", "reset " + name, [&](MessageBuilder& b) { b.append("s", name.c_str()); });
  if (reset.ok()) bus_->lib->message_unref(*reset);
  return ok_status();
}

Result<bool> SystemdUnits::unit_active(const std::string& name) {
  const std::string what = "look up " + name;
  MutexLock lock(bus_->mu);
  auto unit = bus_->call("GetUnit", what, [&](MessageBuilder& b) { b.append("s", name.c_str()); });
  if (!unit.ok()) return unit.status().code() == Code::not_found ? Result<bool>(false) : unit.status();
  const char* path = nullptr;
  int r = bus_->lib->read(*unit, "o", &path);
  std::string object = r >= 0 && path ? path : "";
  bus_->lib->message_unref(*unit);
  if (object.empty()) return errno_status(r < 0 ? -r : EBADMSG, "systemd: " + what + ": read the unit");
  auto state = bus_->call_on(object.c_str(), "org.freedesktop.DBus.Properties", "Get", what, [&](MessageBuilder& b) {
    b.append("ss", "org.freedesktop.systemd1.Unit", "ActiveState");
  });
  if (!state.ok()) return state.status();
  const char* value = nullptr;
  r = bus_->lib->read(*state, "v", "s", &value);
  std::string active = r >= 0 && value ? value : "";
  bus_->lib->message_unref(*state);
  if (active.empty()) return errno_status(r < 0 ? -r : EBADMSG, "systemd: " + what + ": read its ActiveState");
  return active == "active" || active == "reloading" || active == "activating";
}

Status SystemdUnits::set_properties(const std::string& name, const std::vector<UnitProperty>& properties) {
  MutexLock lock(bus_->mu);
  auto reply = bus_->call("SetUnitProperties", "set properties of " + name,
                          [&](MessageBuilder& b) { b.append("sb", name.c_str(), 1).properties(properties); });
  if (!reply.ok()) return reply.status();
  bus_->lib->message_unref(*reply);
  return ok_status();
}

}  // namespace berth
