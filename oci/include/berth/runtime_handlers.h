// The runtime handler table: handler name -> OCI runtime binary and --root, and what each handler
// can do on this host. The one answer to "which runtime runs handler X, and may it do Y", shared
// by sandboxes, containers (which of rro or berthd's own read-only copy), Status (the features it
// advertises) and the start-up sweep, with one error text for an unknown handler.
//
// A handler's features come from its runtime (runtime_features.h) and from this host's facts,
// which berthd probes once at start (HostFeatures). Each runtime is asked when berthd first looks
// at the handler (run_daemon does so for every handler at start) and again only when its binary
// changed: every features() call stats the binary (a bare name is looked up in PATH) and answers
// from the cache while the file's device, inode, size and mtime are those of the last probe. So a
// Status call execs nothing unless a binary was replaced since the last call; then that one call
// probes (two execs at most, each bounded by a timeout), as RuntimeProbe does for RuntimeReady.
// Copies of the table share it and the cache: a reload's replace() reaches every holder.
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "berth/oci_runtime.h"
#include "berth/status.h"

namespace berth {

struct RuntimeHandler {
  std::string name;
  std::string binary;
  std::string root;  // the runtime's --root
  // Whether the runtime runs containers as namespaced host processes, as the operator set it;
  // unset: as its --version says (runc and crun do).
  std::optional<bool> host_processes = std::nullopt;
  std::chrono::seconds timeout{60};  // per runtime command (OciRuntime)
};

// What this host offers any handler; berthd probes both once at start.
struct HostFeatures {
  // Linux 5.12+: mount_setattr makes a mount tree read-only in one step. A runtime's `rro` is that
  // call too, so without it no handler can honour Mount.recursive_read_only.
  bool mount_setattr = false;
  // berthd's start-up probe built an overlay over an id-mapped layer: pods may have user
  // namespaces of their own (probe_idmapped_overlay).
  bool idmapped_overlay = false;
};

// One handler on this host. The last two are what Status advertises: true only when the handler's
// runtime is really there and it and the host can do it.
struct HandlerFeatures {
  bool runtime_found = false;  // the binary exists, is executable and answered `features` or `--version`
  bool rro_option = false;     // the runtime lists the `rro` mount option: it makes the mount itself
  bool rro_copy = false;       // berthd can make the recursively read-only copy (HostFeatures::mount_setattr)
  bool recursive_read_only_mounts = false;  // runtime_found, and rro_copy (either way needs mount_setattr)
  bool user_namespaces = false;             // runtime_found, it joins a user namespace by path, and idmapped_overlay
  // runtime_found, and its containers are namespaced host processes (RuntimeHandler::host_processes,
  // else the runtime is runc or crun): only then do berth-exec (ExecSync) and berth-pause-launch
  // do what the runtime would. Any other runtime (a sandboxing one: gVisor, Kata, Wasm or VM
  // flavours) gets every exec and every pause through itself, so nothing runs outside its boundary.
  bool host_processes = false;
  // Which runtime answered (RuntimeFeatures::identity: "runc", "crun", ...); empty when unknown.
  std::string runtime;
};

class RuntimeHandlers {
 public:
  RuntimeHandlers();
  // `default_name` must be one of `handlers` (config checks it).
  RuntimeHandlers(std::vector<RuntimeHandler> handlers, std::string default_name, bool systemd_cgroup,
                  HostFeatures host = {});

  // "" is the default handler. An unknown one: INVALID_ARGUMENT naming the request field
  // runtime_handler and the known handlers. A handler a reload removed still answers here, so
  // the pods and containers made with it can be stopped and removed.
  Result<OciRuntime> runtime_for(const std::string& handler) const;
  // OK when new pods may use `handler` ("" the default): it is configured now. INVALID_ARGUMENT
  // naming runtime_handler and the known handlers otherwise (also for one a reload removed).
  Status accepts_new(const std::string& handler) const;
  // The configured handler, or one a reload removed; nullopt when unknown. "" is the default.
  std::optional<RuntimeHandler> find(const std::string& handler) const;
  // The name recorded for a request's handler: "" becomes the default's name.
  std::string resolve(const std::string& handler) const;

  // What `handler` ("" the default) can do here (see the top of this file for when it execs). An
  // unknown handler, or one whose binary is missing, not executable or does not run, can do nothing.
  HandlerFeatures features(const std::string& handler) const;

  std::string default_name() const;
  // The configured handlers (not those a reload removed), in the configuration's order.
  std::vector<RuntimeHandler> all() const;
  bool systemd_cgroup() const { return systemd_cgroup_; }
  const HostFeatures& host() const { return host_; }

  // A reload's new table, seen by every copy of this one at once. A handler no longer listed is
  // kept for what was made with it (runtime_for, find) but refused to new pods; listed again, it
  // is a configured one again. Its root must not change while anything of it runs (the reload
  // refuses that before it gets here).
  void replace(std::vector<RuntimeHandler> handlers, std::string default_name);

 private:
  struct Table;
  struct FeatureCache;

  bool systemd_cgroup_ = false;
  HostFeatures host_;
  std::shared_ptr<Table> table_;
  std::shared_ptr<FeatureCache> cache_;
};

}  // namespace berth
