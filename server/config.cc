// TOML config loading (toml++). toml++ reports syntax errors by exception; they are caught here
// and turned into a Status, so nothing escapes the module.
#include "berth/config.h"

#include <sys/stat.h>

#include <cstring>
#include <fstream>
#include <set>
#include <sstream>

// toml++ 3.3.0 (Debian 12) asserts on a table header without a key ("[" then a newline): with
// assertions on that would abort berthd on a typo. Its parser reports the error itself when the
// assertion is a no-op, as in release builds.
#define TOML_ASSERT(expr) static_cast<void>(0)
#include <toml++/toml.h>

namespace berth {
namespace {

const std::set<std::string> kLogLevels{"trace", "debug", "info", "warn", "error", "critical", "off"};

// Walks one TOML table: each get_* consumes a known key; finish() reports any key left over.
class TableReader {
 public:
  TableReader(const toml::table& t, std::string prefix, const std::string& source, Status& err)
      : t_(t), prefix_(std::move(prefix)), source_(source), err_(err) {}

  void str(const char* key, std::string& out) {
    const toml::node* n = take(key);
    if (!n) return;
    if (auto v = n->value<std::string>(); n->is_string() && v) out = *v;
    else fail(key, "expected a string, got " + type_name(*n));
  }
  void integer(const char* key, int& out, long min, long max) {
    const toml::node* n = take(key);
    if (!n) return;
    if (!n->is_integer()) return fail(key, "expected an integer, got " + type_name(*n));
    long v = n->as_integer()->get();
    if (v < min || v > max)
      return fail(key, "must be between " + std::to_string(min) + " and " + std::to_string(max) +
                           ", got " + std::to_string(v));
    out = static_cast<int>(v);
  }
  void boolean(const char* key, bool& out) {
    const toml::node* n = take(key);
    if (!n) return;
    if (!n->is_boolean()) return fail(key, "expected true or false, got " + type_name(*n));
    out = n->as_boolean()->get();
  }
  void strings(const char* key, std::vector<std::string>& out) {
    const toml::node* n = take(key);
    if (!n) return;
    if (!n->is_array()) return fail(key, "expected an array of strings, got " + type_name(*n));
    std::vector<std::string> v;
    for (const auto& e : *n->as_array()) {
      if (!e.is_string()) return fail(key, "expected an array of strings, it holds " + type_name(e));
      v.push_back(*e.value<std::string>());
    }
    out = std::move(v);
  }
  const toml::table* table(const char* key) {
    const toml::node* n = take(key);
    if (!n) return nullptr;
    if (!n->is_table()) {
      fail(key, "expected a table, got " + type_name(*n));
      return nullptr;
    }
    return n->as_table();
  }
  void one_of(const char* key, std::string& out, const std::set<std::string>& allowed) {
    str(key, out);
    if (!err_.ok() || allowed.count(out)) return;
    std::string list;
    for (const auto& a : allowed) list += (list.empty() ? "" : ", ") + a;
    fail(key, "must be one of " + list + ", got \"" + out + "\"");
  }
  void finish() {
    if (!err_.ok()) return;
    for (const auto& [k, v] : t_) {
      if (!seen_.count(std::string(k.str()))) {
        err_ = invalid_argument("config " + source_ + ": unknown key '" + name(k.str()) + "'");
        return;
      }
    }
  }
  std::string name(std::string_view key) const { return prefix_ + std::string(key); }
  void fail(std::string_view key, const std::string& why) {
    if (err_.ok()) err_ = invalid_argument("config " + source_ + ": key '" + name(key) + "': " + why);
  }

 private:
  const toml::node* take(const char* key) {
    seen_.insert(key);
    if (!err_.ok()) return nullptr;
    return t_.get(key);
  }
  static std::string type_name(const toml::node& n) {
    switch (n.type()) {
      case toml::node_type::string: return "a string";
      case toml::node_type::integer: return "an integer";
      case toml::node_type::floating_point: return "a float";
      case toml::node_type::boolean: return "a boolean";
      case toml::node_type::table: return "a table";
      case toml::node_type::array: return "an array";
      default: return "a date/time";
    }
  }

