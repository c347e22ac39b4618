// berth's RuntimeDefault seccomp allowlist as data: default action, filtered calls, capability-gated
// additions, calls never allowed, name resolution; reading Localhost profiles safely; and the
// default AppArmor profile's deny rules (parsed by apparmor_parser when the host has it).
#include <fcntl.h>
#include <seccomp.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <future>
#include <iostream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>

#include "berth/apparmor_default.h"
#include "berth/command.h"
#include "berth/seccomp_profile.h"
#include "berth/seccomp_syscalls.h"
#include "berth/test/temp_dir.h"

namespace berth {
namespace {

using json = nlohmann::json;
using test::TempDir;

// Every capability a group of the table names, and a few more.
std::vector<std::string> all_capabilities() {
  std::set<std::string> caps = {"CAP_CHOWN", "CAP_KILL", "CAP_NET_RAW", "CAP_SETUID", "CAP_SETGID"};
  for (const auto& g : runtime_default_syscalls())
    if (g.capability) caps.insert(g.capability);
  return {caps.begin(), caps.end()};
}

// containerd's default set, which berth gives a container that asks for nothing.
const std::vector<std::string> kDefaultCaps = {
    "CAP_CHOWN",   "CAP_DAC_OVERRIDE", "CAP_FSETID",           "CAP_FOWNER",
    "CAP_MKNOD",   "CAP_NET_RAW",      "CAP_SETGID",           "CAP_SETUID",
    "CAP_SETFCAP", "CAP_SETPCAP",      "CAP_NET_BIND_SERVICE", "CAP_SYS_CHROOT",
    "CAP_KILL",    "CAP_AUDIT_WRITE"};

bool known(const std::string& name) { return seccomp_syscall_resolve_name(name.c_str()) != __NR_SCMP_ERROR; }

// Names allowed without any argument condition.
std::set<std::string> plainly_allowed(const json& profile) {
  std::set<std::string> out;
  for (const auto& r : profile["syscalls"])
    if (r["action"] == "SCMP_ACT_ALLOW" && !r.contains("args"))
      for (const auto& n : r["names"]) out.insert(n.get<std::string>());
  return out;
}

// Every rule naming `name`.
std::vector<json> rules_for(const json& profile, const std::string& name) {
  std::vector<json> out;
  for (const auto& r : profile["syscalls"])
    for (const auto& n : r["names"])
      if (n == name) out.push_back(r);
  return out;
}

TEST(RuntimeDefaultSeccomp, RefusesWhatItDoesNotName) {
  json p = runtime_default_seccomp(kDefaultCaps);
  EXPECT_EQ(p["defaultAction"], "SCMP_ACT_ERRNO");
  EXPECT_EQ(p["defaultErrnoRet"], EPERM);
  EXPECT_EQ(p["architectures"],
            json({"SCMP_ARCH_X86_64", "SCMP_ARCH_X86", "SCMP_ARCH_X32", "SCMP_ARCH_AARCH64", "SCMP_ARCH_ARM"}));
  // Only ALLOW rules, and the one ENOSYS for clone3: nothing is refused by a rule the default
  // would not refuse anyway.
  for (const auto& r : p["syscalls"]) {
    if (r["action"] == "SCMP_ACT_ALLOW") continue;
    EXPECT_EQ(r["names"], json({"clone3"})) << r.dump();
    EXPECT_EQ(r["errnoRet"], ENOSYS);
  }
  auto allowed = plainly_allowed(p);
  for (const char* n :
       {"read", "write", "openat", "execve", "mmap", "futex", "epoll_wait", "statx", "rseq", "membarrier", "wait4",
        "pidfd_open", "faccessat2", "close_range", "getrandom", "memfd_create", "ptrace", "adjtimex", "clock_adjtime"})
    EXPECT_EQ(allowed.count(n), 1u) << n;
  // Real syscalls this kernel has that the list leaves out: refused by the default action.
  for (const char* n : {"statmount", "listmount", "open_by_handle_at", "quotactl"})
    EXPECT_EQ(allowed.count(n), 0u) << n;
}

TEST(RuntimeDefaultSeccomp, NeverAllowedWhateverTheCapabilities) {
  std::set<std::string> listed;
  for (const auto& g : runtime_default_syscalls()) listed.insert(g.names.begin(), g.names.end());
  for (const auto& caps : {std::vector<std::string>{}, kDefaultCaps, all_capabilities()}) {
    json p = runtime_default_seccomp(caps);
    for (const char* n : runtime_default_never_allowed()) {
      EXPECT_EQ(listed.count(n), 0u) << n << " is both listed and never allowed";
      for (const auto& r : rules_for(p, n)) EXPECT_NE(r["action"], "SCMP_ACT_ALLOW") << n << ": " << r.dump();
    }
    for (const char* n :
         {"io_uring_setup", "io_uring_enter", "io_uring_register", "keyctl", "kexec_load", "userfaultfd"})
      EXPECT_TRUE(rules_for(p, n).empty()) << n;
  }
}

TEST(RuntimeDefaultSeccomp, ArgumentFilters) {
  json p = runtime_default_seccomp(kDefaultCaps);
  // personality: the five common personas, each an equality on arg 0.
  std::set<uint64_t> personas;
  for (const auto& r : rules_for(p, "personality")) {
    ASSERT_EQ(r["names"].size(), 1u);
    ASSERT_EQ(r["args"].size(), 1u) << r.dump();
    EXPECT_EQ(r["args"][0]["index"], 0);
    EXPECT_EQ(r["args"][0]["op"], "SCMP_CMP_EQ");
    personas.insert(r["args"][0]["value"].get<uint64_t>());
  }
  EXPECT_EQ(personas, (std::set<uint64_t>{0x0, 0x8, 0x20000, 0x20008, 0xffffffff}));
  // socket: every family but AF_VSOCK.
  auto sock = rules_for(p, "socket");
  ASSERT_EQ(sock.size(), 1u);
  EXPECT_EQ(sock[0]["action"], "SCMP_ACT_ALLOW");
  EXPECT_EQ(sock[0]["args"], json::parse(R"([{"index":0,"op":"SCMP_CMP_NE","value":40}])"));
  // clone: allowed only when no namespace flag is set; clone3: ENOSYS.
  auto clone = rules_for(p, "clone");
  ASSERT_EQ(clone.size(), 1u);
  EXPECT_EQ(clone[0]["action"], "SCMP_ACT_ALLOW");
  EXPECT_EQ(clone[0]["args"],
            json::parse(R"([{"index":0,"op":"SCMP_CMP_MASKED_EQ","value":2114060288,"valueTwo":0}])"));
  EXPECT_EQ(0x7E020000u, 2114060288u);
  auto clone3 = rules_for(p, "clone3");
  ASSERT_EQ(clone3.size(), 1u);
  EXPECT_EQ(clone3[0]["action"], "SCMP_ACT_ERRNO");
  EXPECT_EQ(clone3[0]["errnoRet"], ENOSYS);
  for (const char* n : {"clone", "clone3", "personality", "socket"}) EXPECT_EQ(plainly_allowed(p).count(n), 0u) << n;

  // With CAP_SYS_ADMIN both clones are plain allows; the other filters stay.
  auto caps = kDefaultCaps;
  caps.push_back("CAP_SYS_ADMIN");
  json admin = runtime_default_seccomp(caps);
  auto allowed = plainly_allowed(admin);
  EXPECT_EQ(allowed.count("clone"), 1u);
  EXPECT_EQ(allowed.count("clone3"), 1u);
  EXPECT_EQ(rules_for(admin, "clone").size(), 1u);
  EXPECT_EQ(rules_for(admin, "clone3").size(), 1u);
  EXPECT_EQ(rules_for(admin, "socket"), sock);
  EXPECT_EQ(allowed.count("personality"), 0u);
}

TEST(RuntimeDefaultSeccomp, CapabilitiesAddWhatTheyStandFor) {
  std::set<std::string> unconditional;
  for (const auto& g : runtime_default_syscalls())
    if (!g.capability) unconditional.insert(g.names.begin(), g.names.end());
  auto none = plainly_allowed(runtime_default_seccomp({}));
  for (const auto& g : runtime_default_syscalls()) {
    if (!g.capability) continue;
    SCOPED_TRACE(g.capability);
    auto with = plainly_allowed(runtime_default_seccomp({g.capability}));
    for (const char* n : g.names) {
      EXPECT_EQ(unconditional.count(n), 0u) << n << " is gated and unconditional";
      EXPECT_EQ(none.count(n), 0u) << n;
      EXPECT_EQ(with.count(n), known(n) ? 1u : 0u) << n;
    }
    // Nothing else comes with the capability (SYS_ADMIN also frees clone and clone3).
    for (const auto& n : with) {
      if (none.count(n) || n == "clone" || n == "clone3") continue;
      EXPECT_NE(std::find_if(g.names.begin(), g.names.end(), [&](const char* x) { return n == x; }), g.names.end())
          << n;
    }
  }
  // The ones the brief names, checked by name.
  std::map<std::string, std::vector<std::string>> expected = {
      {"CAP_SYS_ADMIN",
       {"mount", "umount2", "unshare", "setns", "sethostname", "setdomainname", "pivot_root", "bpf", "perf_event_open",
        "fanotify_init", "name_to_handle_at", "quotactl", "fsopen", "fsconfig", "fsmount", "fspick", "move_mount",
        "open_tree", "mount_setattr"}},
      {"CAP_SYS_BOOT", {"reboot"}},
      {"CAP_SYS_MODULE", {"init_module", "finit_module", "delete_module"}},
      {"CAP_SYS_PTRACE", {"kcmp", "process_vm_readv", "process_vm_writev", "pidfd_getfd", "process_madvise"}},
      {"CAP_SYS_RAWIO", {"iopl", "ioperm"}},
      {"CAP_SYS_TIME", {"settimeofday", "clock_settime"}},
      {"CAP_SYS_PACCT", {"acct"}},
      {"CAP_SYS_NICE", {"get_mempolicy", "mbind", "set_mempolicy", "migrate_pages", "move_pages"}},
      {"CAP_SYSLOG", {"syslog"}},
      {"CAP_DAC_READ_SEARCH", {"open_by_handle_at"}},
      {"CAP_SYS_CHROOT", {"chroot"}},
  };
  for (const auto& [cap, names] : expected) {
    auto with = plainly_allowed(runtime_default_seccomp({cap}));
    for (const auto& n : names) {
      EXPECT_EQ(none.count(n), 0u) << n;
      EXPECT_EQ(with.count(n), 1u) << cap << " " << n;
    }
  }
  // A default container can chroot.
  EXPECT_EQ(plainly_allowed(runtime_default_seccomp(kDefaultCaps)).count("chroot"), 1u);
}

TEST(RuntimeDefaultSeccomp, NamesResolveOrAreLeftOut) {
  json p = runtime_default_seccomp(all_capabilities());
  std::set<std::string> in_profile;
  for (const auto& r : p["syscalls"])
    for (const auto& n : r["names"]) in_profile.insert(n.get<std::string>());
  std::set<std::string> skipped;
  for (const auto& g : runtime_default_syscalls())
    for (const char* n : g.names) {
      EXPECT_EQ(in_profile.count(n), known(n) ? 1u : 0u) << n;
      if (!known(n)) skipped.insert(n);
    }
  for (const auto& n : in_profile) EXPECT_TRUE(known(n)) << n;
  // libseccomp knows the 32-bit-only calls by pseudo numbers, so they stay in for those ABIs.
  EXPECT_EQ(in_profile.count("socketcall"), 1u);
  EXPECT_EQ(in_profile.count("_llseek"), 1u);
  std::string s;
  for (const auto& n : skipped) s += " " + n;
  std::cout << "[          ] names this libseccomp does not know (left out):" << s << "\n";
}

// --- Localhost profiles ---

Result<std::optional<json>> localhost(const std::string& path) {
  return seccomp_section(
      {.kind = SeccompKind::localhost, .localhost_path = path, .field = "config.linux.security_context.seccomp"});
}

TEST(SeccompLocalhostFile, AFifoIsRefusedWithoutWaiting) {
  TempDir dir;
  std::string fifo = dir / "profile.json";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  auto f = std::async(std::launch::async, [&] { return localhost(fifo); });
  if (f.wait_for(std::chrono::seconds(5)) != std::future_status::ready) {
    // Let the blocked reader go before failing, so the test ends.
    int fd = ::open(fifo.c_str(), O_WRONLY | O_NONBLOCK);
    if (fd >= 0) ::close(fd);
    FAIL() << "reading a FIFO as a profile blocked";
  }
  auto r = f.get();
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), Code::invalid_argument);
  EXPECT_NE(r.status().message().find("config.linux.security_context.seccomp"), std::string::npos)
      << r.status().message();
  EXPECT_NE(r.status().message().find("not a regular file"), std::string::npos) << r.status().message();
}

