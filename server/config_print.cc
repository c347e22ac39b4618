// config_to_toml: the merged configuration written back as TOML (berthd --print-config), so an
// operator sees what the main file, the drop-ins and the flags add up to, and where each value
// came from. The text is valid berth.toml: load_config reads it back to the same values.
#include <cctype>
#include <cstdio>
#include <sstream>

#include "berth/config.h"

namespace berth {
namespace {

// A TOML basic string: quotes, backslashes and control characters escaped; UTF-8 kept as is.
std::string quoted(const std::string& s) {
  std::string out = "\"";
  for (unsigned char ch : s) {
    switch (ch) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      case '\r': out += "\\r"; break;
      default:
        if (ch < 0x20 || ch == 0x7f) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04X", ch);
          out += buf;
        } else {
          out += static_cast<char>(ch);
        }
    }
  }
  return out + "\"";
}

// A key as TOML needs it: bare when it can be, else quoted.
std::string key_text(const std::string& k) {
  bool bare = !k.empty();
  for (unsigned char ch : k) bare = bare && (std::isalnum(ch) || ch == '_' || ch == '-');
  return bare ? k : quoted(k);
}

// A comment stays on its line whatever the file name holds.
std::string comment_text(std::string s) {
  for (char& ch : s)
    if (static_cast<unsigned char>(ch) < 0x20 || ch == 0x7f) ch = '?';
  return s;
}

class Writer {
 public:
  Writer(std::ostringstream& out, const Config& c) : out_(out), c_(c) {}

  void line(const std::string& origin_key, const std::string& key, const std::string& value) {
    out_ << key_text(key) << " = " << value;
    if (auto it = c_.origins.find(origin_key); it != c_.origins.end()) out_ << "  # " << comment_text(it->second);
    out_ << "\n";
  }
  void str(const std::string& path, const std::string& key, const std::string& v) { line(path, key, quoted(v)); }
  void integer(const std::string& path, const std::string& key, int v) { line(path, key, std::to_string(v)); }
  void boolean(const std::string& path, const std::string& key, bool v) { line(path, key, v ? "true" : "false"); }
  void strings(const std::string& path, const std::string& key, const std::vector<std::string>& v) {
    std::string text = "[";
    for (size_t i = 0; i < v.size(); ++i) text += (i ? ", " : "") + quoted(v[i]);
    line(path, key, text + "]");
  }
  // Top-level keys name themselves.
  void str(const char* key, const std::string& v) { str(key, key, v); }
  void integer(const char* key, int v) { integer(key, key, v); }
  void strings(const char* key, const std::vector<std::string>& v) { strings(key, key, v); }

 private:
  std::ostringstream& out_;
  const Config& c_;
};

}  // namespace

