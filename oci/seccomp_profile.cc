// The OCI seccomp section: berth's RuntimeDefault allowlist (names from seccomp_syscalls.cc, resolved
// with libseccomp for the native ABI) and the reading of Localhost profile files.
#include "berth/seccomp_profile.h"

#include <seccomp.h>

#include <algorithm>
#include <cerrno>
#include <set>
#include <string_view>

#include "berth/bounded_read.h"
#include "berth/json_fields.h"
#include "berth/seccomp_syscalls.h"

namespace berth {

namespace {

// A profile is a few KiB; a file of a megabyte is not one, and berthd holds it in memory.
constexpr size_t kLocalhostProfileMax = 1 << 20;

// The clone flags that make a namespace: CLONE_NEWNS, CLONE_NEWCGROUP, CLONE_NEWUTS, CLONE_NEWIPC,
// CLONE_NEWUSER, CLONE_NEWPID, CLONE_NEWNET.
constexpr uint64_t kNamespaceFlags = 0x7E020000;

// personality(2) values ordinary software sets: PER_LINUX, PER_LINUX32, UNAME26 alone and with
// PER_LINUX32, and 0xffffffff, which only reads the current persona. Other flags (ADDR_NO_RANDOMIZE,
// READ_IMPLIES_EXEC, …) weaken the process's own hardening and stay refused.
constexpr uint64_t kPersonalities[] = {0x0, 0x8, 0x20000, 0x20008, 0xffffffff};

// socket(2) is open to every address family but AF_VSOCK, whose peer is the hypervisor or the host
// rather than anything the pod's network namespace routes to. Other rarely used families stay
// open on purpose: the ones that reach hardware or raw frames already need a capability the kernel
// checks (AF_PACKET: NET_RAW, AF_KEY: NET_ADMIN), real workloads use AF_ALG, AF_CAN, AF_TIPC or
// AF_RDS, and pods moving between runtimes expect the same RuntimeDefault everywhere; keeping
// obscure protocol modules from loading is the host's module blacklist, which covers every
// process. (32-bit x86's socketcall multiplexer cannot be filtered by family.)
constexpr uint64_t kAfVsock = 40;

bool known(const char* name) { return seccomp_syscall_resolve_name(name) != __NR_SCMP_ERROR; }

nlohmann::json rule(std::vector<std::string> names, const char* action) {
  return {{"names", std::move(names)}, {"action", action}};
}

nlohmann::json arg0(const char* op, uint64_t value, std::optional<uint64_t> value_two = std::nullopt) {
  nlohmann::json a = {{"index", 0}, {"value", value}, {"op", op}};
  if (value_two) a["valueTwo"] = *value_two;
  return nlohmann::json::array({a});
}

}  // namespace

nlohmann::json runtime_default_seccomp(const std::vector<std::string>& capabilities) {
  auto has = [&](const char* cap) {
    return std::find(capabilities.begin(), capabilities.end(), cap) != capabilities.end();
  };
  const bool admin = has("CAP_SYS_ADMIN");

  // Sorted and without repeats: a name may come from two capabilities.
  std::set<std::string> allowed;
  for (const SyscallGroup& g : runtime_default_syscalls()) {
    if (g.capability && !has(g.capability)) continue;
    for (const char* n : g.names)
      if (known(n)) allowed.insert(n);
  }
  nlohmann::json rules = nlohmann::json::array();
  rules.push_back(rule({allowed.begin(), allowed.end()}, "SCMP_ACT_ALLOW"));
  for (uint64_t p : kPersonalities) {
    auto r = rule({"personality"}, "SCMP_ACT_ALLOW");
    r["args"] = arg0("SCMP_CMP_EQ", p);
    rules.push_back(std::move(r));
  }
  auto sock = rule({"socket"}, "SCMP_ACT_ALLOW");
  sock["args"] = arg0("SCMP_CMP_NE", kAfVsock);
  rules.push_back(std::move(sock));

  const bool have_clone3 = known("clone3");
  if (admin) {
    std::vector<std::string> names{"clone"};
    if (have_clone3) names.push_back("clone3");
    rules.push_back(rule(names, "SCMP_ACT_ALLOW"));
  } else {
    // Allowed when (flags & namespace flags) == 0.
    auto c = rule({"clone"}, "SCMP_ACT_ALLOW");
    c["args"] = arg0("SCMP_CMP_MASKED_EQ", kNamespaceFlags, 0);
    rules.push_back(std::move(c));
    // clone3 takes its flags in a struct a filter cannot read; ENOSYS makes libc fall back to clone.
    if (have_clone3) {
      auto c3 = rule({"clone3"}, "SCMP_ACT_ERRNO");
      c3["errnoRet"] = ENOSYS;
      rules.push_back(std::move(c3));
    }
  }
  return {
      {"defaultAction", "SCMP_ACT_ERRNO"},
      {"defaultErrnoRet", EPERM},
      {"architectures", {"SCMP_ARCH_X86_64", "SCMP_ARCH_X86", "SCMP_ARCH_X32", "SCMP_ARCH_AARCH64", "SCMP_ARCH_ARM"}},
      {"syscalls", rules}};
}

Result<std::optional<nlohmann::json>> seccomp_section(const SeccompRequest& req) {
  switch (req.kind) {
    case SeccompKind::unconfined: return std::optional<nlohmann::json>();
    case SeccompKind::runtime_default: return std::optional<nlohmann::json>(runtime_default_seccomp(req.capabilities));
    case SeccompKind::localhost: break;
  }
  if (req.localhost_path.empty() || req.localhost_path[0] != '/')
    return invalid_argument(req.field + ": localhost profile '" + req.localhost_path + "' is not an absolute path");
  // The path comes from the request: a FIFO or device there must not hold a gRPC thread.
  auto text = read_regular_file(req.localhost_path, kLocalhostProfileMax,
                                req.field + ": localhost profile " + req.localhost_path);
  // A profile that is not there is a bad request, as any other unusable one.
  if (!text.ok()) return Status(Code::invalid_argument, text.status().message(), text.status().sys_errno());
  auto j = nlohmann::json::parse(*text, nullptr, false);
  // The profile goes to the runtime as it is; its top-level shape is checked here so a wrong
  // type is reported against the profile, not as the runtime's failure to start the container.
  JsonFields f(j);
  if (!f.member("defaultAction"))
    return invalid_argument(req.field + ": localhost profile " + req.localhost_path +
                            " is not a seccomp profile (no defaultAction)");
  f.required_string("defaultAction");
  f.array("architectures");
  f.array("syscalls");
  if (!f.ok()) return f.status().context(req.field + ": localhost profile " + req.localhost_path);
  return std::optional<nlohmann::json>(std::move(j));
}

}  // namespace berth