TEST(SeccompLocalhostFile, DirectoriesMissingFilesAndHugeFilesAreRefused) {
  TempDir dir;
  auto refused = [](const Result<std::optional<json>>& r, const std::string& why) {
    ASSERT_FALSE(r.ok()) << why;
    EXPECT_EQ(r.status().code(), Code::invalid_argument);
    EXPECT_NE(r.status().message().find("config.linux.security_context.seccomp"), std::string::npos)
        << r.status().message();
    EXPECT_NE(r.status().message().find(why), std::string::npos) << r.status().message();
  };
  refused(localhost(dir.path()), "not a regular file");
  refused(localhost(dir / "absent.json"), "does not exist");
  refused(localhost("relative/profile.json"), "not an absolute path");
  // Valid JSON, but over the cap: refused for its size, not parsed.
  std::string big = R"({"defaultAction":"SCMP_ACT_ALLOW","syscalls":[],"pad":")" + std::string(1 << 20, 'x') + "\"}";
  test::write_file(dir / "big.json", big);
  refused(localhost(dir / "big.json"), "larger than");
}

TEST(SeccompLocalhostFile, AValidProfileIsReturnedAsItIs) {
  TempDir dir;
  const std::string text =
      R"({"defaultAction":"SCMP_ACT_ERRNO","syscalls":[{"names":["io_uring_setup","read"],"action":"SCMP_ACT_ALLOW"}]})";
  test::write_file(dir / "p.json", text);
  ::symlink((dir / "p.json").c_str(), (dir / "link.json").c_str());
  for (const char* name : {"p.json", "link.json"}) {
    auto r = localhost(dir / name);
    ASSERT_TRUE(r.ok()) << r.status().message();
    ASSERT_TRUE(r->has_value());
    EXPECT_EQ(**r, json::parse(text));
  }
}