std::string config_to_toml(const Config& c) {
  std::ostringstream out;
  out << "# berthd's effective configuration: the embedded defaults";
  for (const auto& f : c.files) out << ", then " << comment_text(f);
  out << ".\n# A value set by a file (or a flag) is followed by a comment naming it.\n";
  Writer w(out, c);
  w.str("socket", c.socket);
  w.str("root", c.root);
  w.str("state", c.state);
  w.str("image_root", c.image_root);
  w.str("log_level", c.log_level);
  w.str("cgroup_driver", c.cgroup_driver);
  w.str("default_runtime", c.default_runtime);
  w.integer("shutdown_timeout_seconds", c.shutdown_timeout_seconds);
  w.integer("max_concurrent_rpcs", c.max_concurrent_rpcs);
  w.str("metrics_address", c.metrics_address);
  w.integer("image_pull_idle_timeout_seconds", c.image_pull_idle_timeout_seconds);
  w.integer("max_parallel_layer_fetches", c.max_parallel_layer_fetches);
  w.integer("image_pull_timeout_seconds", c.image_pull_timeout_seconds);
  w.integer("max_image_layers", c.max_image_layers);
  w.integer("image_pull_keep_for_retry_seconds", c.image_pull_keep_for_retry_seconds);
  w.integer("image_pull_keep_for_retry_mib", c.image_pull_keep_for_retry_mib);
  w.integer("image_pull_progress_log_seconds", c.image_pull_progress_log_seconds);
  w.integer("image_pull_helper_idle_seconds", c.image_pull_helper_idle_seconds);
  w.str("registry_auth_file", c.registry_auth_file);
  w.str("criu_path", c.criu_path);
  w.integer("credential_helper_timeout_seconds", c.credential_helper_timeout_seconds);
  w.integer("credential_helper_cache_seconds", c.credential_helper_cache_seconds);
  w.integer("disk_usage_refresh_seconds", c.disk_usage_refresh_seconds);
  w.integer("stats_collection_period_seconds", c.stats_collection_period_seconds);
  w.integer("event_subscriber_backlog", c.event_subscriber_backlog);
  w.str("streaming_address", c.streaming_address);
  w.integer("streaming_token_ttl_seconds", c.streaming_token_ttl_seconds);
  w.integer("streaming_idle_timeout_seconds", c.streaming_idle_timeout_seconds);
  w.str("cni_conf_dir", c.cni_conf_dir);
  w.strings("cni_plugin_dirs", c.cni_plugin_dirs);
  w.integer("cni_plugin_timeout_seconds", c.cni_plugin_timeout_seconds);
  w.strings("cdi_spec_dirs", c.cdi_spec_dirs);
  w.str("sandbox_image", c.sandbox_image);
  w.boolean("device_ownership_from_security_context", "device_ownership_from_security_context",
            c.device_ownership_from_security_context);
  w.str("tracing_endpoint", c.tracing_endpoint);
  w.strings("pinned_images", c.pinned_images);
  out << "\n[default_ulimits]\n";
  for (const auto& [name, u] : c.default_ulimits)
    w.line("default_ulimits." + name, name,
           "{ soft = " + std::to_string(u.soft) + ", hard = " + std::to_string(u.hard) + " }");
  for (const auto& [host, h] : c.registries) {
    out << "\n[registries." << key_text(host) << "]\n";
    std::string p = "registries." + host + ".";
    w.strings(p + "mirrors", "mirrors", h.mirrors);
    w.boolean(p + "insecure", "insecure", h.insecure);
    w.str(p + "ca_file", "ca_file", h.ca_file);
  }
  out << "\n[nri]\n";
  w.boolean("nri.enable", "enable", c.nri.enable);
  w.str("nri.socket_path", "socket_path", c.nri.socket_path);
  w.str("nri.plugin_path", "plugin_path", c.nri.plugin_path);
  w.str("nri.plugin_config_path", "plugin_config_path", c.nri.plugin_config_path);
  w.integer("nri.plugin_registration_timeout_ms", "plugin_registration_timeout_ms",
            c.nri.plugin_registration_timeout_ms);
  w.integer("nri.plugin_request_timeout_ms", "plugin_request_timeout_ms", c.nri.plugin_request_timeout_ms);
  w.strings("nri.required_plugins", "required_plugins", c.nri.required_plugins);
  out << "\n[signature_policy]\n";
  w.str("signature_policy.default", "default", c.signature_policy_default);
  for (const auto& [scope, s] : c.signature_policy_scopes) {
    out << "\n[signature_policy.scopes." << key_text(scope) << "]\n";
    std::string p = "signature_policy.scopes." + scope + ".";
    w.str(p + "type", "type", s.type);
    w.strings(p + "keys", "keys", s.keys);
  }
  for (const auto& [name, h] : c.runtimes) {
    out << "\n[runtimes." << key_text(name) << "]\n";
    std::string p = "runtimes." + name + ".";
    w.str(p + "path", "path", h.path);
    w.str(p + "root", "root", h.root);
    w.integer(p + "timeout_seconds", "timeout_seconds", h.timeout_seconds);
  }
  return out.str();
}

}  // namespace berth