  const toml::table& t_;
  std::string prefix_;
  const std::string& source_;
  Status& err_;
  std::set<std::string> seen_;
};

Status read_config(const toml::table& root, const std::string& source, Config& c) {
  Status err;
  TableReader r(root, "", source, err);
  r.str("socket", c.socket);
  r.str("root", c.root);
  r.str("state", c.state);
  r.one_of("log_level", c.log_level, kLogLevels);
  r.one_of("cgroup_driver", c.cgroup_driver, {"cgroupfs", "systemd"});
  r.str("default_runtime", c.default_runtime);
  r.integer("shutdown_timeout_seconds", c.shutdown_timeout_seconds, 0, 3600);
  r.integer("max_concurrent_rpcs", c.max_concurrent_rpcs, 4, 4096);
  r.str("metrics_address", c.metrics_address);
  r.str("streaming_address", c.streaming_address);
  r.integer("streaming_token_ttl_seconds", c.streaming_token_ttl_seconds, 1, 3600);
  r.integer("streaming_idle_timeout_seconds", c.streaming_idle_timeout_seconds, 1, 86400 * 7);
  r.integer("image_pull_idle_timeout_seconds", c.image_pull_idle_timeout_seconds, 1, 3600);
  r.integer("max_parallel_layer_fetches", c.max_parallel_layer_fetches, 1, 64);
  r.integer("image_pull_timeout_seconds", c.image_pull_timeout_seconds, 0, 86400);
  r.integer("max_image_layers", c.max_image_layers, 1, 500);
  r.integer("disk_usage_refresh_seconds", c.disk_usage_refresh_seconds, 1, 3600);
  r.integer("event_subscriber_backlog", c.event_subscriber_backlog, 1, 1000000);
  r.str("sandbox_image", c.sandbox_image);
  r.str("cni_conf_dir", c.cni_conf_dir);
  r.strings("cni_plugin_dirs", c.cni_plugin_dirs);
  r.integer("cni_plugin_timeout_seconds", c.cni_plugin_timeout_seconds, 1, 600);
  if (const toml::table* regs = r.table("registries")) {
    for (const auto& [name, node] : *regs) {
      std::string key(name.str());
      if (!node.is_table()) {
        r.fail("registries." + key, "expected a table ([registries.\"" + key + "\"])");
        break;
      }
      RegistryHostSettings h;
      TableReader hr(*node.as_table(), "registries." + key + ".", source, err);
      hr.strings("mirrors", h.mirrors);
      hr.boolean("insecure", h.insecure);
      hr.str("ca_file", h.ca_file);
      hr.finish();
      for (const auto& m : h.mirrors)
        if (m.empty() || m.find(' ') != std::string::npos) hr.fail("mirrors", "\"" + m + "\" is not a registry URL");
      if (!h.ca_file.empty() && h.ca_file[0] != '/') hr.fail("ca_file", "must be an absolute path");
      c.registries[key] = h;
    }
  }
  if (const toml::table* rt = r.table("runtimes")) {
    for (const auto& [name, node] : *rt) {
      std::string key(name.str());
      if (!node.is_table()) {
        r.fail("runtimes." + key, "expected a table ([runtimes." + key + "])");
        break;
      }
      RuntimeHandlerConfig h = c.runtimes.count(key) ? c.runtimes[key] : RuntimeHandlerConfig{key, ""};
      TableReader hr(*node.as_table(), "runtimes." + key + ".", source, err);
      hr.str("path", h.path);
      hr.str("root", h.root);
      hr.finish();
      if (h.path.empty()) hr.fail("path", "must not be empty");
      c.runtimes[key] = h;
    }
  }
  r.finish();
  if (!err.ok()) return err;
  return validate_config(c).context("config " + source);
}

}  // namespace

Status validate_config(const Config& c) {
  auto absolute = [](const std::string& key, const std::string& p) -> Status {
    if (p.empty() || p[0] != '/') return invalid_argument("key '" + key + "': must be an absolute path, got \"" + p + "\"");
    return {};
  };
  for (auto [k, v] : {std::pair{"socket", &c.socket}, {"root", &c.root}, {"state", &c.state}}) {
    if (Status s = absolute(k, *v); !s.ok()) return s;
  }
  if (!kLogLevels.count(c.log_level))
    return invalid_argument("key 'log_level': unknown level \"" + c.log_level + "\"");
  if (!c.runtimes.count(c.default_runtime)) {
    std::string known;
    for (const auto& [k, v] : c.runtimes) known += (known.empty() ? "" : ", ") + k;
    return invalid_argument("key 'default_runtime': \"" + c.default_runtime +
                            "\" is not a configured runtime (known: " + known + ")");
  }
  if (Status s = absolute("cni_conf_dir", c.cni_conf_dir); !s.ok()) return s;
  for (const auto& d : c.cni_plugin_dirs)
    if (Status s = absolute("cni_plugin_dirs", d); !s.ok()) return s;
  for (const auto& [name, h] : c.runtimes) {
    if (!h.root.empty() && h.root[0] != '/')
      return invalid_argument("key 'runtimes." + name + ".root': must be an absolute path");
  }
  return {};
}

namespace {

// toml++ 3.3.0 reaches __builtin_unreachable when it meets some non-ASCII characters
// (U+00A1..U+0499, U+FB06..U+FEFE) outside a string or a comment. berth.toml's keys and bare
// values are all ASCII, so any non-ASCII byte there is refused before toml++ sees the text. A
// quote opens a string only where TOML allows one (after '=', '[', ',', '{', '.' or at the start
// of a line); elsewhere it is a stray byte of a bare value, and what follows stays checked.
Status check_ascii_outside_strings(const std::string& text, const std::string& source) {
  size_t line = 1, line_start = 0;
  char prev = '\n';  // the last byte outside strings, blanks skipped
  auto starts = [&](size_t i, const char* s) { return text.compare(i, strlen(s), s) == 0; };
  for (size_t i = 0; i < text.size();) {
    char ch = text[i];
    bool opens_string = (ch == '"' || ch == '\'') && prev != 0 && std::strchr("\n=[,{.", prev) != nullptr;
    if (ch == '\n') {
      ++line;
      line_start = ++i;
      prev = '\n';
    } else if (ch == '#') {
      while (i < text.size() && text[i] != '\n') ++i;
    } else if (opens_string) {
      // Basic and literal, single- or multi-line; an unterminated one is toml++'s to report.
      std::string close = starts(i, ch == '"' ? "\"\"\"" : "'''") ? std::string(3, ch) : std::string(1, ch);
      i += close.size();
      while (i < text.size() && !starts(i, close.c_str())) {
        if (close.size() == 1 && text[i] == '\n') break;
        if (text[i] == '\n') {
          ++line;
          line_start = i + 1;
        }
        bool escape = ch == '"' && text[i] == '\\' && i + 1 < text.size() && text[i + 1] != '\n';
        i += escape ? 2 : 1;
      }
      if (i < text.size() && text[i] != '\n') i += close.size();
      prev = ch;
    } else if (static_cast<unsigned char>(ch) >= 0x80) {
      return invalid_argument("config " + source + ": line " + std::to_string(line) + ", column " +
                              std::to_string(i - line_start + 1) +
                              ": only ASCII is allowed outside strings and comments");
    } else {
      if (ch != ' ' && ch != '\t' && ch != '\r') prev = ch;
      ++i;
    }
  }
  return {};
}

}  // namespace

Result<Config> parse_config(const std::string& text, const std::string& source) {
  if (Status s = check_ascii_outside_strings(text, source); !s.ok()) return s;
  Config c;
  c.source = source;
  toml::table root;
  try {
    root = toml::parse(text, source);
  } catch (const toml::parse_error& e) {
    std::ostringstream m;
    m << "config " << source << ": line " << e.source().begin.line << ", column "
      << e.source().begin.column << ": " << e.description();
    return invalid_argument(m.str());
  }
  if (Status s = read_config(root, source, c); !s.ok()) return s;
  return c;
}

Result<Config> load_config(const std::string& path) {
  std::string file = path;
  struct stat st;
  if (file.empty()) {
    if (stat(kDefaultConfigPath, &st) != 0) return Config{};
    file = kDefaultConfigPath;
  }
  std::ifstream in(file);
  if (!in) return errno_status(errno, "config " + file + ": open", Code::invalid_argument);
  std::stringstream buf;
  buf << in.rdbuf();
  return parse_config(buf.str(), file);
}

nlohmann::json config_to_json(const Config& c) {
  nlohmann::json runtimes = nlohmann::json::object();
  for (const auto& [name, h] : c.runtimes) runtimes[name] = {{"path", h.path}, {"root", h.root}};
  nlohmann::json registries = nlohmann::json::object();
  for (const auto& [name, h] : c.registries)
    registries[name] = {{"mirrors", h.mirrors}, {"insecure", h.insecure}, {"ca_file", h.ca_file}};
  return {{"source", c.source},
          {"socket", c.socket},
          {"root", c.root},
          {"state", c.state},
          {"log_level", c.log_level},
          {"cgroup_driver", c.cgroup_driver},
          {"default_runtime", c.default_runtime},
          {"runtimes", runtimes},
          {"shutdown_timeout_seconds", c.shutdown_timeout_seconds},
          {"max_concurrent_rpcs", c.max_concurrent_rpcs},
          {"metrics_address", c.metrics_address},
          {"streaming_address", c.streaming_address},
          {"streaming_token_ttl_seconds", c.streaming_token_ttl_seconds},
          {"streaming_idle_timeout_seconds", c.streaming_idle_timeout_seconds},
          {"image_pull_idle_timeout_seconds", c.image_pull_idle_timeout_seconds},
          {"max_parallel_layer_fetches", c.max_parallel_layer_fetches},
          {"image_pull_timeout_seconds", c.image_pull_timeout_seconds},
          {"max_image_layers", c.max_image_layers},
          {"disk_usage_refresh_seconds", c.disk_usage_refresh_seconds},
          {"event_subscriber_backlog", c.event_subscriber_backlog},
          {"registries", registries},
          {"sandbox_image", c.sandbox_image},
          {"cni_conf_dir", c.cni_conf_dir},
          {"cni_plugin_dirs", c.cni_plugin_dirs},
          {"cni_plugin_timeout_seconds", c.cni_plugin_timeout_seconds}};
}

}  // namespace berth
