// NriPlugins' state, shared by its two halves: plugin_registry.cc (connections, launches,
// registration, synchronisation, disconnection) and nri_events.cc (the events sent to plugins).
#pragma once

#include <sys/types.h>

#include <atomic>
#include <condition_variable>
#include <memory>
#include <thread>
#include <vector>

#include "berth/mutex.h"
#include "berth/nri_plugins.h"
#include "berth/unique_fd.h"
#include "plugin_connection.h"

namespace berth::nri {

struct Plugin {
  std::string name, index;
  bool launched = false;
  pid_t pid = 0;  // the launched program, reaped when the plugin goes
  std::unique_ptr<PluginConnection> conn;
  int32_t events = 0;
  // Set once a dedicated event method answered UNIMPLEMENTED: StateChange from then on.
  bool state_change = false;

  // Registration: RegisterPlugin arrived (or the connection ended first).
  Mutex mu;
  std::condition_variable cv;
  bool registered BERTH_GUARDED_BY(mu) = false;
  std::string config BERTH_GUARDED_BY(mu);  // what Configure passes: its conf.d file for a launched one

  std::string id() const { return index + "-" + name; }
  ~Plugin();  // the connection first (its threads joined), then the program killed and reaped
};

struct NriPlugins::Impl {
  NriOptions opt;
  UniqueFd listener;
  UniqueFd stop_event;  // an eventfd the accept loop polls beside the listener

  // Events and synchronisation of a new plugin are one after another, as in the reference.
  Mutex events_mu;
  mutable Mutex mu;
  std::condition_variable cv;
  std::vector<std::shared_ptr<Plugin>> plugins BERTH_GUARDED_BY(mu);       // registered, in index order
  std::vector<std::shared_ptr<Plugin>> disconnected BERTH_GUARDED_BY(mu);  // for the janitor
  struct Registrar {
    std::thread thread;
    std::shared_ptr<std::atomic<bool>> done;
    std::shared_ptr<Plugin> plugin;  // closed by a stop that comes before its registration ends
  };
  std::vector<Registrar> registrars BERTH_GUARDED_BY(mu);
  bool stopping BERTH_GUARDED_BY(mu) = false;
  std::thread acceptor, janitor;

  // The registered plugins subscribed to `event`, in index order.
  std::vector<std::shared_ptr<Plugin>> subscribed(api::Event event) const;
  // Takes a plugin out (a fatal failure, or its connection ended); the janitor ends it.
  void disconnect(const Plugin* p, const std::string& why);
  // A plugin on a connected socket, its Runtime service served by serve().
  std::shared_ptr<Plugin> connect(UniqueFd socket, std::string name, std::string index, bool launched);
  // Registration, configuration and synchronisation of a connected plugin; false when it failed
  // (logged, the plugin ended).
  bool bring_up(std::shared_ptr<Plugin> p);
  void register_in_background(std::shared_ptr<Plugin> p);
  Result<std::string> serve(Plugin* p, const std::string& method, const std::string& request);
  // The pods and containers that exist, to a plugin that just registered (under events_mu), and
  // the updates it answers with applied.
  Status synchronize(Plugin& p);
  // The merged adjustment of a new container shown to the plugins subscribed to validation; any
  // rejection, error or silence fails the create.
  Status validate(const api::PodSandbox& pod, const api::Container& pristine, const CreateAdjustment& adjusted);
  void accept_loop();
  void janitor_loop();
};

}  // namespace berth::nri
