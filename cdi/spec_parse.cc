// CDI spec validation, field by field, with the CDI spec's rules and the reference library's
// checks (env "NAME=value", device node types and permissions, the six OCI hook names, non-empty
// mount paths, unique device names, at least one device, a device with at least one edit) plus
// what berth needs to build a safe OCI spec: absolute container paths and hook paths, hook timeouts
// above zero, no NUL in any string. intelRdt and netDevices are refused: berth sets no resctrl
// class, and netDevices belongs to CDI 1.1.0.
#include "spec_parse.h"

#include <map>

#include "cdi_names.h"
#include "spec_document.h"
#include "spec_fields.h"
#include "spec_version.h"

namespace berth::cdi {
namespace {

using json = nlohmann::json;

std::string item(const std::string& where, size_t i) { return where + "[" + std::to_string(i) + "]"; }

class SpecReader {
 public:
  explicit SpecReader(bool yaml) : r_(yaml) {}

  bool read(const json& doc, SpecFile& out) {
    auto top = r_.object(doc, "", {"cdiVersion", "kind", "annotations", "devices", "containerEdits"});
    if (!top) return false;
    auto version = r_.string(*top, "cdiVersion", true);
    if (!version) return false;
    int minor = version_minor(*version);
    if (minor < 0) {
      r_.fail("cdiVersion", "'" + printable(*version) + "' is not a CDI version berth reads (" + kOldestVersion +
                                " to " + kNewestVersion + ")");
      return false;
    }
    out.version = *version;
    auto kind = r_.string(*top, "kind", true);
    if (!kind) return false;
    std::string vendor, cls;
    if (std::string why = split_kind(*kind, &vendor, &cls); !why.empty()) {
      r_.fail("kind", why);
      return false;
    }
    if (cls.find('.') != std::string::npos) needs_.dotted_class("a '.' in the kind's class");
    out.kind = *kind;
    if (!r_.string_map(*top, "annotations").empty()) needs_.annotations("annotations");
    if (const json* e = top->get("containerEdits")) edits(*e, "containerEdits", false, out.edits);
    devices(*top, out.devices);
    if (!r_.ok()) return false;
    if (std::string why = needs_.check(minor); !why.empty()) {
      r_.fail("cdiVersion", why);
      return false;
    }
    return true;
  }

  const std::string& error() const { return r_.error(); }

 private:
  void devices(const FieldReader::Object& top, std::vector<SpecDevice>& out) {
    const json* list = r_.array(top, "devices", true);
    if (!list) return;
    if (list->empty()) return r_.fail("devices", "empty (a spec needs at least one device)");
    std::map<std::string, size_t> seen;
    for (size_t i = 0; i < list->size() && r_.ok(); ++i) {
      const std::string where = item("devices", i);
      auto d = r_.object((*list)[i], where, {"name", "annotations", "containerEdits"});
      if (!d) return;
      auto name = r_.string(*d, "name", true);
      if (!name) return;
      if (std::string why = device_name_error(*name); !why.empty()) return r_.fail(d->path("name"), why);
      if (auto [it, fresh] = seen.emplace(*name, i); !fresh)
        return r_.fail(d->path("name"),
                       "'" + *name + "' is defined twice (also devices[" + std::to_string(it->second) + "])");
      if (!(((*name)[0] >= 'a' && (*name)[0] <= 'z') || ((*name)[0] >= 'A' && (*name)[0] <= 'Z')))
        needs_.device_digit_first(d->path("name") + " starting with a digit");
      if (!r_.string_map(*d, "annotations").empty()) needs_.annotations(d->path("annotations"));
      SpecDevice dev{*name, {}};
      const json* e = d->get("containerEdits");
      if (!e) return r_.fail(d->path("containerEdits"), "missing (a device needs at least one edit)");
      edits(*e, d->path("containerEdits"), true, dev.edits);
      out.push_back(std::move(dev));
    }
  }

