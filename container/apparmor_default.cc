// The RuntimeDefault AppArmor profile: written once per boot under <state>/apparmor and loaded with
// apparmor_parser (the kernel takes no other way); whether it is loaded is read from securityfs.
#include "berth/apparmor_default.h"
#include "berth/file_text.h"

#include <filesystem>
#include <fstream>
#include <mutex>
#include <sstream>

#include "berth/atomic_file.h"
#include "berth/command.h"

namespace berth {

namespace {

bool profile_loaded(const std::string& name) {
  std::istringstream in(read_text_file("/sys/kernel/security/apparmor/profiles"));
  for (std::string line; std::getline(in, line);)
    if (line.rfind(name + " ", 0) == 0) return true;
  return false;
}

}  // namespace

bool host_apparmor_enabled() { return read_text_file("/sys/module/apparmor/parameters/enabled").rfind("Y", 0) == 0; }

std::string apparmor_default_profile_text(const std::string& name) {
  return "#include <tunables/global>\n\n"
         "profile " + name + " flags=(attach_disconnected,mediate_deleted) {\n"
         "  #include <abstractions/base>\n"
         "  network,\n"
         "  capability,\n"
         "  file,\n"
         "  umount,\n"
         "  signal (receive) peer=unconfined,\n"
         "  signal (send,receive) peer=" + name + ",\n"
         "  deny @{PROC}/* w,\n"
         "  deny @{PROC}/{[^1-9],[^1-9][^0-9],[^1-9s][^0-9y][^0-9s],[^1-9][^0-9][^0-9][^0-9/]*}/** w,\n"
         "  deny @{PROC}/sys/[^k]** w,\n"
         "  deny @{PROC}/sys/kernel/{?,??,[^s][^h][^m]**} w,\n"
         "  deny @{PROC}/sysrq-trigger rwklx,\n"
         "  deny @{PROC}/kcore rwklx,\n"
         "  deny mount,\n"
         "  deny /sys/[^f]*/** wklx,\n"
         "  deny /sys/f[^s]*/** wklx,\n"
         "  deny /sys/fs/[^c]*/** wklx,\n"
         "  deny /sys/fs/c[^g]*/** wklx,\n"
         "  deny /sys/fs/cg[^r]*/** wklx,\n"
         "  deny /sys/firmware/** rwklx,\n"
         "  deny /sys/kernel/security/** rwklx,\n"
         "  ptrace (trace,read,tracedby,readby) peer=" + name + ",\n"
         "}\n";
}

Result<std::string> ensure_apparmor_default_profile(const std::string& state_dir, const std::string& name) {
  static std::mutex mu;
  std::lock_guard lock(mu);
  if (profile_loaded(name)) return name;
  std::string dir = state_dir + "/apparmor";
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  std::string file = dir + "/" + name;
  if (Status s = write_file_atomically(file, apparmor_default_profile_text(name), 0644, false); !s.ok()) return s;
  auto r = run_command({.argv = {"apparmor_parser", "-Kr", file}, .timeout = std::chrono::seconds(30)});
  if (!r.ok()) return r.status().context("load the AppArmor profile " + name + " (is apparmor_parser installed?)");
  if (!r->success()) return internal_error("load the AppArmor profile " + name + ": apparmor_parser: " + r->err);
  return name;
}

}  // namespace berth
