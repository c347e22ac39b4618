// NriPlugins' plugins: the socket external plugins connect to, the programs of the plugin
// directory, each plugin's registration, configuration and first synchronisation, and the end
// of a plugin that failed. Threads: one accepts connections, one registers each new plugin (a
// plugin slow to register holds up no other), one (the janitor) ends plugins that went away.
#include <dirent.h>
#include <poll.h>
#include <signal.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>

#include <spdlog/spdlog.h>

#include "berth/file_text.h"
#include "berth/spawn.h"
#include "nri_plugins_impl.h"

namespace berth::nri {

namespace {

constexpr int32_t kValidEvents = (1 << (api::NRI_LAST - 1)) - 1;

bool valid_index(const std::string& idx) {
  return idx.size() == 2 && std::isdigit(static_cast<unsigned char>(idx[0])) &&
         std::isdigit(static_cast<unsigned char>(idx[1]));
}

bool valid_name(const std::string& name) {
  return !name.empty() && std::all_of(name.begin(), name.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '+' || c == '-';
  });
}

struct Discovered {
  std::string path, index, name, config;
};

// The plugin directory's programs, by name. One name not of the form NN-name fails the whole
// start, as the reference does: a plugin left out by a typo would go unnoticed.
Result<std::vector<Discovered>> discover(const std::string& dir, const std::string& config_dir) {
  std::vector<Discovered> out;
  std::error_code ec;
  if (!std::filesystem::exists(dir, ec)) return out;
  for (const auto& e : std::filesystem::directory_iterator(dir, ec)) {
    struct stat st {};
    if (::stat(e.path().c_str(), &st) != 0 || !S_ISREG(st.st_mode) || (st.st_mode & 0111) == 0) continue;
    const std::string file = e.path().filename();
    const auto dash = file.find('-');
    Discovered d{e.path(), file.substr(0, dash), dash == std::string::npos ? "" : file.substr(dash + 1), ""};
    if (dash == std::string::npos || !valid_index(d.index) || !valid_name(d.name))
      return invalid_argument("nri plugin_dir " + dir + ": " + file +
                              ": not named NN-name (a two-digit index, a dash, a name)");
    for (const auto& candidate : {config_dir + "/" + file + ".conf", config_dir + "/" + d.name + ".conf"}) {
      auto text = read_file_bytes(candidate);
      if (text.ok()) {
        d.config = *text;
        break;
      }
    }
    out.push_back(std::move(d));
  }
  if (ec) return errno_status(ec.value(), "nri plugin_dir " + dir);
  std::sort(out.begin(), out.end(), [](const Discovered& a, const Discovered& b) { return a.path < b.path; });
  return out;
}

Result<UniqueFd> listen_on(const std::string& path) {
  std::error_code ec;
  const auto parent = std::filesystem::path(path).parent_path();
  std::filesystem::create_directories(parent, ec);
  if (ec) return errno_status(ec.value(), "nri socket_path: mkdir " + parent.string());
  ::chmod(parent.c_str(), 0700);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (path.size() >= sizeof addr.sun_path) return invalid_argument("nri socket_path: " + path + ": too long");
  path.copy(addr.sun_path, path.size());
  UniqueFd fd(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!fd) return errno_status(errno, "nri: socket");
  ::unlink(path.c_str());  // a stale socket of an earlier berthd
  if (::bind(fd.get(), reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0)
    return errno_status(errno, "nri socket_path: bind " + path);
  ::chmod(path.c_str(), 0600);
  if (::listen(fd.get(), 16) != 0) return errno_status(errno, "nri socket_path: listen " + path);
  return fd;
}

}  // namespace

Plugin::~Plugin() {
  conn.reset();
  if (pid > 0) {
    ::kill(pid, SIGKILL);
    while (::waitpid(pid, nullptr, 0) < 0 && errno == EINTR) {
    }
  }
}

std::vector<std::shared_ptr<Plugin>> NriPlugins::Impl::subscribed(api::Event event) const {
  std::vector<std::shared_ptr<Plugin>> out;
  MutexLock lock(mu);
  for (const auto& p : plugins)
    if (p->events & event_bit(event)) out.push_back(p);
  return out;
}

void NriPlugins::Impl::disconnect(const Plugin* p, const std::string& why) {
  // No reference is taken here: called from the connection's reader thread (its on_closed), a
  // last reference dropped there would end the plugin on the very thread its end joins.
  std::string who;
  {
    MutexLock lock(mu);
    auto it = std::find_if(plugins.begin(), plugins.end(), [p](const auto& x) { return x.get() == p; });
    if (it == plugins.end()) return;  // not registered yet: its registrar ends it, or gone already
    who = (*it)->id();
    (*it)->conn->close(why);
    disconnected.push_back(std::move(*it));
    plugins.erase(it);
  }
  spdlog::warn("nri: plugin {} disconnected: {}", who, why);
  cv.notify_all();
}

Result<std::string> NriPlugins::Impl::serve(Plugin* p, const std::string& method, const std::string& request) {
  if (method == "RegisterPlugin") {
    api::RegisterPluginRequest req;
    if (!req.ParseFromString(request)) return invalid_argument("RegisterPlugin: the request does not parse");
    MutexLock lock(p->mu);
    if (p->registered) return failed_precondition("plugin " + p->id() + " is registered already");
    if (!p->launched) {
      // A launched plugin is who berthd started it as, whatever it says.
      if (!valid_name(req.plugin_name()))
        return invalid_argument("RegisterPlugin: plugin_name \"" + req.plugin_name() +
                                "\": empty or not of letters, digits, _ . + -");
      if (!valid_index(req.plugin_idx()))
        return invalid_argument("RegisterPlugin: plugin_idx \"" + req.plugin_idx() + "\": not two digits");
      p->name = req.plugin_name();
      p->index = req.plugin_idx();
      p->conn->rename("nri plugin " + p->id());
    }
    p->registered = true;
    p->cv.notify_all();
    return api::Empty().SerializeAsString();
  }
  if (method == "UpdateContainers") {
    api::UpdateContainersRequest req;
    if (!req.ParseFromString(request)) return invalid_argument("UpdateContainers: the request does not parse");
    {
      MutexLock lock(p->mu);
      if (!p->registered) return failed_precondition("UpdateContainers: the plugin has not registered");
    }
    api::UpdateContainersResponse resp;
    MutexLock events(events_mu);
    if (req.update_size() > 0 && opt.update) {
      std::vector<api::ContainerUpdate> updates(req.update().begin(), req.update().end());
      for (auto& failed : opt.update(updates)) *resp.add_failed() = std::move(failed);
    }
    for (const auto& e : req.evict())
      if (opt.evict) opt.evict(e, p->id());
    return resp.SerializeAsString();
  }
  return unimplemented("method " + method);
}

bool NriPlugins::Impl::bring_up(std::shared_ptr<Plugin> p) {
  auto fail = [&](const std::string& why) {
    std::string who;
    {
      MutexLock lock(p->mu);  // an external plugin's name is set by its RegisterPlugin
      who = p->id();
    }
    spdlog::warn("nri: plugin {}: {}; not used", who, why);
    p->conn->close(why);
    return false;
  };
  std::string unregistered;
  {
    MutexLock lock(p->mu);
    const auto deadline = std::chrono::steady_clock::now() + opt.registration_timeout;
    while (!p->registered && !p->conn->closed())
      if (p->cv.wait_until(lock.native(), deadline) == std::cv_status::timeout) break;
    if (!p->registered)
      unregistered = p->conn->closed()
                         ? "closed before it registered (" + p->conn->close_reason() + ")"
                         : "did not register in " + std::to_string(opt.registration_timeout.count()) + " ms";
  }
  if (!unregistered.empty()) return fail(unregistered);
  api::ConfigureRequest conf;
  {
    MutexLock lock(p->mu);
    conf.set_config(p->config);
  }
  conf.set_runtime_name(opt.runtime_name);
  conf.set_runtime_version(opt.runtime_version);
  conf.set_registration_timeout(opt.registration_timeout.count());
  conf.set_request_timeout(opt.request_timeout.count());
  auto answer = p->conn->call("Configure", conf.SerializeAsString(), opt.request_timeout);
  if (!answer.ok()) return fail("Configure: " + answer.status().message());
  api::ConfigureResponse configured;
  if (!configured.ParseFromString(*answer)) return fail("Configure: the answer does not parse");
  p->events = configured.events() == 0 ? kValidEvents : configured.events();
  if (p->events & ~kValidEvents) return fail("Configure: invalid plugin events " + std::to_string(configured.events()));

  MutexLock events(events_mu);
  if (Status s = synchronize(*p); !s.ok()) return fail("Synchronize: " + s.message());
  MutexLock lock(mu);
  if (stopping || p->conn->closed()) {
    p->conn->close("berthd stops");
    return false;
  }
  auto at = std::upper_bound(plugins.begin(), plugins.end(), p,
                             [](const auto& a, const auto& b) { return a->index < b->index; });
  plugins.insert(at, p);
  spdlog::info("nri: plugin {} registered ({}, events {:#x})", p->id(), p->launched ? "started by berthd" : "external",
               p->events);
  return true;
}

void NriPlugins::Impl::register_in_background(std::shared_ptr<Plugin> p) {
  MutexLock lock(mu);
  auto done = std::make_shared<std::atomic<bool>>(false);
  registrars.push_back({std::thread([this, p, done] {
                          bring_up(p);
                          done->store(true);
                          cv.notify_all();
                        }),
                        done, p});
}

std::shared_ptr<Plugin> NriPlugins::Impl::connect(UniqueFd socket, std::string name, std::string index, bool launched) {
  auto p = std::make_shared<Plugin>();
  p->name = std::move(name);
  p->index = std::move(index);
  p->launched = launched;
  Plugin* raw = p.get();
  p->conn = std::make_unique<PluginConnection>(
      std::move(socket), launched ? "nri plugin " + p->id() : "nri plugin (connecting)",
      [this, raw](const std::string& method, const std::string& request) { return serve(raw, method, request); });
  // Runs on the connection's reader thread, which the plugin's end joins: it touches the plugin's
  // members but not its connection.
  p->conn->on_closed([this, raw](const std::string& why) {
    {
      MutexLock lock(raw->mu);
      raw->cv.notify_all();
    }
    disconnect(raw, why);
  });
  p->conn->start();
  return p;
}

void NriPlugins::Impl::accept_loop() {
  for (;;) {
    pollfd fds[2] = {{listener.get(), POLLIN, 0}, {stop_event.get(), POLLIN, 0}};
    if (::poll(fds, 2, -1) < 0) {
      if (errno == EINTR) continue;
      spdlog::error("nri: poll the socket: {}", std::strerror(errno));
      return;
    }
    if (fds[1].revents) return;
    UniqueFd conn(::accept4(listener.get(), nullptr, nullptr, SOCK_CLOEXEC));
    if (!conn) continue;
    register_in_background(connect(std::move(conn), "", "", false));
  }
}

void NriPlugins::Impl::janitor_loop() {
  MutexLock lock(mu);
  for (;;) {
    std::vector<std::shared_ptr<Plugin>> gone;
    gone.swap(disconnected);
    std::vector<std::thread> finished;
    for (auto it = registrars.begin(); it != registrars.end();)
      if (it->done->load()) {
        finished.push_back(std::move(it->thread));
        gone.push_back(std::move(it->plugin));  // ended below, not under the lock
        it = registrars.erase(it);
      } else {
        ++it;
      }
    if (!gone.empty() || !finished.empty()) {
      lock.unlock();
      gone.clear();  // joins their connections' threads, kills and reaps what berthd started
      for (auto& t : finished) t.join();
      lock.lock();
      continue;
    }
    if (stopping && registrars.empty()) return;
    cv.wait(lock.native());
  }
}

Result<std::unique_ptr<NriPlugins>> NriPlugins::start(NriOptions options) {
  auto impl = std::make_unique<Impl>();
  impl->opt = std::move(options);
  std::vector<Discovered> programs;
  if (!impl->opt.plugin_dir.empty()) {
    auto found = discover(impl->opt.plugin_dir, impl->opt.plugin_config_dir);
    if (!found.ok()) return found.status();
    programs = std::move(*found);
  }
  if (!impl->opt.socket_path.empty()) {
    auto fd = listen_on(impl->opt.socket_path);
    if (!fd.ok()) return fd.status();
    impl->listener = std::move(*fd);
  }
  impl->stop_event = UniqueFd(::eventfd(0, EFD_CLOEXEC));
  if (!impl->stop_event) return errno_status(errno, "nri: eventfd");
  impl->janitor = std::thread([i = impl.get()] { i->janitor_loop(); });
  std::vector<std::string> required = impl->opt.required_plugins;
  std::unique_ptr<NriPlugins> self(new NriPlugins(std::move(impl)));
  self->required_plugins_ = std::move(required);
  Impl& i = *self->impl_;

  // The directory's plugins are up (or left out) before berthd serves: the first pod sees them.
  std::vector<std::thread> launches;
  for (const auto& d : programs) {
    int pair[2];
    if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) != 0)
      return errno_status(errno, "nri: socketpair for " + d.path);
    UniqueFd ours(pair[0]), theirs(pair[1]);
    auto pid = spawn_process({.argv = {d.path},
                              .stdio = {-1, STDERR_FILENO, STDERR_FILENO},
                              .extra_fds = {theirs.get()},
                              .env = std::vector<std::string>{"NRI_PLUGIN_NAME=" + d.name, "NRI_PLUGIN_IDX=" + d.index,
                                                              "NRI_PLUGIN_SOCKET=3"}});
    if (!pid.ok()) {
      spdlog::warn("nri: plugin {}: cannot start: {}", d.path, pid.status().message());
      continue;
    }
    auto p = i.connect(std::move(ours), d.name, d.index, true);
    p->pid = *pid;
    {
      MutexLock lock(p->mu);
      p->config = d.config;
    }
    launches.emplace_back([&i, p = std::move(p)]() mutable { i.bring_up(std::move(p)); });
  }
  for (auto& t : launches) t.join();
  if (i.listener) i.acceptor = std::thread([&i] { i.accept_loop(); });
  return self;
}