// --- The default AppArmor profile ---

// The deny rules of a profile text: glob -> permissions.
std::vector<std::pair<std::string, std::string>> deny_rules(const std::string& text) {
  std::vector<std::pair<std::string, std::string>> out;
  static const std::regex rule(R"(^\s*deny\s+(\S+)\s+([rwklx]+),\s*$)");
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    std::smatch m;
    if (std::regex_match(line, m, rule)) out.emplace_back(m[1], m[2]);
  }
  return out;
}

// AppArmor globbing as far as the profile uses it: ** crosses '/', * does not, [^…] classes.
bool glob_matches(const std::string& glob, const std::string& path) {
  std::string re;
  std::string g = std::regex_replace(glob, std::regex(R"(@\{PROC\})"), "/proc");
  for (size_t i = 0; i < g.size(); ++i) {
    if (g.compare(i, 2, "**") == 0)
      re += ".*", ++i;
    else if (g[i] == '*')
      re += "[^/]*";
    else if (g[i] == '[') {
      size_t end = g.find(']', i);
      re += g.substr(i, end - i + 1);
      i = end;
    } else if (std::isalnum(static_cast<unsigned char>(g[i])) || g[i] == '/' || g[i] == '_')
      re += g[i];
    else
      re += std::string("\\") + g[i];
  }
  return std::regex_match(path, std::regex(re));
}

