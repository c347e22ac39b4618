// exec_helper_request and the helper's binary. The request is built only from the typed spec's
// process fields this file applies: any other process member (one the spec type keeps in
// `unknown`: a newer runtime-spec's I/O priority, scheduler or CPU affinity, ...) makes it
// UNIMPLEMENTED, so an ExecSync never runs with less than the runtime would have applied.
#include "exec_helper.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <sys/resource.h>
#include <unistd.h>

#include <map>

#include "berth/container_security.h"
#include "program/exec_request.h"

namespace berth {

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

Result<std::string> exec_helper_request(const oci::Spec& spec, const std::vector<std::string>& cmd,
                                        const std::vector<std::string>& cgroup_procs, SeccompProgramCache& seccomp) {
  if (!spec.process) return internal_error("config.json: field 'process': missing");
  const oci::Process& p = *spec.process;
  for (const auto& [k, v] : p.unknown.items())
    if (k != "consoleSize") return unsupported("process." + k);
  if (p.terminal) return unsupported("a terminal");
  if (!p.selinux_label.empty()) return unsupported("an SELinux label");
  if (std::string k = oci::first_unknown(p.user.unknown); !k.empty()) return unsupported("process.user." + k);

  std::string out(wire::kMagic, sizeof wire::kMagic);
  for (const auto& a : cmd) put_string(out, wire::kArg, a);
  for (const auto& e : p.env) put_string(out, wire::kEnv, e);
  put_string(out, wire::kCwd, p.cwd.empty() ? "/" : p.cwd);
  put_number(out, wire::kUid, p.user.uid);
  put_number(out, wire::kGid, p.user.gid);
  for (uint32_t g : p.user.additional_gids) put_number(out, wire::kGroup, g);
  if (p.user.umask) put_number(out, wire::kUmask, *p.user.umask);
  const oci::Capabilities none;
  const oci::Capabilities& caps = p.capabilities ? *p.capabilities : none;
  if (std::string k = oci::first_unknown(caps.unknown); !k.empty()) return unsupported("process.capabilities." + k);
  struct CapabilitySet {
    const char* name;
    const std::vector<std::string>& names;
    wire::Tag tag;
  };
  for (const CapabilitySet& set : {CapabilitySet{"bounding", caps.bounding, wire::kCapBounding},
                                   CapabilitySet{"effective", caps.effective, wire::kCapEffective},
                                   CapabilitySet{"permitted", caps.permitted, wire::kCapPermitted},
                                   CapabilitySet{"inheritable", caps.inheritable, wire::kCapInheritable},
                                   CapabilitySet{"ambient", caps.ambient, wire::kCapAmbient}}) {
    auto mask = capability_mask(set.names, std::string("config.json process.capabilities.") + set.name);
    if (!mask.ok()) return mask.status();
    put_number(out, set.tag, *mask);
  }
  put_number(out, wire::kNoNewPrivs, p.no_new_privileges);
  for (const oci::Rlimit& l : p.rlimits) {
    int number = rlimit_number(l.type);
    if (number < 0 || !l.unknown.empty()) return unsupported("rlimit " + l.type);
    std::string rec = le64(static_cast<uint64_t>(number)) + le64(l.soft) + le64(l.hard);
    put(out, wire::kRlimit, rec.data(), rec.size());
  }
  if (p.oom_score_adj)
    put_number(out, wire::kOomScoreAdj, static_cast<uint64_t>(static_cast<int64_t>(*p.oom_score_adj)));
  if (!p.apparmor_profile.empty()) put_string(out, wire::kAppArmor, p.apparmor_profile);

  // The seccomp section goes to the filter compiler, which checks it.
  if (spec.linux && spec.linux->seccomp) {
    auto program = seccomp.get(*spec.linux->seccomp);
    if (!program.ok())
      return program.status().code() == Code::unimplemented ? program.status()
                                                            : program.status().context("config.json linux.seccomp");
    put(out, wire::kSeccompBpf, program->bpf.data(), program->bpf.size());
    put_number(out, wire::kSeccompFlags, program->flags);
  }
  for (const auto& path : cgroup_procs) put_string(out, wire::kCgroupProcs, path);
  return out;
}

}  // namespace berth
