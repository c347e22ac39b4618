// compile_seccomp_filter: libseccomp builds and exports the program (as runc's own build does, so
// the same section gives the same filter); the ENOSYS prefix is written here by hand because
// libseccomp has no rule for "any syscall above N" and runc adds the same prefix itself.
#include "berth/mutex.h"
#include "berth/seccomp_filter.h"

#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <seccomp.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <map>
#include <memory>
#include <optional>

#include "berth/json_fields.h"
#include "berth/unique_fd.h"

namespace berth {

namespace {

using nlohmann::json;

Status unsupported(const std::string& what) {
  return Status(Code::unimplemented, "seccomp: " + what + " is not compiled by berth");
}

// An action name and its errno (for ERRNO and TRACE; EPERM when the section gives none).
Result<uint32_t> action_of(const std::string& name, std::optional<unsigned> errno_ret) {
  unsigned e = errno_ret.value_or(EPERM);
  if (name == "SCMP_ACT_ALLOW") return SCMP_ACT_ALLOW;
  if (name == "SCMP_ACT_ERRNO") return SCMP_ACT_ERRNO(e);
  if (name == "SCMP_ACT_KILL" || name == "SCMP_ACT_KILL_THREAD") return SCMP_ACT_KILL_THREAD;
  if (name == "SCMP_ACT_KILL_PROCESS") return SCMP_ACT_KILL_PROCESS;
  if (name == "SCMP_ACT_TRAP") return SCMP_ACT_TRAP;
  if (name == "SCMP_ACT_TRACE") return SCMP_ACT_TRACE(e);
  if (name == "SCMP_ACT_LOG") return SCMP_ACT_LOG;
  return unsupported("action '" + name + "'");
}

Result<scmp_compare> operator_of(const std::string& op) {
  static const std::map<std::string, scmp_compare> ops = {{"SCMP_CMP_NE", SCMP_CMP_NE},
                                                          {"SCMP_CMP_LT", SCMP_CMP_LT},
                                                          {"SCMP_CMP_LE", SCMP_CMP_LE},
                                                          {"SCMP_CMP_EQ", SCMP_CMP_EQ},
                                                          {"SCMP_CMP_GE", SCMP_CMP_GE},
                                                          {"SCMP_CMP_GT", SCMP_CMP_GT},
                                                          {"SCMP_CMP_MASKED_EQ", SCMP_CMP_MASKED_EQ}};
  auto it = ops.find(op);
  if (it == ops.end()) return unsupported("operator '" + op + "'");
  return it->second;
}

Result<unsigned> flag_of(const std::string& name) {
  if (name == "SECCOMP_FILTER_FLAG_LOG") return SECCOMP_FILTER_FLAG_LOG;
  if (name == "SECCOMP_FILTER_FLAG_SPEC_ALLOW") return SECCOMP_FILTER_FLAG_SPEC_ALLOW;
  if (name == "SECCOMP_FILTER_FLAG_TSYNC") return 0u;  // one thread: nothing to synchronise
  return unsupported("flag '" + name + "'");
}

// "SCMP_ARCH_X86_64" -> libseccomp's token for "x86_64".
uint32_t arch_of(const std::string& name) {
  if (name.rfind("SCMP_ARCH_", 0) != 0) return 0;
  std::string s = name.substr(10);
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return seccomp_arch_resolve_name(s.c_str());
}

struct Rule {
  std::vector<std::string> names;
  uint32_t action;
  std::vector<scmp_arg_cmp> args;
};

// The prefix: on `audit_arch`, a syscall above `last` gets ENOSYS before libseccomp's program
// runs; x32 calls (bit 30 set) are left to it. Jumps are relative, so the program after it is
// unchanged.
void append_enosys_check(std::vector<sock_filter>& out, uint32_t audit_arch, uint32_t last, bool skip_x32) {
  out.push_back(BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, arch)));
  out.push_back(BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, audit_arch, 0, 4));
  out.push_back(BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, nr)));
  out.push_back(BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, skip_x32 ? 0x40000000u : 0u, 2, 0));
  out.push_back(BPF_JUMP(BPF_JMP | BPF_JGT | BPF_K, last, 0, 1));
  out.push_back(BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (ENOSYS & SECCOMP_RET_DATA)));
}

}  // namespace

