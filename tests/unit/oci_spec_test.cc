// The typed OCI spec (berth/oci_spec.h): the config.json runc itself writes (`runc spec`, plain and
// rootless) reads and writes back unchanged, members no level models are kept, what is written
// leaves out what Go's runtime-spec leaves out, and a member of another type is an error naming it.
#include <gtest/gtest.h>

#include <algorithm>

#include <nlohmann/json.hpp>

#include "berth/command.h"
#include "berth/file_text.h"
#include "berth/oci_spec.h"
#include "berth/test/temp_dir.h"

namespace berth {
namespace {

using nlohmann::json;

bool has_namespace(const oci::Linux& linux, const std::string& type) {
  return std::any_of(linux.namespaces.begin(), linux.namespaces.end(),
                     [&](const oci::Namespace& n) { return n.type == type; });
}

json runc_spec(const std::vector<std::string>& flags) {
  test::TempDir bundle;
  std::vector<std::string> argv{"runc", "spec", "--bundle", bundle.path()};
  argv.insert(argv.end(), flags.begin(), flags.end());
  auto r = run_command({.argv = argv, .timeout = std::chrono::seconds(30)});
  EXPECT_TRUE(r.ok() && r->success()) << (r.ok() ? r->err : r.status().message());
  auto text = read_file_bytes(bundle.path() + "/config.json");
  EXPECT_TRUE(text.ok()) << text.status().message();
  return text.ok() ? json::parse(*text) : json();
}

TEST(OciSpec, WhatRuncWritesReadsBackUnchanged) {
  for (const std::vector<std::string>& flags : {std::vector<std::string>{}, std::vector<std::string>{"--rootless"}}) {
    SCOPED_TRACE(flags.empty() ? "runc spec" : "runc spec --rootless");
    const json written = runc_spec(flags);
    ASSERT_TRUE(written.is_object());
    auto spec = oci::spec_from_json(written);
    ASSERT_TRUE(spec.ok()) << spec.status().message();
    EXPECT_EQ(oci::to_json(*spec), written) << oci::to_json(*spec).dump(2) << "\nrunc wrote:\n" << written.dump(2);
    // Read into the types, not only kept: what berth's readers look at is there.
    ASSERT_TRUE(spec->process && spec->process->capabilities && spec->root && spec->linux);
    EXPECT_EQ(spec->process->args, std::vector<std::string>{"sh"});
    EXPECT_FALSE(spec->process->capabilities->bounding.empty());
    EXPECT_EQ(spec->process->rlimits.at(0).type, "RLIMIT_NOFILE");
    EXPECT_EQ(spec->root->path, "rootfs");
    EXPECT_TRUE(spec->process->unknown.empty()) << spec->process->unknown.dump();
    EXPECT_TRUE(spec->linux->unknown.empty()) << spec->linux->unknown.dump();
    EXPECT_TRUE(has_namespace(*spec->linux, "mount"));
    EXPECT_FALSE(spec->linux->masked_paths.empty());
    EXPECT_EQ(spec->mounts.at(0).destination, "/proc");
    if (flags.empty()) {
      EXPECT_TRUE(has_namespace(*spec->linux, "network"));
      ASSERT_TRUE(spec->linux->resources);
      ASSERT_EQ(spec->linux->resources->devices.size(), 1u);  // deny all
      EXPECT_FALSE(spec->linux->resources->devices[0].allow);
    } else {
      EXPECT_TRUE(has_namespace(*spec->linux, "user"));
      ASSERT_EQ(spec->linux->uid_mappings.size(), 1u);
      EXPECT_EQ(spec->linux->uid_mappings[0].length, 1u);
      EXPECT_EQ(spec->linux->uid_mappings[0].host_id, static_cast<uint32_t>(::geteuid()));
    }
  }
}

TEST(OciSpec, MembersNoLevelModelsAreKept) {
  const json written = json::parse(R"({
    "ociVersion": "1.2.0", "domainname": "example.org", "vm": {"hypervisor": {"path": "/h"}},
    "process": {"user": {"uid": 1, "gid": 2, "umask": 18, "additionalGids": [3], "username": "u"},
                "cwd": "/w", "args": ["a"], "ioPriority": {"class": "IOPRIO_CLASS_IDLE", "priority": 1},
                "scheduler": {"policy": "SCHED_OTHER"}, "consoleSize": {"height": 2, "width": 3},
                "capabilities": {"bounding": ["CAP_KILL"], "future": ["X"]},
                "rlimits": [{"type": "RLIMIT_CORE", "hard": 18446744073709551615, "soft": 0, "note": 1}],
                "oomScoreAdj": -1000, "selinuxLabel": "l", "apparmorProfile": "p", "terminal": true,
                "noNewPrivileges": true},
    "root": {"path": "/r", "readonly": true, "extra": 1},
    "mounts": [{"destination": "/m", "source": "/s", "options": ["bind"], "later": true,
                "uidMappings": [{"containerID": 0, "hostID": 1000, "size": 1}],
                "gidMappings": [{"containerID": 0, "hostID": 1000, "size": 1}]}],
    "hooks": {"prestart": [{"path": "/p", "args": ["p"], "env": ["A=1"], "timeout": 5, "x": 1}],
              "poststop": [{"path": "/q"}]},
    "annotations": {"a": "b"},
    "linux": {"namespaces": [{"type": "time", "flags": 1}], "timeOffsets": {"monotonic": {"secs": 1}},
              "devices": [{"path": "/dev/d", "type": "c", "major": 1, "minor": 3, "fileMode": 438, "uid": 0,
                           "gid": 0, "vendor": "x"}],
              "resources": {"pids": {"limit": 10}, "blockIO": {"weight": 10},
                            "cpu": {"shares": 2, "quota": -1, "period": 100000, "cpus": "0", "mems": "0",
                                    "realtimeRuntime": 5, "idle": 1},
                            "memory": {"limit": -1, "swap": 1, "swappiness": 10, "disableOOMKiller": false},
                            "devices": [{"allow": true, "type": "c", "major": 1, "access": "r", "v": 1}],
                            "hugepageLimits": [{"pageSize": "2MB", "limit": 1, "rsvd": 2}],
                            "unified": {"memory.high": "1G"}},
              "seccomp": {"defaultAction": "SCMP_ACT_ALLOW", "listenerPath": "/l"},
              "sysctl": {"net.ipv4.ip_forward": "1"}, "cgroupsPath": "a:b:c", "rootfsPropagation": "rslave",
              "maskedPaths": ["/m"], "readonlyPaths": ["/r"], "mountLabel": "m", "personality": {"domain": "LINUX"},
              "intelRdt": {"closID": "c"}}
  })");
  auto spec = oci::spec_from_json(written);
  ASSERT_TRUE(spec.ok()) << spec.status().message();
  EXPECT_EQ(oci::to_json(*spec), written) << oci::to_json(*spec).dump(2);
  EXPECT_EQ(spec->linux->resources->unknown, json::parse(R"({"pids": {"limit": 10}, "blockIO": {"weight": 10}})"));
  EXPECT_EQ(spec->process->rlimits[0].hard, UINT64_MAX);
  EXPECT_EQ(spec->linux->resources->memory->limit, -1);
  EXPECT_EQ(spec->linux->resources->cpu->quota, -1);
  EXPECT_EQ(spec->hooks.at("prestart").at(0).timeout, 5);
  EXPECT_EQ(spec->mounts[0].uid_mappings[0].host_id, 1000u);
  EXPECT_EQ(spec->process->user.unknown, json({{"username", "u"}}));
}

TEST(OciSpec, WrittenAsGoWritesIt) {
  // Members without omitempty are always written, the others only when set.
  EXPECT_EQ(oci::to_json(oci::Spec{}), json({{"ociVersion", ""}}));
  oci::Spec spec{.process = oci::Process{}, .root = oci::Root{.path = "/r"}, .linux = oci::Linux{}};
  EXPECT_EQ(oci::to_json(spec), json::parse(R"({"ociVersion": "", "process": {"user": {"uid": 0, "gid": 0}, "cwd": ""},
                                                "root": {"path": "/r"}, "linux": {}})"));
  // An empty capabilities object is not an absent one: a runtime gives none, not its defaults.
  spec.process->capabilities = oci::Capabilities{};
  EXPECT_EQ(oci::to_json(spec)["process"]["capabilities"], json::object());
  // A device's numbers and a rule's allow are always there; a rule's numbers only when set.
  spec.linux->devices.push_back({.type = "c", .path = "/dev/x"});
  spec.linux->resources = oci::Resources{.devices = {{.allow = false}}};
  EXPECT_EQ(oci::to_json(spec)["linux"]["devices"], json::parse(R"([{"path": "/dev/x", "type": "c", "major": 0,
                                                                      "minor": 0}])"));
  EXPECT_EQ(oci::to_json(spec)["linux"]["resources"], json::parse(R"({"devices": [{"allow": false}]})"));
}

