// exec_helper_request and the helper's binary. The request is built only from fields this file knows:
// any other process field of the spec (a newer runtime-spec's I/O priority, scheduler or CPU
// affinity, ...) makes it UNIMPLEMENTED, so an ExecSync never runs with less than the runtime
// would have applied.
#include "exec_helper.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <sys/resource.h>
#include <unistd.h>

#include <set>

#include "berth/container_security.h"
#include "berth/json_fields.h"
#include "program/exec_request.h"

namespace berth {

using nlohmann::json;
namespace wire = exec_wire;

namespace {

Status unsupported(const std::string& what) { return Status(Code::unimplemented, "berth-exec does not apply " + what); }

void put(std::string& out, wire::Tag tag, const void* data, size_t n) {
  char head[5] = {static_cast<char>(tag), static_cast<char>(n & 0xff), static_cast<char>((n >> 8) & 0xff),
                  static_cast<char>((n >> 16) & 0xff), static_cast<char>((n >> 24) & 0xff)};
  out.append(head, 5);
  out.append(static_cast<const char*>(data), n);
}

void put_string(std::string& out, wire::Tag tag, const std::string& s) { put(out, tag, s.c_str(), s.size() + 1); }

std::string le64(uint64_t v) {
  std::string b(8, '\0');
  for (int i = 0; i < 8; ++i) b[i] = static_cast<char>((v >> (8 * i)) & 0xff);
  return b;
}

void put_number(std::string& out, wire::Tag tag, uint64_t v) {
  std::string b = le64(v);
  put(out, tag, b.data(), b.size());
}

int rlimit_number(const std::string& name) {
  static const std::map<std::string, int> names = {
      {"RLIMIT_CPU", RLIMIT_CPU},           {"RLIMIT_FSIZE", RLIMIT_FSIZE},
      {"RLIMIT_DATA", RLIMIT_DATA},         {"RLIMIT_STACK", RLIMIT_STACK},
      {"RLIMIT_CORE", RLIMIT_CORE},         {"RLIMIT_RSS", RLIMIT_RSS},
      {"RLIMIT_NPROC", RLIMIT_NPROC},       {"RLIMIT_NOFILE", RLIMIT_NOFILE},
      {"RLIMIT_MEMLOCK", RLIMIT_MEMLOCK},   {"RLIMIT_AS", RLIMIT_AS},
      {"RLIMIT_LOCKS", RLIMIT_LOCKS},       {"RLIMIT_SIGPENDING", RLIMIT_SIGPENDING},
      {"RLIMIT_MSGQUEUE", RLIMIT_MSGQUEUE}, {"RLIMIT_NICE", RLIMIT_NICE},
      {"RLIMIT_RTPRIO", RLIMIT_RTPRIO},     {"RLIMIT_RTTIME", RLIMIT_RTTIME}};
  auto it = names.find(name);
  return it == names.end() ? -1 : it->second;
}

}  // namespace

Result<ExecHelperBinary> ExecHelperBinary::load(const std::string& path) {
  ExecHelperBinary b;
  if (path.empty()) return b;
  UniqueFd src(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!src) return errno_status(errno, "exec helper " + path);
  UniqueFd mem(::memfd_create("berth-exec", MFD_CLOEXEC | MFD_ALLOW_SEALING));
  if (!mem) return errno_status(errno, "exec helper: memfd");
  for (;;) {
    ssize_t n = ::sendfile(mem.get(), src.get(), nullptr, 1 << 20);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return errno_status(errno, "exec helper: copy " + path);
    if (n == 0) break;
  }
  // F_SEAL_FUTURE_WRITE rather than F_SEAL_WRITE: the latter waits for every page's extra
  // references to go and fails with EBUSY when one freshly written page still sits in another
  // CPU's LRU batch (seen under ASan load). Nothing maps this file yet, so forbidding writes from
  // now on seals the same bytes.
  if (::fchmod(mem.get(), 0555) != 0 ||
      ::fcntl(mem.get(), F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_FUTURE_WRITE | F_SEAL_SEAL) != 0)
    return errno_status(errno, "exec helper: seal the copy of " + path);
  b.fd_ = std::move(mem);
  return b;
}

std::string ExecHelperBinary::exec_path() const { return "/proc/self/fd/" + std::to_string(fd_.get()); }

Result<const json*> spec_process(const json& spec) {
  if (!spec.is_object())
    return internal_error(std::string("config.json: field 'process': missing (the spec is ") + spec.type_name() + ")");
  JsonFields f(spec);
  const json* p = f.required_object("process");
  if (!p) return internal_error("config.json: " + f.status().message());
  return p;
}

Result<std::string> exec_helper_request(const json& spec, const std::vector<std::string>& cmd,
                                        const std::vector<std::string>& cgroup_procs, SeccompProgramCache& seccomp) {
  auto process = spec_process(spec);
  if (!process.ok()) return process.status();
  const json& p = **process;
  static const std::set<std::string> known = {
      "terminal",        "consoleSize",     "user",        "args",        "env", "cwd", "capabilities", "rlimits",
      "noNewPrivileges", "apparmorProfile", "oomScoreAdj", "selinuxLabel"};
  for (const auto& [k, v] : p.items())
    if (!known.count(k)) return unsupported("process." + k);
  JsonFields f(p, "config.json process");
  if (f.boolean("terminal", false)) return unsupported("a terminal");
  if (!f.string("selinuxLabel").empty()) return unsupported("an SELinux label");

  std::string out(wire::kMagic, sizeof wire::kMagic);
  for (const auto& a : cmd) put_string(out, wire::kArg, a);
  for (const auto& e : f.strings("env")) put_string(out, wire::kEnv, e);
  put_string(out, wire::kCwd, f.string("cwd", "/"));
  if (const json* u = f.object("user")) {
    JsonFields user = f.nested(*u, "user");
    put_number(out, wire::kUid, user.integer<uint32_t>("uid", 0));
    put_number(out, wire::kGid, user.integer<uint32_t>("gid", 0));
    for (uint32_t g : user.integers<uint32_t>("additionalGids")) put_number(out, wire::kGroup, g);
    if (user.has("umask")) put_number(out, wire::kUmask, user.integer<uint32_t>("umask", 022));
  }
  if (const json* c = f.object("capabilities")) {
    JsonFields caps = f.nested(*c, "capabilities");
    const std::pair<const char*, wire::Tag> sets[] = {{"bounding", wire::kCapBounding},
                                                      {"effective", wire::kCapEffective},
                                                      {"permitted", wire::kCapPermitted},
                                                      {"inheritable", wire::kCapInheritable},
                                                      {"ambient", wire::kCapAmbient}};
    for (auto [name, tag] : sets) {
      auto mask = capability_mask(caps.strings(name), std::string("config.json process.capabilities.") + name);
      if (!mask.ok()) return mask.status();
      put_number(out, tag, *mask);
    }
  } else {
    for (wire::Tag t :
         {wire::kCapBounding, wire::kCapEffective, wire::kCapPermitted, wire::kCapInheritable, wire::kCapAmbient})
      put_number(out, t, 0);
  }
  put_number(out, wire::kNoNewPrivs, f.boolean("noNewPrivileges", false));
  if (const json* limits = f.array("rlimits")) {
    for (size_t i = 0; i < limits->size(); ++i) {
      JsonFields l = f.nested((*limits)[i], "rlimits[" + std::to_string(i) + "]");
      std::string type = l.required_string("type");
      if (!f.ok()) break;
      int number = rlimit_number(type);
      if (number < 0) return unsupported("rlimit " + type);
      std::string rec = le64(static_cast<uint64_t>(number)) + le64(l.integer<uint64_t>("soft", 0)) +
                        le64(l.integer<uint64_t>("hard", 0));
      put(out, wire::kRlimit, rec.data(), rec.size());
    }
  }
  if (f.has("oomScoreAdj"))
    put_number(out, wire::kOomScoreAdj, static_cast<uint64_t>(f.integer<int64_t>("oomScoreAdj", 0)));
  if (std::string profile = f.string("apparmorProfile"); !profile.empty()) put_string(out, wire::kAppArmor, profile);
  if (!f.ok()) return Status(Code::internal, f.status().message());

  // The seccomp section goes to the filter compiler, which checks it; a linux that is not an
  // object has none.
  if (const json* linux = JsonFields(spec).object("linux")) {
    JsonFields l(*linux, "linux");
    if (l.has("seccomp")) {
      auto program = seccomp.get(*l.member("seccomp"));
      if (!program.ok())
        return program.status().code() == Code::unimplemented ? program.status()
                                                              : program.status().context("config.json linux.seccomp");
      put(out, wire::kSeccompBpf, program->bpf.data(), program->bpf.size());
      put_number(out, wire::kSeccompFlags, program->flags);
    }
  }
  for (const auto& path : cgroup_procs) put_string(out, wire::kCgroupProcs, path);
  return out;
}

}  // namespace berth
