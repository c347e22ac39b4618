// berthd's configuration: embedded defaults, then /etc/berth/berth.toml (or --config), then the
// drop-in files <that file>.d/*.toml in lexical order, then flags. Every key is documented in
// packaging/berth.toml; load_config refuses unknown keys, wrong types and impossible values with a
// message naming the key and the file that set it.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <vector>
#include <string>

#include <nlohmann/json.hpp>

#include "berth/registry_settings.h"
#include "berth/status.h"

namespace berth {

inline constexpr const char* kDefaultConfigPath = "/etc/berth/berth.toml";

struct RuntimeHandlerConfig {
  std::string path;  // the OCI runtime binary: a name looked up in PATH, or an absolute path
  std::string root;  // the runtime's own state dir (--root); empty: <state>/runtime/<handler>
  // Whether its containers are namespaced host processes, so that berth may exec into them and
  // start their pause itself (RuntimeHandler::host_processes); unset ("auto"): runc and crun are.
  std::optional<bool> host_processes = std::nullopt;
  // How long one runtime command (create, delete, kill, state, update) may take before it is
  // killed and the rpc goes on without it (RuntimeHandler::timeout).
  int timeout_seconds = 60;
};

// One resource limit every container starts with (a process's rlimit): -1 is unlimited.
struct UlimitConfig {
  int64_t soft = 0;
  int64_t hard = 0;
  bool operator==(const UlimitConfig&) const = default;
};

// One scope of the image signature policy: insecureAcceptAnything, reject or signedBy (with keys).
struct SignatureScopeConfig {
  std::string type = "signedBy";
  std::vector<std::string> keys;  // PEM public keys (ECDSA P-256, Ed25519): absolute paths
  bool operator==(const SignatureScopeConfig&) const = default;
};

// The names default_ulimits takes: setrlimit(2)'s resources, lowercase, without RLIMIT_.
const std::vector<std::string>& ulimit_names();

// [nri]: NRI plugins (containerd/nri v0.12.2's protocol). Off unless enabled; the paths and
// timeouts are the reference implementation's defaults.
struct NriConfig {
  bool enable = false;
  std::string socket_path = "/var/run/nri/nri.sock";   // where external plugins connect; "": none
  std::string plugin_path = "/opt/nri/plugins";        // NN-name programs berthd starts
  std::string plugin_config_path = "/etc/nri/conf.d";  // their NN-name.conf or name.conf
  int plugin_registration_timeout_ms = 5000;
  int plugin_request_timeout_ms = 2000;
  // Plugins (by name) without which no container is created: one not running fails the create.
  std::vector<std::string> required_plugins;
  bool operator==(const NriConfig&) const = default;
};

struct Config {
  std::string source = "(embedded defaults)";  // the main file (the first one read)
  std::vector<std::string> files;              // every file read, in merge order
  std::map<std::string, std::string> origins;  // dotted key ("registries.<host>.mirrors") -> the file that set it last
  std::string socket = "/run/berth/berth.sock";
  std::string root = "/var/lib/berth";  // durable state
  std::string state = "/run/berth";     // runtime state, gone after a reboot
  // Image layers and content on a filesystem of their own (KEP-4191's split image filesystem);
  // containers' writable layers stay under root. Empty: root.
  std::string image_root;
  std::string log_level = "info";
  std::string cgroup_driver = "cgroupfs";
  std::string default_runtime = "runc";
  std::map<std::string, RuntimeHandlerConfig> runtimes{{"runc", {"runc", ""}}};
  int shutdown_timeout_seconds = 10;              // in-flight calls get this long after SIGTERM
  int max_concurrent_rpcs = 256;                  // gRPC calls running at once (per connection; threads: +2 pollers)
  std::string metrics_address;                    // host:port of the Prometheus /metrics endpoint; empty: off
  std::string streaming_address = "127.0.0.1:0";  // Exec/Attach/PortForward URLs; port 0: a free one
  int streaming_token_ttl_seconds = 60;           // an unused streaming URL expires
  int streaming_idle_timeout_seconds = 14400;     // a streaming session with no traffic is closed (kubelet: 4 h)
  int image_pull_idle_timeout_seconds = 60;       // a pull receiving no bytes this long is aborted
  int max_parallel_layer_fetches = 3;             // layer downloads at once, over all pulls
  int image_pull_timeout_seconds = 1800;          // a pull still running this long is given up; 0: never
  int max_image_layers = 128;                     // images with more layers are refused before any fetch
  int image_pull_keep_for_retry_seconds = 3600;   // what a failed pull fetched and unpacked is kept this long
  int image_pull_keep_for_retry_mib = 2048;       // and up to this much, the newest first
  int image_pull_progress_log_seconds = 10;       // a running pull logs how far it has come this often; 0: never
  int image_pull_helper_idle_seconds = 60;        // a berth-pull helper waits this long for the next pull; 0: not
  // The node's registry credentials (auths, credHelpers, credsStore: docker's config.json and
  // containers-auth.json format), for pulls that bring none; empty: none.
  std::string registry_auth_file;
  // CRIU for CheckpointContainer and restores: a name looked up in PATH or a path; "" turns both off.
  std::string criu_path = "criu";
  int credential_helper_timeout_seconds = 10;  // a docker-credential-<name> still running is killed
  int credential_helper_cache_seconds = 300;   // a helper's answer is reused this long (less for a JWT's exp)
  int disk_usage_refresh_seconds = 10;         // writable layers and the image store are re-measured this often
  int stats_collection_period_seconds = 10;    // cgroup figures sampled in the background this often; 0: per call
  int event_subscriber_backlog = 1000;         // GetContainerEvents: a subscriber this far behind is dropped
  std::map<std::string, RegistryHostSettings> registries;
  std::string cni_conf_dir = "/etc/cni/net.d";
  std::vector<std::string> cni_plugin_dirs{"/opt/cni/bin", "/usr/lib/cni"};
  int cni_plugin_timeout_seconds = 30;                                 // per plugin exec; a hung plugin is killed
  std::vector<std::string> cdi_spec_dirs{"/etc/cdi", "/var/run/cdi"};  // later dirs override earlier ones
  // By name ("nofile"): set in every container's process. nofile as containerd 2.x's containers
  // get it under systemd (its unit sets no LimitNOFILE: systemd's default 1024:524288): programs
  // that need more raise their soft limit, and select(2)'s 1024 stays safe by default.
  std::map<std::string, UlimitConfig> default_ulimits{{"nofile", {1024, 524288}}};
  // Devices a container is given (config.devices) are owned by its run_as_user/run_as_group
  // inside it, not by their host owner: containerd's and CRI-O's key of the same name.
  bool device_ownership_from_security_context = false;
  // Image references (or ids) kubelet's image GC must spare: reported pinned, refused by RemoveImage.
  std::vector<std::string> pinned_images;
  // Which images a pull may record: the rule of the longest matching scope ("host",
  // "host/repository" or a prefix of it), else the default one.
  std::string signature_policy_default = "insecureAcceptAnything";
  std::map<std::string, SignatureScopeConfig> signature_policy_scopes;
  // OTLP/HTTP endpoint ("http://host:port/v1/traces") spans of traced calls are sent to; empty: off.
  std::string tracing_endpoint;
  NriConfig nri;
  std::string sandbox_image;  // empty: the embedded berth-pause; else pulled, pinned and used  // by registry host:
                              // mirrors, insecure, ca_file
};

// Where the image store lives: image_root, or root when it is not set.
inline std::string image_store_root(const Config& c) { return c.image_root.empty() ? c.root : c.image_root; }

// Reads `path` over the defaults, then every *.toml of config_drop_in_dir(path) in lexical order:
// a later file's key wins, tables merge key by key, arrays are replaced whole. An empty path means
// kDefaultConfigPath when that file exists (its drop-ins are read either way); a path that was
// asked for must exist. Errors name the file and the key.
Result<Config> load_config(const std::string& path);

// "<path>.d" ("/etc/berth/berth.toml.d" for an empty path).
std::string config_drop_in_dir(const std::string& path);

// The file that set `key` (or a key below it) last; the last file read when none did.
std::string config_key_origin(const Config& config, const std::string& key);

// The effective configuration as TOML that load_config reads back to the same values: every key,
// each set from a file followed by a comment naming that file (berthd --print-config).
std::string config_to_toml(const Config& config);

// Parses TOML text as if read from `source` (used by load_config and by the tests).
Result<Config> parse_config(const std::string& text, const std::string& source);

// Checks cross-key rules (paths absolute, default runtime known); flags are applied before it.
Status validate_config(const Config& config);

nlohmann::json config_to_json(const Config& config);

}  // namespace berth
