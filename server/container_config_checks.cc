// check_container_config and check_command: command, args and env go to execve (no NUL), paths
// go into the OCI spec and the log path is opened under the pod's log directory (no escape from
// it), names and labels are stored and shown.
#include <string>

#include "field_checks.h"
#include "request_checks.h"

namespace berth {

namespace v1 = runtime::v1;

namespace {

Status check_security_context(const v1::LinuxContainerSecurityContext& sc) {
  const std::string field = "config.linux.security_context";
  for (const auto* p : {&sc.seccomp(), &sc.apparmor()}) {
    std::string f = field + (p == &sc.seccomp() ? ".seccomp" : ".apparmor") + ".localhost_ref";
    if (Status s = check_no_control(f, p->localhost_ref()); !s.ok()) return s;
  }
  for (const auto* v : {&sc.apparmor_profile(), &sc.seccomp_profile_path(), &sc.run_as_username()})
    if (Status s = check_no_control(field, *v); !s.ok()) return s;
  if (Status s = check_each_no_nul(field + ".capabilities.add_capabilities", sc.capabilities().add_capabilities());
      !s.ok())
    return s;
  if (Status s = check_each_no_nul(field + ".capabilities.drop_capabilities", sc.capabilities().drop_capabilities());
      !s.ok())
    return s;
  for (int i = 0; i < sc.masked_paths_size(); ++i)
    if (Status s = check_absolute_path(field_at(field + ".masked_paths", i), sc.masked_paths(i)); !s.ok()) return s;
  for (int i = 0; i < sc.readonly_paths_size(); ++i)
    if (Status s = check_absolute_path(field_at(field + ".readonly_paths", i), sc.readonly_paths(i)); !s.ok()) return s;
  return ok_status();
}

}  // namespace

Status check_container_config(const v1::ContainerConfig& c) {
  if (c.metadata().name().empty()) return invalid_argument("config.metadata.name: must not be empty");
  if (Status s = check_no_control("config.metadata.name", c.metadata().name()); !s.ok()) return s;
  if (c.image().image().empty()) return invalid_argument("config.image.image: must not be empty");
  if (Status s = check_no_control("config.image.image", c.image().image()); !s.ok()) return s;
  if (Status s = check_each_no_nul("config.command", c.command()); !s.ok()) return s;
  if (Status s = check_each_no_nul("config.args", c.args()); !s.ok()) return s;
  if (!c.working_dir().empty())
    if (Status s = check_absolute_path("config.working_dir", c.working_dir()); !s.ok()) return s;
  for (int i = 0; i < c.envs_size(); ++i) {
    if (Status s = check_no_control(field_at("config.envs", i) + ".key", c.envs(i).key()); !s.ok()) return s;
    if (Status s = check_no_nul(field_at("config.envs", i) + ".value", c.envs(i).value()); !s.ok()) return s;
  }
  for (int i = 0; i < c.mounts_size(); ++i) {
    const auto& m = c.mounts(i);
    if (Status s = check_absolute_path(field_at("config.mounts", i) + ".container_path", m.container_path()); !s.ok())
      return s;
    if (Status s = check_no_control(field_at("config.mounts", i) + ".host_path", m.host_path()); !s.ok()) return s;
  }
  for (int i = 0; i < c.devices_size(); ++i) {
    const auto& d = c.devices(i);
    if (Status s = check_absolute_path(field_at("config.devices", i) + ".container_path", d.container_path()); !s.ok())
      return s;
    if (Status s = check_no_control(field_at("config.devices", i) + ".host_path", d.host_path()); !s.ok()) return s;
  }
  if (Status s = check_map_no_nul("config.labels", c.labels()); !s.ok()) return s;
  if (Status s = check_map_no_nul("config.annotations", c.annotations()); !s.ok()) return s;
  if (!c.log_path().empty())
    if (Status s = check_relative_path("config.log_path", c.log_path()); !s.ok()) return s;
  return check_security_context(c.linux().security_context());
}

Status check_command(const std::vector<std::string>& cmd) {
  if (cmd.empty()) return invalid_argument("cmd: must not be empty");
  for (size_t i = 0; i < cmd.size(); ++i)
    if (Status s = check_no_nul("cmd[" + std::to_string(i) + "]", cmd[i]); !s.ok()) return s;
  return ok_status();
}

}  // namespace berth