NriPlugins::NriPlugins(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

NriPlugins::~NriPlugins() {
  Impl& i = *impl_;
  uint64_t one = 1;
  if (::write(i.stop_event.get(), &one, sizeof one) < 0) spdlog::warn("nri: stop the socket's loop: {}", errno);
  if (i.acceptor.joinable()) i.acceptor.join();
  std::vector<std::shared_ptr<Plugin>> all;
  {
    MutexLock lock(i.mu);
    i.stopping = true;
    all.swap(i.plugins);
    i.disconnected.insert(i.disconnected.end(), all.begin(), all.end());
    // Registrars still waiting end when their connections do.
    for (auto& r : i.registrars) all.push_back(r.plugin);
  }
  for (auto& p : all) p->conn->close("berthd stops");
  all.clear();
  i.cv.notify_all();
  i.janitor.join();
  if (!i.opt.socket_path.empty()) ::unlink(i.opt.socket_path.c_str());
}

bool NriPlugins::wants(api::Event event) const {
  MutexLock lock(impl_->mu);
  for (const auto& p : impl_->plugins)
    if (p->events & event_bit(event)) return true;
  return false;
}

std::vector<PluginInfo> NriPlugins::plugins() const {
  MutexLock lock(impl_->mu);
  std::vector<PluginInfo> out;
  for (const auto& p : impl_->plugins) out.push_back({p->name, p->index, p->events, p->launched});
  return out;
}

}  // namespace berth::nri