// Whether the profile denies `perm` (one letter) on `path`.
bool denies(const std::string& text, const std::string& path, char perm) {
  for (const auto& [glob, perms] : deny_rules(text))
    if (perms.find(perm) != std::string::npos && glob_matches(glob, path)) return true;
  return false;
}

TEST(AppArmorDefault, DeniesWhatContainerdDenies) {
  std::string t = apparmor_default_profile_text("berth-default");
  EXPECT_NE(t.find("profile berth-default flags=(attach_disconnected,mediate_deleted) {"), std::string::npos);
  EXPECT_NE(t.find("\n  deny mount,\n"), std::string::npos);
  EXPECT_NE(t.find("signal (send,receive) peer=berth-default,"), std::string::npos);
  EXPECT_NE(t.find("ptrace (trace,read,tracedby,readby) peer=berth-default,"), std::string::npos);
  // /proc: writes only under pid directories and to the shm knobs of /proc/sys/kernel.
  for (const char* p : {"/proc/sys/net/ipv4/ip_forward", "/proc/sys/kernel/core_pattern", "/proc/sys/vm/drop_caches",
                        "/proc/sys/fs/binfmt_misc/register", "/proc/sysrq-trigger", "/proc/sysvipc/shm", "/proc/kcore",
                        "/proc/acpi/wakeup", "/proc/irq/1/smp_affinity", "/proc/sys/kernel/msgmax", "/proc/bus/pci/x",
                        "/proc/timer_list", "/proc/scsi/x"})
    EXPECT_TRUE(denies(t, p, 'w')) << p;
  for (const char* p : {"/proc/1/oom_score_adj", "/proc/1234/attr/current", "/proc/42/task/43/comm",
                        "/proc/sys/kernel/shmmax", "/proc/sys/kernel/shmall", "/proc/sys/kernel/shm_rmid_forced"})
    EXPECT_FALSE(denies(t, p, 'w')) << p;
  for (const char* p : {"/proc/sysrq-trigger", "/proc/kcore"}) EXPECT_TRUE(denies(t, p, 'r')) << p;
  EXPECT_FALSE(denies(t, "/proc/sys/net/core/somaxconn", 'r'));
  EXPECT_FALSE(denies(t, "/proc/cpuinfo", 'r'));
  // /sys: writes only under /sys/fs/cgroup; firmware, powercap and securityfs not even read.
  for (const char* p : {"/sys/class/net/eth0/mtu", "/sys/kernel/mm/transparent_hugepage/enabled", "/sys/fs/bpf/x",
                        "/sys/fs/fuse/connections/1/abort", "/sys/fs/cgroupx/y", "/sys/module/x/parameters/y",
                        "/sys/devices/system/cpu/cpu1/online", "/sys/power/state", "/sys/bus/pci/rescan"})
    EXPECT_TRUE(denies(t, p, 'w')) << p;
  for (const char* p : {"/sys/fs/cgroup/cpu.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"})
    EXPECT_FALSE(denies(t, p, 'w')) << p;
  for (const char* p :
       {"/sys/firmware/acpi/tables/DSDT", "/sys/devices/virtual/powercap/intel-rapl/intel-rapl:0/energy_uj",
        "/sys/kernel/security/apparmor/profiles"})
    for (char perm : {'r', 'w', 'k', 'l', 'x'}) EXPECT_TRUE(denies(t, p, perm)) << p << " " << perm;
  EXPECT_FALSE(denies(t, "/sys/class/net/eth0/mtu", 'r'));
}

