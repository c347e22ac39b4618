// The spec's JSON reader: every member read through JsonFields (types and integer ranges checked,
// the first failure named), the members a level does not model kept in its `unknown`.
#include <initializer_list>
#include <string_view>

#include "berth/file_text.h"
#include "berth/json_fields.h"
#include "berth/oci_spec.h"

namespace berth::oci {

using nlohmann::json;

namespace {

json unknown_of(const json& object, std::initializer_list<std::string_view> known) {
  json out = json::object();
  if (!object.is_object()) return out;
  for (const auto& [k, v] : object.items()) {
    bool modelled = false;
    for (std::string_view name : known) modelled |= k == name;
    if (!modelled) out[k] = v;
  }
  return out;
}

template <class Int>
std::optional<Int> optional_integer(JsonFields& f, const char* key) {
  if (!f.has(key)) return std::nullopt;
  return f.integer<Int>(key, Int{});
}

// Each element of the array `key` read by `one(fields_of_element, element)`.
template <class T, class Read>
std::vector<T> read_list(JsonFields& f, const char* key, Read one) {
  std::vector<T> out;
  const json* list = f.array(key);
  for (size_t i = 0; list && i < list->size(); ++i) {
    JsonFields e = f.nested((*list)[i], std::string(key) + "[" + std::to_string(i) + "]");
    out.push_back(one(e, (*list)[i]));
  }
  return out;
}

std::vector<IdMapping> read_mappings(JsonFields& f, const char* key) {
  return read_list<IdMapping>(f, key, [](JsonFields& m, const json&) {
    return IdMapping{m.required_integer<uint32_t>("containerID"), m.required_integer<uint32_t>("hostID"),
                     m.required_integer<uint32_t>("size")};
  });
}

User read_user(JsonFields& f, const json& j) {
  User u;
  u.uid = f.integer<uint32_t>("uid", 0);
  u.gid = f.integer<uint32_t>("gid", 0);
  u.umask = optional_integer<uint32_t>(f, "umask");
  u.additional_gids = f.integers<uint32_t>("additionalGids");
  u.unknown = unknown_of(j, {"uid", "gid", "umask", "additionalGids"});
  return u;
}

Capabilities read_capabilities(JsonFields& f, const json& j) {
  Capabilities c;
  c.bounding = f.strings("bounding");
  c.effective = f.strings("effective");
  c.inheritable = f.strings("inheritable");
  c.permitted = f.strings("permitted");
  c.ambient = f.strings("ambient");
  c.unknown = unknown_of(j, {"bounding", "effective", "inheritable", "permitted", "ambient"});
  return c;
}

Process read_process(JsonFields& f, const json& j) {
  Process p;
  p.terminal = f.boolean("terminal", false);
  if (const json* u = f.object("user")) {
    JsonFields user = f.nested(*u, "user");
    p.user = read_user(user, *u);
  }
  p.args = f.strings("args");
  p.env = f.strings("env");
  p.cwd = f.string("cwd");
  if (const json* c = f.object("capabilities")) {
    JsonFields caps = f.nested(*c, "capabilities");
    p.capabilities = read_capabilities(caps, *c);
  }
  p.rlimits = read_list<Rlimit>(f, "rlimits", [](JsonFields& r, const json& e) {
    return Rlimit{r.required_string("type"), r.integer<uint64_t>("hard", 0), r.integer<uint64_t>("soft", 0),
                  unknown_of(e, {"type", "hard", "soft"})};
  });
  p.no_new_privileges = f.boolean("noNewPrivileges", false);
  p.apparmor_profile = f.string("apparmorProfile");
  p.selinux_label = f.string("selinuxLabel");
  p.oom_score_adj = optional_integer<int>(f, "oomScoreAdj");
  p.unknown = unknown_of(j, {"terminal", "user", "args", "env", "cwd", "capabilities", "rlimits", "noNewPrivileges",
                             "apparmorProfile", "selinuxLabel", "oomScoreAdj"});
  return p;
}

Mount read_mount(JsonFields& f, const json& j) {
  Mount m;
  m.destination = f.required_string("destination");
  m.type = f.string("type");
  m.source = f.string("source");
  m.options = f.strings("options");
  m.uid_mappings = read_mappings(f, "uidMappings");
  m.gid_mappings = read_mappings(f, "gidMappings");
  m.unknown = unknown_of(j, {"destination", "type", "source", "options", "uidMappings", "gidMappings"});
  return m;
}

Hook read_hook(JsonFields& f, const json& j) {
  return Hook{f.required_string("path"), f.strings("args"), f.strings("env"), optional_integer<int64_t>(f, "timeout"),
              unknown_of(j, {"path", "args", "env", "timeout"})};
}

Device read_device(JsonFields& f, const json& j) {
  Device d;
  d.path = f.required_string("path");
  d.type = f.required_string("type");
  d.major = f.integer<int64_t>("major", 0);
  d.minor = f.integer<int64_t>("minor", 0);
  d.file_mode = optional_integer<uint32_t>(f, "fileMode");
  d.uid = optional_integer<uint32_t>(f, "uid");
  d.gid = optional_integer<uint32_t>(f, "gid");
  d.unknown = unknown_of(j, {"path", "type", "major", "minor", "fileMode", "uid", "gid"});
  return d;
}

Resources read_resources(JsonFields& f, const json& j) {
  Resources r;
  r.devices = read_list<DeviceRule>(f, "devices", [](JsonFields& d, const json& e) {
    return DeviceRule{d.required_boolean("allow"),
                      d.string("type"),
                      optional_integer<int64_t>(d, "major"),
                      optional_integer<int64_t>(d, "minor"),
                      d.string("access"),
                      unknown_of(e, {"allow", "type", "major", "minor", "access"})};
  });
  if (const json* c = f.object("cpu")) {
    JsonFields cpu = f.nested(*c, "cpu");
    r.cpu = CpuResources{optional_integer<uint64_t>(cpu, "shares"),
                         optional_integer<uint64_t>(cpu, "period"),
                         optional_integer<int64_t>(cpu, "quota"),
                         cpu.string("cpus"),
                         cpu.string("mems"),
                         unknown_of(*c, {"shares", "period", "quota", "cpus", "mems"})};
  }
  if (const json* m = f.object("memory")) {
    JsonFields memory = f.nested(*m, "memory");
    r.memory = MemoryResources{optional_integer<int64_t>(memory, "limit"), optional_integer<int64_t>(memory, "swap"),
                               unknown_of(*m, {"limit", "swap"})};
  }
  r.hugepage_limits = read_list<HugepageLimit>(f, "hugepageLimits", [](JsonFields& h, const json& e) {
    return HugepageLimit{h.required_string("pageSize"), h.required_integer<uint64_t>("limit"),
                         unknown_of(e, {"pageSize", "limit"})};
  });
  r.unified = f.string_map("unified");
  r.unknown = unknown_of(j, {"devices", "cpu", "memory", "hugepageLimits", "unified"});
  return r;
}

Linux read_linux(JsonFields& f, const json& j) {
  Linux l;
  l.uid_mappings = read_mappings(f, "uidMappings");
  l.gid_mappings = read_mappings(f, "gidMappings");
  l.sysctl = f.string_map("sysctl");
  if (const json* r = f.object("resources")) {
    JsonFields resources = f.nested(*r, "resources");
    l.resources = read_resources(resources, *r);
  }
  l.cgroups_path = f.string("cgroupsPath");
  l.namespaces = read_list<Namespace>(f, "namespaces", [](JsonFields& n, const json& e) {
    return Namespace{n.required_string("type"), n.string("path"), unknown_of(e, {"type", "path"})};
  });
  l.devices = read_list<Device>(f, "devices", read_device);
  if (const json* s = f.object("seccomp")) l.seccomp = *s;
  l.rootfs_propagation = f.string("rootfsPropagation");
  l.masked_paths = f.strings("maskedPaths");
  l.readonly_paths = f.strings("readonlyPaths");
  l.unknown = unknown_of(j, {"uidMappings", "gidMappings", "sysctl", "resources", "cgroupsPath", "namespaces",
                             "devices", "seccomp", "rootfsPropagation", "maskedPaths", "readonlyPaths"});
  return l;
}

Result<Spec> read_spec(JsonFields& f, const json& j) {
  Spec s;
  s.oci_version = f.string("ociVersion");
  if (const json* p = f.object("process")) {
    JsonFields process = f.nested(*p, "process");
    s.process = read_process(process, *p);
  }
  if (const json* r = f.object("root")) {
    JsonFields root = f.nested(*r, "root");
    s.root = Root{root.required_string("path"), root.boolean("readonly", false), unknown_of(*r, {"path", "readonly"})};
  }
  s.hostname = f.string("hostname");
  s.mounts = read_list<Mount>(f, "mounts", read_mount);
  if (const json* h = f.object("hooks")) {
    JsonFields hooks = f.nested(*h, "hooks");
    for (const auto& [name, list] : h->items()) s.hooks[name] = read_list<Hook>(hooks, name.c_str(), read_hook);
  }
  s.annotations = f.string_map("annotations");
  if (const json* l = f.object("linux")) {
    JsonFields linux = f.nested(*l, "linux");
    s.linux = read_linux(linux, *l);
  }
  s.unknown = unknown_of(j, {"ociVersion", "process", "root", "hostname", "mounts", "hooks", "annotations", "linux"});
  if (!f.ok()) return f.status();
  return s;
}

}  // namespace

Result<Spec> spec_from_json(const json& spec, const std::string& name) {
  if (!spec.is_object()) return invalid_argument(name + ": the spec is " + spec.type_name() + ", not an object");
  JsonFields f(spec);
  auto s = read_spec(f, spec);
  if (!s.ok()) return invalid_argument(name + ": " + s.status().message());
  return s;
}

Result<Spec> read_spec_file(const std::string& path) {
  auto text = read_file_bytes(path);
  if (!text.ok()) return internal_error(path + ": " + text.status().message());
  json j = json::parse(*text, nullptr, false);
  if (j.is_discarded()) return internal_error(path + ": not JSON");
  auto spec = spec_from_json(j, path);
  if (!spec.ok()) return Status(Code::internal, spec.status().message());
  return spec;
}

std::string first_unknown(const json& unknown) {
  return unknown.is_object() && !unknown.empty() ? unknown.begin().key() : "";
}

}  // namespace berth::oci