Result<SeccompProgram> compile_seccomp_filter(const json& section) {
  if (!section.is_object()) return invalid_argument("seccomp: not an object");
  JsonFields f(section, "seccomp");
  std::string default_name = f.required_string("defaultAction");
  std::optional<unsigned> default_errno;
  if (f.has("defaultErrnoRet")) default_errno = f.integer<unsigned>("defaultErrnoRet", EPERM);
  std::vector<std::string> arch_names = f.strings("architectures");
  std::vector<std::string> flag_names = f.strings("flags");
  if (!f.string("listenerPath").empty()) return unsupported("listenerPath");
  const json* calls = f.array("syscalls");
  if (!f.ok()) return Status(Code::invalid_argument, f.status().message());

  auto default_action = action_of(default_name, default_errno);
  if (!default_action.ok()) return default_action.status();
  SeccompProgram program;
  for (const auto& name : flag_names) {
    auto flag = flag_of(name);
    if (!flag.ok()) return flag.status();
    program.flags |= *flag;
  }
  std::vector<Rule> rules;
  for (size_t i = 0; calls && i < calls->size(); ++i) {
    const std::string where = "syscalls[" + std::to_string(i) + "]";
    if (!(*calls)[i].is_object()) return invalid_argument("seccomp." + where + ": not an object");
    JsonFields c = f.nested((*calls)[i], where);
    Rule r;
    r.names = c.strings("names");
    std::string action = c.required_string("action");
    std::optional<unsigned> errno_ret;
    if (c.has("errnoRet")) errno_ret = c.integer<unsigned>("errnoRet", EPERM);
    const json* args = c.array("args");
    for (size_t k = 0; args && k < args->size(); ++k) {
      if (!(*args)[k].is_object())
        return invalid_argument("seccomp." + where + ".args[" + std::to_string(k) + "]: not an object");
      JsonFields a = c.nested((*args)[k], "args[" + std::to_string(k) + "]");
      unsigned index = a.required_integer<unsigned>("index");
      uint64_t value = a.integer<uint64_t>("value", 0), two = a.integer<uint64_t>("valueTwo", 0);
      std::string op = a.required_string("op");
      if (!f.ok()) break;
      if (index > 5)
        return invalid_argument("seccomp." + where + ".args[" + std::to_string(k) +
                                "].index: " + std::to_string(index) + " is above 5");
      auto cmp = operator_of(op);
      if (!cmp.ok()) return cmp.status();
      r.args.push_back({index, *cmp, value, two});
    }
    if (!f.ok()) return Status(Code::invalid_argument, f.status().message());
    if (action == "SCMP_ACT_NOTIFY") return unsupported("action SCMP_ACT_NOTIFY");
    auto act = action_of(action, errno_ret);
    if (!act.ok()) return act.status();
    r.action = *act;
    rules.push_back(std::move(r));
  }

  std::unique_ptr<void, void (*)(scmp_filter_ctx)> ctx(seccomp_init(*default_action), seccomp_release);
  if (!ctx) return internal_error("seccomp: libseccomp refused the default action " + default_name);
  // The process sets no_new_privs itself, as the spec says, not libseccomp.
  seccomp_attr_set(ctx.get(), SCMP_FLTATR_CTL_NNP, 0);
  for (const auto& a : arch_names) {
    uint32_t arch = arch_of(a);
    if (arch == 0) return invalid_argument("seccomp.architectures: unknown architecture '" + a + "'");
    if (int rc = seccomp_arch_add(ctx.get(), arch); rc != 0 && rc != -EEXIST)
      return Status(Code::internal, "seccomp: add architecture " + a + ": " + std::strerror(-rc), -rc);
  }
  for (const Rule& r : rules) {
    if (r.action == *default_action) continue;  // libseccomp refuses those; they change nothing
    // Conditions on the same argument index cannot be ANDed: each becomes a rule of its own.
    std::map<unsigned, int> per_index;
    for (const auto& a : r.args) ++per_index[a.arg];
    std::vector<scmp_arg_cmp> together;
    std::vector<std::vector<scmp_arg_cmp>> sets;
    for (const auto& a : r.args) {
      if (per_index[a.arg] > 1)
        sets.push_back({a});
      else
        together.push_back(a);
    }
    if (!together.empty() || r.args.empty()) sets.push_back(together);
    for (const auto& name : r.names) {
      int nr = seccomp_syscall_resolve_name(name.c_str());
      if (nr == __NR_SCMP_ERROR) continue;  // not a syscall this libseccomp knows: runc skips it too
      for (const auto& set : sets) {
        int rc = seccomp_rule_add_array(ctx.get(), r.action, nr, static_cast<unsigned>(set.size()),
                                        set.empty() ? nullptr : set.data());
        if (rc != 0)
          return Status(Code::invalid_argument, "seccomp: rule for " + name + ": " + std::strerror(-rc), -rc);
      }
    }
  }

  UniqueFd mem(static_cast<int>(::memfd_create("berth-seccomp", MFD_CLOEXEC)));
  if (!mem) return errno_status(errno, "seccomp: memfd");
  if (int rc = seccomp_export_bpf(ctx.get(), mem.get()); rc != 0)
    return Status(Code::internal, std::string("seccomp: export the program: ") + std::strerror(-rc), -rc);
  std::string bpf;
  char buf[16384];
  for (off_t off = 0;;) {
    ssize_t n = ::pread(mem.get(), buf, sizeof buf, off);
    if (n < 0) return errno_status(errno, "seccomp: read the program back");
    if (n == 0) break;
    bpf.append(buf, static_cast<size_t>(n));
    off += n;
  }

  // runc's prefix: none when the default already allows or already answers ENOSYS.
  bool prefix =
      *default_action != SCMP_ACT_ALLOW && *default_action != SCMP_ACT_LOG && *default_action != SCMP_ACT_ERRNO(ENOSYS);
  std::vector<sock_filter> stub;
  if (prefix) {
    struct Abi {
      uint32_t token, audit;
      bool x32_bit;
    };
    for (Abi abi : {Abi{SCMP_ARCH_X86_64, AUDIT_ARCH_X86_64, true}, Abi{SCMP_ARCH_X86, AUDIT_ARCH_I386, false}}) {
      if (seccomp_arch_exist(ctx.get(), abi.token) != 0) continue;
      int last = -1;
      for (const Rule& r : rules)
        for (const auto& name : r.names)
          last = std::max(last, seccomp_syscall_resolve_name_arch(abi.token, name.c_str()));
      if (last >= 0) append_enosys_check(stub, abi.audit, static_cast<uint32_t>(last), abi.x32_bit);
    }
  }
  program.bpf.assign(reinterpret_cast<const char*>(stub.data()), stub.size() * sizeof(sock_filter));
  program.bpf += bpf;
  if (program.bpf.size() / sizeof(sock_filter) > BPF_MAXINSNS)
    return invalid_argument("seccomp: the program is longer than the kernel takes");
  return program;
}

Result<SeccompProgram> SeccompProgramCache::get(const json& section) {
  std::string key = section.dump();
  {
    MutexLock lock(mu_);
    if (auto it = programs_.find(key); it != programs_.end()) return it->second;
  }
  auto compiled = compile_seccomp_filter(section);
  if (!compiled.ok()) return compiled.status();
  MutexLock lock(mu_);
  if (programs_.size() >= 64) programs_.clear();
  programs_.emplace(std::move(key), *compiled);
  return compiled;
}

}  // namespace berth
