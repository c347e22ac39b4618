// The RuntimeDefault AppArmor profile: its text (denying at least what containerd's default profile
// denies), saved under <state>/apparmor and loaded with apparmor_parser (the kernel takes no other
// way) once per boot, or again when berth's text changed; whether it is loaded is read from securityfs.
#include "berth/apparmor_default.h"
#include "berth/file_text.h"

#include <filesystem>
#include <mutex>
#include <sstream>
#include <vector>

#include "berth/atomic_file.h"
#include "berth/command.h"
#include "berth/mutex.h"

namespace berth {

namespace {

// AppArmor has no "everything under A except B": the subtree B is carved out with one glob per
// character of its path, that character negated after the ones before it (for /sys/ keeping
// "fs/cgroup/": "/sys/[^f]**", "/sys/f[^s]**", …). `first_also_kept`: more characters the first
// one may be.
std::vector<std::string> outside(const std::string& base, const std::string& kept,
                                 const std::string& first_also_kept = "") {
  std::vector<std::string> globs;
  for (size_t i = 0; i < kept.size(); ++i)
    globs.push_back(base + kept.substr(0, i) + "[^" + (i == 0 ? first_also_kept : "") + kept[i] + "]**");
  return globs;
}

bool profile_loaded(const std::string& name) {
  std::istringstream in(read_text_file("/sys/kernel/security/apparmor/profiles"));
  for (std::string line; std::getline(in, line);)
    if (line.rfind(name + " ", 0) == 0) return true;
  return false;
}

}  // namespace

bool host_apparmor_enabled() { return read_text_file("/sys/module/apparmor/parameters/enabled").rfind("Y", 0) == 0; }

std::string apparmor_default_profile_text(const std::string& name) {
  std::string t = "#include <tunables/global>\n\n";
  t += "profile " + name + " flags=(attach_disconnected,mediate_deleted) {\n";
  t += "  #include <abstractions/base>\n\n";
  // Everything a process could do unconfined, then the deny rules below, which win over it.
  t += "  network,\n  capability,\n  file,\n  umount,\n\n";
  // berthd and the runtimes (confined by their own profiles on some hosts) stop containers.
  t += "  signal (receive) peer=unconfined,\n";
  t += "  signal (receive) peer=runc,\n";
  t += "  signal (receive) peer=crun,\n";
  t += "  signal (send,receive) peer=" + name + ",\n";
  t += "  ptrace (trace,read,tracedby,readby) peer=" + name + ",\n\n";
  t += "  deny mount,\n\n";
  // /proc: a process may write under pid directories (the kernel's own checks decide whose;
  // AppArmor cannot name "my pid") and nowhere else but the IPC namespace's shm limits.
  for (const std::string& g : outside("@{PROC}/", "sys/", "0-9")) t += "  deny " + g + " w,\n";
  for (const std::string& g : outside("@{PROC}/sys/", "kernel/shm")) t += "  deny " + g + " w,\n";
  for (const char* p : {"@{PROC}/sysrq-trigger", "@{PROC}/kcore"}) t += std::string("  deny ") + p + " rwklx,\n";
  t += "\n";
  // /sys: nothing writable but the container's cgroup files, and nothing at all readable of
  // firmware tables, power-capping counters (energy readings leak what other tenants compute)
  // and the LSMs' own files.
  for (const std::string& g : outside("/sys/", "fs/cgroup/")) t += "  deny " + g + " wklx,\n";
  for (const char* p : {"/sys/firmware/**", "/sys/devices/virtual/powercap/**", "/sys/kernel/security/**"})
    t += std::string("  deny ") + p + " rwklx,\n";
  t += "}\n";
  return t;
}

Result<std::string> ensure_apparmor_default_profile(const std::string& state_dir, const std::string& name) {
  static Mutex mu;
  MutexLock lock(mu);
  std::string dir = state_dir + "/apparmor";
  std::string file = dir + "/" + name;
  const std::string text = apparmor_default_profile_text(name);
  // A profile loaded this boot from other text (a berthd before an upgrade) is replaced.
  if (profile_loaded(name) && read_text_file(file) == text) return name;
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (Status s = write_file_atomically(file, text, 0644, false); !s.ok()) return s;
  auto r = run_command({.argv = {"apparmor_parser", "-Kr", file}, .timeout = std::chrono::seconds(30)});
  if (!r.ok()) return r.status().context("load the AppArmor profile " + name + " (is apparmor_parser installed?)");
  if (!r->success()) return internal_error("load the AppArmor profile " + name + ": apparmor_parser: " + r->err);
  return name;
}

}  // namespace berth