// apparmor_parser (Debian package "apparmor") compiles the text without loading it.
TEST(AppArmorDefault, ParsesWithApparmorParser) {
  auto parser = find_executable("apparmor_parser", {"/usr/sbin", "/sbin", "/usr/bin"});
  if (!parser) GTEST_SKIP() << "apparmor_parser is not installed (Debian package apparmor)";
  if (::access("/etc/apparmor.d/tunables/global", R_OK) != 0) GTEST_SKIP() << "no /etc/apparmor.d/tunables/global";
  TempDir dir;
  auto compiles = [&](const std::string& text) {
    test::write_file(dir / "profile", text);
    auto r = run_command(
        {.argv = {*parser, "--skip-kernel-load", "--skip-cache", "--skip-read-cache", "--stdout", dir / "profile"},
         .timeout = std::chrono::seconds(60),
         .die_with_parent = false});
    EXPECT_TRUE(r.ok()) << r.status().message();
    if (r.ok() && !r->success()) std::cout << "[          ] apparmor_parser: " << r->err << "\n";
    return r.ok() && r->success() && !r->out.empty();
  };
  EXPECT_TRUE(compiles(apparmor_default_profile_text("berth-default")));
  EXPECT_TRUE(compiles(apparmor_default_profile_text("other-name")));
  // The check can fail: a broken rule is refused.
  std::string broken = apparmor_default_profile_text("berth-default");
  broken.insert(broken.rfind('}'), "  deny /sys/** wzq,\n");
  EXPECT_FALSE(compiles(broken));
}

}  // namespace
}  // namespace berth