// config.json is berth's own file, read back at exec, update and recovery: a damaged one is an
// error naming the member, never an exception.
TEST(OciSpec, AMemberOfAnotherTypeIsAnErrorNamingIt) {
  const json good = json::parse(R"({"ociVersion": "1.0.2",
    "process": {"user": {"uid": 0, "gid": 0}, "args": ["sh"], "cwd": "/",
                "rlimits": [{"type": "RLIMIT_NOFILE", "hard": 1, "soft": 1}]},
    "root": {"path": "/r"}, "mounts": [{"destination": "/proc", "type": "proc"}],
    "hooks": {"prestart": [{"path": "/bin/true"}]},
    "linux": {"namespaces": [{"type": "pid"}], "resources": {"cpu": {"shares": 2}},
              "devices": [{"path": "/dev/null", "type": "c", "major": 1, "minor": 3}]}})");
  ASSERT_TRUE(oci::spec_from_json(good).ok());
  struct Case {
    const char* pointer;
    json value;
    const char* why;
  } cases[] = {
      {"/process/rlimits", json::array({5}), "field 'process.rlimits[0]': type must be object, but is number"},
      {"/process/user/umask", "022", "field 'process.user.umask': type must be unsigned integer, but is string"},
      {"/process/user/uid", -1, "field 'process.user.uid': integer -1 out of range"},
      {"/process/user/gid", 4294967296, "field 'process.user.gid': integer 4294967296 out of range"},
      {"/process/oomScoreAdj", "low", "field 'process.oomScoreAdj': type must be integer, but is string"},
      {"/process/env", "PATH=/bin", "field 'process.env': type must be array, but is string"},
      {"/process", "sh", "field 'process': type must be object, but is string"},
      {"/mounts/0/destination", nullptr, "field 'mounts[0].destination': type must be string, but is null"},
      {"/mounts/0/options", json::array({1}), "field 'mounts[0].options[0]': type must be string, but is number"},
      {"/hooks/prestart/0/timeout", 1.5, "field 'hooks.prestart[0].timeout': type must be integer, but is number"},
      {"/annotations", json({{"a", 1}}), "field 'annotations.a': type must be string, but is number"},
      {"/linux/resources/cpu/shares", -2, "field 'linux.resources.cpu.shares': integer -2 out of range"},
      {"/linux/devices/0/major", "1", "field 'linux.devices[0].major': type must be integer, but is string"},
      {"/linux/namespaces/0", "pid", "field 'linux.namespaces[0]': type must be object, but is string"},
      {"/linux/seccomp", json::array(), "field 'linux.seccomp': type must be object, but is array"},
      {"/linux", 5, "field 'linux': type must be object, but is number"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.pointer);
    json bad = good;
    bad[json::json_pointer(c.pointer)] = c.value;
    Result<oci::Spec> r = internal_error("not run");
    EXPECT_NO_THROW(r = oci::spec_from_json(bad, "config.json"));
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.status().code(), Code::invalid_argument);
    EXPECT_EQ(r.status().message(), std::string("config.json: ") + c.why);
  }
  // A null member is an absent one, as Go reads it.
  json nulls = good;
  nulls["process"]["oomScoreAdj"] = nullptr;
  nulls["linux"]["seccomp"] = nullptr;
  auto read = oci::spec_from_json(nulls);
  ASSERT_TRUE(read.ok()) << read.status().message();
  EXPECT_FALSE(read->process->oom_score_adj);
  EXPECT_FALSE(read->linux->seccomp);
  EXPECT_EQ(oci::spec_from_json(json::array()).status().message(), "config.json: the spec is array, not an object");
}

TEST(OciSpec, AFileThatDoesNotReadIsInternalNamingIt) {
  test::TempDir dir;
  const std::string path = dir.path() + "/config.json";
  auto missing = oci::read_spec_file(path);
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), Code::internal);
  EXPECT_NE(missing.status().message().find(path), std::string::npos) << missing.status().message();
  test::write_file(path, "{\"ociVersion\": ");
  EXPECT_EQ(oci::read_spec_file(path).status().message(), path + ": not JSON");
  test::write_file(path, R"({"linux": {"cgroupsPath": 5}})");
  auto wrong = oci::read_spec_file(path);
  EXPECT_EQ(wrong.status().code(), Code::internal);
  EXPECT_EQ(wrong.status().message(), path + ": field 'linux.cgroupsPath': type must be string, but is number");
  test::write_file(path, R"({"ociVersion": "1.0.2", "linux": {"cgroupsPath": "/a/b"}})");
  auto fine = oci::read_spec_file(path);
  ASSERT_TRUE(fine.ok()) << fine.status().message();
  EXPECT_EQ(fine->linux->cgroups_path, "/a/b");
}

}  // namespace
}  // namespace berth