  void edits(const json& v, const std::string& where, bool device, CdiContainerEdits& out) {
    auto e = r_.object(v, where, {"env", "deviceNodes", "hooks", "mounts", "intelRdt", "additionalGids", "netDevices"});
    if (!e) return;
    out.env = env(*e, "env");
    if (const json* nodes = r_.array(*e, "deviceNodes"))
      for (size_t i = 0; i < nodes->size() && r_.ok(); ++i)
        device_node((*nodes)[i], item(e->path("deviceNodes"), i), out);
    if (const json* mounts = r_.array(*e, "mounts"))
      for (size_t i = 0; i < mounts->size() && r_.ok(); ++i) mount((*mounts)[i], item(e->path("mounts"), i), out);
    if (const json* hooks = r_.array(*e, "hooks"))
      for (size_t i = 0; i < hooks->size() && r_.ok(); ++i) hook((*hooks)[i], item(e->path("hooks"), i), out);
    if (const json* gids = r_.array(*e, "additionalGids")) {
      for (size_t i = 0; i < gids->size(); ++i)
        if (auto g = r_.integer_value((*gids)[i], item(e->path("additionalGids"), i), 0, UINT32_MAX))
          out.additional_gids.push_back(static_cast<uint32_t>(*g));
      if (!gids->empty()) needs_.additional_gids(e->path("additionalGids"));
    }
    if (e->get("intelRdt"))
      return r_.fail(e->path("intelRdt"), "not supported (berth sets no Intel RDT class for a container)");
    if (const json* net = e->get("netDevices"); net && !(net->is_array() && net->empty()))
      return r_.fail(e->path("netDevices"), "not supported (a CDI 1.1.0 feature; berth reads " +
                                                std::string(kOldestVersion) + " to " + kNewestVersion + ")");
    if (device && r_.ok() && out.env.empty() && out.device_nodes.empty() && out.mounts.empty() && out.hooks.empty() &&
        out.additional_gids.empty())
      r_.fail(where, "empty (a device needs at least one edit)");
  }

  std::vector<std::string> env(const FieldReader::Object& o, const char* name) {
    std::vector<std::string> vars = r_.strings(o, name);
    for (size_t i = 0; i < vars.size(); ++i) {
      size_t eq = vars[i].find('=');
      if (eq == 0 || eq == std::string::npos)
        r_.fail(item(o.path(name), i), "'" + printable(vars[i]) + "' is not of the form NAME=value");
    }
    return vars;
  }

  std::optional<std::string> absolute_path(const FieldReader::Object& o, const char* name, bool required) {
    auto p = r_.string(o, name, required);
    if (p && (p->empty() || (*p)[0] != '/')) {
      r_.fail(o.path(name), "'" + printable(*p) + "' is not an absolute path");
      return std::nullopt;
    }
    return p;
  }

  void device_node(const json& v, const std::string& where, CdiContainerEdits& out) {
    auto o =
        r_.object(v, where, {"path", "hostPath", "type", "major", "minor", "fileMode", "permissions", "uid", "gid"});
    if (!o) return;
    CdiDeviceNode n;
    n.path = absolute_path(*o, "path", true).value_or("");
    n.host_path = absolute_path(*o, "hostPath", false).value_or("");
    if (!n.host_path.empty()) needs_.device_host_path(o->path("hostPath"));
    n.type = r_.string(*o, "type").value_or("");
    if (!n.type.empty() && n.type != "b" && n.type != "c" && n.type != "u" && n.type != "p")
      r_.fail(o->path("type"), "'" + printable(n.type) + "' is not one of b, c, u, p");
    // Negative numbers are refused: -1 is the wildcard of a cgroup rule.
    n.major = r_.integer(*o, "major", 0, INT64_MAX).value_or(0);
    n.minor = r_.integer(*o, "minor", 0, INT64_MAX).value_or(0);
    if (auto m = r_.integer(*o, "fileMode", 0, UINT32_MAX)) n.file_mode = static_cast<uint32_t>(*m);
    n.permissions = r_.string(*o, "permissions").value_or("");
    if (n.permissions != "none" && n.permissions.find_first_not_of("rwm") != std::string::npos)
      r_.fail(o->path("permissions"), "'" + printable(n.permissions) + "' is not 'none' or made of r, w and m");
    if (auto id = r_.integer(*o, "uid", 0, UINT32_MAX)) n.uid = static_cast<uint32_t>(*id);
    if (auto id = r_.integer(*o, "gid", 0, UINT32_MAX)) n.gid = static_cast<uint32_t>(*id);
    out.device_nodes.push_back(std::move(n));
  }

  void mount(const json& v, const std::string& where, CdiContainerEdits& out) {
    auto o = r_.object(v, where, {"hostPath", "containerPath", "options", "type"});
    if (!o) return;
    CdiMount m;
    // Not necessarily a path: a tmpfs or proc mount's source is a name.
    m.host_path = r_.string(*o, "hostPath", true).value_or("");
    if (r_.ok() && m.host_path.empty()) r_.fail(o->path("hostPath"), "empty");
    m.container_path = absolute_path(*o, "containerPath", true).value_or("");
    m.options = r_.strings(*o, "options");
    m.type = r_.string(*o, "type").value_or("");
    if (!m.type.empty()) needs_.mount_type(o->path("type"));
    out.mounts.push_back(std::move(m));
  }

  void hook(const json& v, const std::string& where, CdiContainerEdits& out) {
    auto o = r_.object(v, where, {"hookName", "path", "args", "env", "timeout"});
    if (!o) return;
    CdiHook h;
    h.hook_name = r_.string(*o, "hookName", true).value_or("");
    if (r_.ok() && !is_hook_name(h.hook_name))
      r_.fail(o->path("hookName"), "'" + printable(h.hook_name) + "' is not one of " + kHookNames);
    h.path = absolute_path(*o, "path", true).value_or("");
    h.args = r_.strings(*o, "args");
    h.env = env(*o, "env");
    h.timeout = r_.integer(*o, "timeout", 1, INT32_MAX);
    out.hooks.push_back(std::move(h));
  }

  FieldReader r_;
  VersionNeeds needs_;
};

// The kind and device names of a document that may be invalid, read without checks, so a request
// for one of its devices can be told why the device is unavailable.
void collect_names(const json& doc, std::vector<std::string>& names) {
  if (!doc.is_object()) return;
  const json* kind = nullptr;
  const json* devices = nullptr;
  for (const auto& [key, value] : doc.items()) {
    if (same_field_name(key, "kind")) kind = &value;
    if (same_field_name(key, "devices")) devices = &value;
  }
  if (!kind || !kind->is_string() || !devices || !devices->is_array()) return;
  for (const json& d : *devices) {
    if (!d.is_object()) continue;
    for (const auto& [key, value] : d.items())
      if (same_field_name(key, "name") && value.is_string())
        names.push_back(kind->get_ref<const std::string&>() + "=" + value.get_ref<const std::string&>());
  }
}

}  // namespace

Result<SpecFile> parse_spec(std::string_view bytes, const std::string& path, std::vector<std::string>* names) {
  if (bytes.size() > kMaxSpecBytes)
    return invalid_argument(path + ": larger than " + std::to_string(kMaxSpecBytes >> 20) + " MiB");
  bool yaml = !(path.size() >= 5 && path.compare(path.size() - 5, 5, ".json") == 0);
  auto doc = yaml ? parse_yaml_document(bytes) : parse_json_document(bytes);
  if (!doc.ok()) return invalid_argument(path + ": " + safe_message(doc.status().message()));
  if (names) collect_names(*doc, *names);
  SpecFile spec;
  spec.path = path;
  SpecReader reader(yaml);
  if (!reader.read(*doc, spec)) return invalid_argument(path + ": " + reader.error());
  return spec;
}

}  // namespace berth::cdi
