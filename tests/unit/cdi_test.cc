// CDI: spec files in JSON and YAML exposing the host's /dev/null and /dev/zero under vendor names,
// precedence between dirs, files replaced, added and removed being noticed, invalid specs making
// only their own devices unavailable, the resolve errors, and edits applied to an OCI spec.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <filesystem>
#include <thread>

#include <nlohmann/json.hpp>

#include "berth/cdi.h"
#include "berth/test/temp_dir.h"

namespace berth {
namespace {

using nlohmann::json;

// A JSON spec (0.7.0: additionalGids) with spec-level env, mounts, a hook and GIDs, and two
// devices: the host's /dev/null as itself and /dev/zero under another name.
const char* kNullSpec = R"({
  "cdiVersion": "0.7.0",
  "kind": "vendor.example/null",
  "containerEdits": {
    "env": ["VENDOR_NULL=1", "VENDOR_SPEC=a"],
    "mounts": [
      {"hostPath": "/srv/vendor", "containerPath": "/opt/vendor", "options": ["rbind", "ro"]},
      {"hostPath": "/srv/vendor/lib", "containerPath": "/opt/vendor/lib/x", "type": "bind", "options": ["rbind"]}
    ],
    "hooks": [{"hookName": "createContainer", "path": "/usr/bin/vendor-hook", "args": ["vendor-hook", "create"],
               "env": ["HOOK=1"], "timeout": 5}],
    "additionalGids": [44, 0]
  },
  "devices": [
    {"name": "null", "containerEdits": {"deviceNodes": [{"path": "/dev/null"}]}},
    {"name": "zero", "containerEdits": {"deviceNodes": [
      {"path": "/dev/vendor-zero", "hostPath": "/dev/zero", "permissions": "rw", "fileMode": 384, "uid": 7}]}}
  ]
})";

// A YAML spec: YAML integer forms (octal file mode, hex major), a device-level poststart hook, a
// tmpfs mount, and "additionalGIDs" as the CDI spec text spells it.
const char* kYamlSpec = R"(cdiVersion: 0.7.0
kind: other.example/yaml
devices:
  - name: zero
    containerEdits:
      env: [YAML_ZERO=on]
      deviceNodes:
        - path: /dev/yaml-zero
          hostPath: /dev/zero
          type: c
          major: 0x1
          minor: 5
          fileMode: 0640
          gid: 5
      mounts:
        - hostPath: tmpfs
          containerPath: /run/yaml
          type: tmpfs
          options: [nosuid, "size=1m"]
      hooks:
        - hookName: poststart
          path: /usr/bin/yaml-hook
      additionalGIDs: [44, 45]
)";

std::string env_spec(const std::string& kind, const std::string& name, const std::string& env,
                     const char* version = "0.6.0") {
  return json{
      {"cdiVersion", version}, {"kind", kind}, {"devices", {{{"name", name}, {"containerEdits", {{"env", {env}}}}}}}}
      .dump();
}

class CdiTest : public ::testing::Test {
 protected:
  std::string dir(const std::string& name) {
    std::string d = tmp_ / name;
    std::filesystem::create_directories(d);
    return d;
  }
  test::TempDir tmp_{"berth-cdi"};
};

std::vector<std::string> env_of(const CdiEdits& e) {
  std::vector<std::string> out;
  for (const auto& b : e.blocks) out.insert(out.end(), b.edits.env.begin(), b.edits.env.end());
  return out;
}

// ---- names ----

TEST(CdiNames, FullyQualifiedNamesAreChecked) {
  for (const char* good : {"vendor.example/class=name", "nvidia.com/gpu=0", "a/b=c", "v-1.x_y/c.l-a_ss=dev:0.1-x_y"})
    EXPECT_TRUE(check_cdi_device_name(good).ok()) << good;
  for (const char* bad :
       {"", "gpu0", "vendor.example/class", "vendor.example/class=", "/dev/null", "=x", "vendor/=x", "1vendor/class=x",
        "vendor/class-=x", "vendor/cl/ass=x", "vendor/class=-x", "vendor/class=x y", "vendor/class=x/y"}) {
    Status s = check_cdi_device_name(bad);
    EXPECT_EQ(s.code(), Code::invalid_argument) << bad;
  }
  EXPECT_EQ(check_cdi_device_name("vendor.example/class").message(),
            "CDI device 'vendor.example/class': not a fully qualified name (vendor/class=name): no '='");
  EXPECT_EQ(check_cdi_device_name("vendor/cl/ass=x").message(),
            "CDI device 'vendor/cl/ass=x': not a fully qualified name (vendor/class=name): class 'cl/ass' holds a "
            "character other than letters, digits, '-', '_', '.'");
}

// ---- resolving ----

TEST_F(CdiTest, JsonAndYamlSpecsResolveToSpecThenDeviceEdits) {
  std::string etc = dir("etc");
  test::write_file(etc + "/null.json", kNullSpec);
  test::write_file(etc + "/yaml.yaml", kYamlSpec);
  CdiRegistry registry({etc});
  EXPECT_EQ(registry.known_devices(), (std::vector<std::string>{"other.example/yaml=zero", "vendor.example/null=null",
                                                                "vendor.example/null=zero"}));

  auto edits = registry.resolve(
      {"vendor.example/null=zero", "other.example/yaml=zero", "vendor.example/null=null", "vendor.example/null=zero"});
  ASSERT_TRUE(edits.ok()) << edits.status().message();
  // The null spec's own edits once, before its first device; a repeated name counts once.
  ASSERT_EQ(edits->blocks.size(), 4u);
  EXPECT_EQ(edits->blocks[0].origin, etc + "/null.json");
  EXPECT_EQ(edits->blocks[1].origin, etc + "/null.json: device vendor.example/null=zero");
  EXPECT_EQ(edits->blocks[2].origin, etc + "/yaml.yaml: device other.example/yaml=zero");
  EXPECT_EQ(edits->blocks[3].origin, etc + "/null.json: device vendor.example/null=null");

  const CdiContainerEdits& spec = edits->blocks[0].edits;
  EXPECT_EQ(spec.env, (std::vector<std::string>{"VENDOR_NULL=1", "VENDOR_SPEC=a"}));
  ASSERT_EQ(spec.mounts.size(), 2u);
  EXPECT_EQ(spec.mounts[1].type, "bind");
  ASSERT_EQ(spec.hooks.size(), 1u);
  EXPECT_EQ(spec.hooks[0].hook_name, "createContainer");
  EXPECT_EQ(spec.hooks[0].timeout, 5);
  EXPECT_EQ(spec.additional_gids, (std::vector<uint32_t>{44, 0}));

  const CdiDeviceNode& zero = edits->blocks[1].edits.device_nodes.at(0);
  EXPECT_EQ(zero.path, "/dev/vendor-zero");
  EXPECT_EQ(zero.host_path, "/dev/zero");
  EXPECT_EQ(zero.file_mode, 0600u);
  EXPECT_EQ(zero.uid, 7u);
  EXPECT_EQ(zero.gid, std::nullopt);

  const CdiContainerEdits& y = edits->blocks[2].edits;
  const CdiDeviceNode& yz = y.device_nodes.at(0);
  EXPECT_EQ(yz.type, "c");
  EXPECT_EQ(yz.major, 1);
  EXPECT_EQ(yz.minor, 5);
  EXPECT_EQ(yz.file_mode, 0640u);  // YAML 1.1 octal, as the CDI reference's decoder reads it
  EXPECT_EQ(y.mounts.at(0).options, (std::vector<std::string>{"nosuid", "size=1m"}));
  EXPECT_EQ(y.hooks.at(0).hook_name, "poststart");
  EXPECT_EQ(y.additional_gids, (std::vector<uint32_t>{44, 45}));
}

TEST_F(CdiTest, AnUnknownDeviceNamesTheKnownOnes) {
  std::string etc = dir("etc");
  test::write_file(etc + "/null.json", kNullSpec);
  CdiRegistry registry({etc});
  auto edits = registry.resolve({"vendor.example/null=null", "vendor.example/class=x"});
  ASSERT_FALSE(edits.ok());
  EXPECT_EQ(edits.status().code(), Code::not_found);
  EXPECT_EQ(edits.status().message(),
            "CDI device 'vendor.example/class=x': unknown (known: vendor.example/null=null, vendor.example/null=zero)");

  CdiRegistry empty({tmp_ / "none"});
  EXPECT_EQ(empty.resolve({"vendor.example/class=x"}).status().message(),
            "CDI device 'vendor.example/class=x': unknown (known: none)");
  EXPECT_EQ(empty.resolve({"gpu0"}).status().code(), Code::invalid_argument);
  auto nothing = empty.resolve({});
  ASSERT_TRUE(nothing.ok());
  EXPECT_TRUE(nothing->blocks.empty());
}

// ---- precedence ----

TEST_F(CdiTest, ALaterDirOverridesAnEarlierOne) {
  std::string etc = dir("etc"), run = dir("run");
  test::write_file(etc + "/a.json", env_spec("vendor.example/class", "dev", "FROM=etc"));
  test::write_file(etc + "/b.json", env_spec("vendor.example/class", "only-etc", "FROM=etc"));
  test::write_file(run + "/z.yaml",
                   "cdiVersion: 0.6.0\nkind: vendor.example/class\ndevices:\n"
                   "  - name: dev\n    containerEdits:\n      env: [FROM=run]\n");
  auto edits = CdiRegistry({etc, run}).resolve({"vendor.example/class=dev", "vendor.example/class=only-etc"});
  ASSERT_TRUE(edits.ok()) << edits.status().message();
  EXPECT_EQ(env_of(*edits), (std::vector<std::string>{"FROM=run", "FROM=etc"}));
  EXPECT_EQ(edits->blocks[0].origin, run + "/z.yaml: device vendor.example/class=dev");

  // The other order of the same dirs: etc is now the later one.
  edits = CdiRegistry({run, etc}).resolve({"vendor.example/class=dev"});
  ASSERT_TRUE(edits.ok());
  EXPECT_EQ(env_of(*edits), (std::vector<std::string>{"FROM=etc"}));
}

// A spec file a user other than root can change, or one in a dir they can write, is skipped
// unread (its edits would run as root on the node); the error says why, and it is read again once
// only root can write it.
TEST_F(CdiTest, SpecsThatNonRootCanWriteAreSkipped) {
  std::string etc = dir("etc"), shared = dir("shared");
  test::write_file(etc + "/open.json", env_spec("vendor.example/class", "open", "A=1"), 0666);
  test::write_file(etc + "/other.json", env_spec("vendor.example/class", "owned", "B=1"), 0644);
  ASSERT_EQ(::chown((etc + "/other.json").c_str(), 1000, 0), 0);
  test::write_file(shared + "/in-open-dir.json", env_spec("vendor.example/class", "in-open-dir", "C=1"), 0644);
  ASSERT_EQ(::chmod(shared.c_str(), 01777), 0);
  CdiRegistry registry({etc, shared});
  auto open = registry.resolve({"vendor.example/class=open"});
  ASSERT_FALSE(open.ok());
  EXPECT_NE(open.status().message().find(etc + "/open.json: skipped: it is writable by every user (mode 0666)"),
            std::string::npos)
      << open.status().message();
  auto owned = registry.resolve({"vendor.example/class=owned"});
  ASSERT_FALSE(owned.ok());
  EXPECT_NE(owned.status().message().find("skipped: it is owned by uid 1000"), std::string::npos)
      << owned.status().message();
  auto in_open_dir = registry.resolve({"vendor.example/class=in-open-dir"});
  ASSERT_FALSE(in_open_dir.ok());
  EXPECT_NE(
      in_open_dir.status().message().find("skipped: its dir " + shared + " is writable by every user (mode 1777)"),
      std::string::npos)
      << in_open_dir.status().message();
  EXPECT_TRUE(registry.known_devices().empty());

  ASSERT_EQ(::chmod((etc + "/open.json").c_str(), 0644), 0);
  ASSERT_EQ(::chmod(shared.c_str(), 0755), 0);
  auto now = registry.resolve({"vendor.example/class=open", "vendor.example/class=in-open-dir"});
  ASSERT_TRUE(now.ok()) << now.status().message();
  EXPECT_EQ(env_of(*now), (std::vector<std::string>{"A=1", "C=1"}));
}

// The annotations device plugins write (cdi.k8s.io/<plugin>_<id>: "vendor/class=name,..."): read
// in key order, other keys ignored, a name that is not qualified refused naming the key.
TEST(CdiNames, AnnotationsAskForDevices) {
  auto names = cdi_annotation_devices({{"cdi.k8s.io/vendor.gpu_1", "nvidia.com/gpu=1,nvidia.com/gpu=2"},
                                       {"cdi.k8s.io/a_0", "vendor.example/class=x"},
                                       {"io.kubernetes.cri.sandbox-id", "nvidia.com/gpu=9"},
                                       {"cdi.k8s.io", "vendor.example/class=not-a-request"}});
  ASSERT_TRUE(names.ok()) << names.status().message();
  EXPECT_EQ(*names, (std::vector<std::string>{"vendor.example/class=x", "nvidia.com/gpu=1", "nvidia.com/gpu=2"}));
  auto bad = cdi_annotation_devices({{"cdi.k8s.io/plugin_0", "nvidia.com/gpu=0,gpu1"}});
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), Code::invalid_argument);
  EXPECT_EQ(
      bad.status().message().find("annotation cdi.k8s.io/plugin_0: CDI device 'gpu1': not a fully qualified name"), 0u)
      << bad.status().message();
  EXPECT_TRUE(cdi_annotation_devices({}).value().empty());
}

TEST_F(CdiTest, TwoFilesOfOneDirDefiningADeviceMakeItUnavailable) {
  std::string etc = dir("etc"), run = dir("run");
  test::write_file(etc + "/a.json", json{{"cdiVersion", "0.6.0"},
                                         {"kind", "vendor.example/class"},
                                         {"devices",
                                          {{{"name", "dev"}, {"containerEdits", {{"env", {"A=1"}}}}},
                                           {{"name", "other"}, {"containerEdits", {{"env", {"O=1"}}}}}}}}
                                        .dump());
  test::write_file(etc + "/b.json", env_spec("vendor.example/class", "dev", "B=1"));
  CdiRegistry registry({etc, run});
  auto edits = registry.resolve({"vendor.example/class=dev"});
  ASSERT_FALSE(edits.ok());
  EXPECT_EQ(edits.status().code(), Code::failed_precondition);
  EXPECT_EQ(edits.status().message(), "CDI device 'vendor.example/class=dev': defined by both " + etc + "/a.json and " +
                                          etc + "/b.json in one dir, so by neither");
  // The files' other devices are fine.
  EXPECT_TRUE(registry.resolve({"vendor.example/class=other"}).ok());
  // A definition in a later dir settles it.
  test::write_file(run + "/c.json", env_spec("vendor.example/class", "dev", "C=1"));
  edits = registry.resolve({"vendor.example/class=dev"});
  ASSERT_TRUE(edits.ok()) << edits.status().message();
  EXPECT_EQ(env_of(*edits), (std::vector<std::string>{"C=1"}));
}

// ---- changes ----

TEST_F(CdiTest, FilesReplacedAddedAndRemovedAreNoticed) {
  std::string etc = dir("etc");
  const std::string file = etc + "/a.json";
  test::write_file(file, env_spec("vendor.example/class", "dev", "V=1"));
  CdiRegistry registry({etc});
  auto env = [&](const std::string& name) {
    auto e = registry.resolve({name});
    return e.ok() ? env_of(*e) : std::vector<std::string>{e.status().message()};
  };
  EXPECT_EQ(env("vendor.example/class=dev"), std::vector<std::string>{"V=1"});
  // Rewritten in place, same inode and size, at once (within one timestamp tick).
  struct stat before {};
  ASSERT_EQ(stat(file.c_str(), &before), 0);
  test::write_file(file, env_spec("vendor.example/class", "dev", "V=2"));
  struct stat after {};
  ASSERT_EQ(stat(file.c_str(), &after), 0);
  ASSERT_EQ(before.st_ino, after.st_ino);
  ASSERT_EQ(before.st_size, after.st_size);
  EXPECT_EQ(env("vendor.example/class=dev"), std::vector<std::string>{"V=2"});
  // Replaced by a rename over it; the writer's hidden temp file is not read.
  test::write_file(etc + "/.a.json.tmp", env_spec("vendor.example/class", "dev", "V=3"));
  EXPECT_EQ(env("vendor.example/class=dev"), std::vector<std::string>{"V=2"});
  ASSERT_EQ(std::rename((etc + "/.a.json.tmp").c_str(), file.c_str()), 0);
  EXPECT_EQ(env("vendor.example/class=dev"), std::vector<std::string>{"V=3"});
  // Added.
  test::write_file(etc + "/b.yml",
                   "cdiVersion: 0.3.0\nkind: vendor.example/class\ndevices:\n"
                   "  - name: new\n    containerEdits:\n      env: [N=1]\n");
  EXPECT_EQ(env("vendor.example/class=new"), std::vector<std::string>{"N=1"});
  // Removed.
  std::filesystem::remove(file);
  EXPECT_EQ(
      env("vendor.example/class=dev"),
      std::vector<std::string>{"CDI device 'vendor.example/class=dev': unknown (known: vendor.example/class=new)"});
  // Files that are not specs, and subdirectories, are not read.
  test::write_file(etc + "/c.txt", env_spec("vendor.example/class", "txt", "T=1"));
  dir("etc/sub.json");
  test::write_file(etc + "/sub.json/d.json", env_spec("vendor.example/class", "sub", "S=1"));
  EXPECT_EQ(registry.known_devices(), std::vector<std::string>{"vendor.example/class=new"});
}

TEST_F(CdiTest, AnOldFileRewrittenWithTheSameMtimeIsNoticed) {
  // A file too old for its timestamps to be racy is trusted by its stamp; a rewrite that puts the
  // mtime back still changes the ctime.
  std::string etc = dir("etc");
  const std::string file = etc + "/a.json";
  const struct timespec old[2] = {{1000000000, 0}, {1000000000, 0}};
  test::write_file(file, env_spec("vendor.example/class", "dev", "V=1"));
  ASSERT_EQ(utimensat(AT_FDCWD, file.c_str(), old, 0), 0);
  CdiRegistry registry({etc});
  ASSERT_EQ(env_of(*registry.resolve({"vendor.example/class=dev"})), std::vector<std::string>{"V=1"});
  test::write_file(file, env_spec("vendor.example/class", "dev", "V=2"));
  ASSERT_EQ(utimensat(AT_FDCWD, file.c_str(), old, 0), 0);
  auto edits = registry.resolve({"vendor.example/class=dev"});
  ASSERT_TRUE(edits.ok());
  EXPECT_EQ(env_of(*edits), std::vector<std::string>{"V=2"});
}

TEST_F(CdiTest, ResolvesFromManyThreadsWhileFilesChange) {
  std::string etc = dir("etc");
  const std::string file = etc + "/a.json";
  test::write_file(file, env_spec("vendor.example/class", "dev", "V=0"));
  CdiRegistry registry({etc});
  std::atomic<int> bad{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&] {
      for (int i = 0; i < 50; ++i) {
        auto e = registry.resolve({"vendor.example/class=dev"});
        if (!e.ok() || env_of(*e).size() != 1 || env_of(*e)[0].rfind("V=", 0) != 0) ++bad;
      }
    });
  for (int i = 1; i <= 20; ++i) {
    test::write_file(file + ".tmp", env_spec("vendor.example/class", "dev", "V=" + std::to_string(i)));
    std::filesystem::rename(file + ".tmp", file);
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(bad, 0);
  EXPECT_EQ(env_of(*registry.resolve({"vendor.example/class=dev"})), std::vector<std::string>{"V=20"});
}

TEST_F(CdiTest, ADirCreatedLaterIsRead) {
  std::string later = tmp_ / "later";
  CdiRegistry registry({later});
  EXPECT_EQ(registry.resolve({"vendor.example/class=dev"}).status().code(), Code::not_found);
  dir("later");
  test::write_file(later + "/a.json", env_spec("vendor.example/class", "dev", "V=1"));
  EXPECT_TRUE(registry.resolve({"vendor.example/class=dev"}).ok());
}

// ---- invalid specs ----

struct InvalidSpec {
  const char* file;
  std::string content;
  const char* device;  // a device the file names
  std::string why;     // after "<file>: "
};

TEST_F(CdiTest, AnInvalidSpecMakesOnlyItsOwnDevicesUnavailable) {
  const std::vector<InvalidSpec> cases = {
      {"version.json", env_spec("bad.example/c", "d", "X=1", "0.9.0"), "bad.example/c=d",
       "cdiVersion: '0.9.0' is not a CDI version berth reads (0.3.0 to 0.8.0)"},
      {"old.yaml", "cdiVersion: 0.2.0\nkind: bad.example/c\ndevices: [{name: d, containerEdits: {env: [X=1]}}]\n",
       "bad.example/c=d", "cdiVersion: '0.2.0' is not a CDI version berth reads (0.3.0 to 0.8.0)"},
      {"needs.json",
       R"({"cdiVersion": "0.3.0", "kind": "bad.example/c", "devices": [{"name": "d", "containerEdits": {"mounts": [{"hostPath": "/a", "containerPath": "/b", "type": "bind"}]}}]})",
       "bad.example/c=d",
       "cdiVersion: version 0.3.0 does not have devices[0].containerEdits.mounts[0].type (it needs 0.4.0 or later)"},
      {"types.json",
       R"({"cdiVersion": "0.5.0", "kind": "bad.example/c", "devices": [{"name": "d", "containerEdits": {"deviceNodes": [{"path": "/dev/x", "major": "1"}]}}]})",
       "bad.example/c=d", "devices[0].containerEdits.deviceNodes[0].major: expected an integer, got a string"},
      {"types2.yaml", "cdiVersion: 0.5.0\nkind: bad.example/c\ndevices:\n- name: d\n  containerEdits:\n    env: X=1\n",
       "bad.example/c=d", "devices[0].containerEdits.env: expected an array, got a string"},
      {"types3.yaml",
       "cdiVersion: 0.5.0\nkind: bad.example/c\ndevices:\n- name: d\n  containerEdits:\n    deviceNodes: [{path: "
       "/dev/x, uid: -1}]\n",
       "bad.example/c=d", "devices[0].containerEdits.deviceNodes[0].uid: integer -1 out of range 0..4294967295"},
      {"dup.json",
       R"({"cdiVersion": "0.5.0", "kind": "bad.example/c", "devices": [{"name": "d", "containerEdits": {"env": ["X=1"]}}, {"name": "d", "containerEdits": {"env": ["Y=1"]}}]})",
       "bad.example/c=d", "devices[1].name: 'd' is defined twice (also devices[0])"},
      {"unknown.json",
       R"({"cdiVersion": "0.5.0", "kind": "bad.example/c", "devices": [{"name": "d", "containerEdits": {"env": ["X=1"], "sysctl": {}}}]})",
       "bad.example/c=d", "devices[0].containerEdits.sysctl: unknown field"},
      {"env.yaml",
       "cdiVersion: 0.5.0\nkind: bad.example/c\ndevices:\n- name: d\n  containerEdits:\n    env: [\"=1\"]\n",
       "bad.example/c=d", "devices[0].containerEdits.env[0]: '=1' is not of the form NAME=value"},
      {"hook.yaml",
       "cdiVersion: 0.5.0\nkind: bad.example/c\ndevices:\n- name: d\n  containerEdits:\n    hooks: [{hookName: later, "
       "path: /bin/true}]\n",
       "bad.example/c=d",
       "devices[0].containerEdits.hooks[0].hookName: 'later' is not one of prestart, createRuntime, createContainer, "
       "startContainer, poststart, poststop"},
      {"timeout.yaml",
       "cdiVersion: 0.5.0\nkind: bad.example/c\ndevices:\n- name: d\n  containerEdits:\n    hooks: [{hookName: "
       "poststop, path: /bin/true, timeout: 0}]\n",
       "bad.example/c=d", "devices[0].containerEdits.hooks[0].timeout: integer 0 out of range 1..2147483647"},
      {"perm.json",
       R"({"cdiVersion": "0.5.0", "kind": "bad.example/c", "devices": [{"name": "d", "containerEdits": {"deviceNodes": [{"path": "/dev/x", "permissions": "rwx"}]}}]})",
       "bad.example/c=d",
       "devices[0].containerEdits.deviceNodes[0].permissions: 'rwx' is not 'none' or made of r, w and m"},
      {"relative.json",
       R"({"cdiVersion": "0.5.0", "kind": "bad.example/c", "devices": [{"name": "d", "containerEdits": {"mounts": [{"hostPath": "/a", "containerPath": "b"}]}}]})",
       "bad.example/c=d", "devices[0].containerEdits.mounts[0].containerPath: 'b' is not an absolute path"},
      {"empty.json",
       R"({"cdiVersion": "0.5.0", "kind": "bad.example/c", "devices": [{"name": "d", "containerEdits": {"env": []}}]})",
       "bad.example/c=d", "devices[0].containerEdits: empty (a device needs at least one edit)"},
      {"rdt.json",
       R"({"cdiVersion": "0.7.0", "kind": "bad.example/c", "devices": [{"name": "d", "containerEdits": {"intelRdt": {"closID": "x"}}}]})",
       "bad.example/c=d",
       "devices[0].containerEdits.intelRdt: not supported (berth sets no Intel RDT class for a container)"},
      {"net.json",
       R"({"cdiVersion": "0.8.0", "kind": "bad.example/c", "devices": [{"name": "d", "containerEdits": {"netDevices": [{"hostInterfaceName": "eth1", "name": "net1"}]}}]})",
       "bad.example/c=d",
       "devices[0].containerEdits.netDevices: not supported (a CDI 1.1.0 feature; berth reads 0.3.0 to 0.8.0)"},
  };
  // Each case under its own kind ("bad.example/<file stem>"), so each device has one reason.
  auto own = [](std::string text, const InvalidSpec& c) {
    const std::string kind = "bad.example/" + std::string(c.file).substr(0, std::string(c.file).find('.'));
    for (size_t at = text.find("bad.example/c"); at != std::string::npos;
         at = text.find("bad.example/c", at + kind.size()))
      text.replace(at, 13, kind);
    return text;
  };
  std::string etc = dir("etc");
  for (const auto& c : cases) test::write_file(etc + "/" + c.file, own(c.content, c));
  test::write_file(etc + "/good.json", env_spec("bad.example/c", "fine", "OK=1"));
  CdiRegistry registry({etc});
  for (const auto& c : cases) {
    SCOPED_TRACE(c.file);
    const std::string device = own(c.device, c);
    auto edits = registry.resolve({device});
    ASSERT_FALSE(edits.ok());
    EXPECT_EQ(edits.status().code(), Code::failed_precondition);
    EXPECT_EQ(edits.status().message(),
              "CDI device '" + device + "': invalid spec file " + etc + "/" + c.file + ": " + c.why);
  }
  // A valid file beside them, of the same kind, is unaffected.
  auto fine = registry.resolve({"bad.example/c=fine"});
  ASSERT_TRUE(fine.ok()) << fine.status().message();
  EXPECT_EQ(env_of(*fine), std::vector<std::string>{"OK=1"});
  EXPECT_EQ(registry.known_devices(), std::vector<std::string>{"bad.example/c=fine"});
}

TEST_F(CdiTest, FilesWithNoDeviceToBlameAreNamedInTheUnknownError) {
  // A file that does not parse, or whose kind or device names are malformed, names no device a
  // container could ask for; an "unknown device" error lists it.
  std::string etc = dir("etc");
  test::write_file(etc + "/a-kind.json", env_spec("bad.example", "d", "X=1"));
  test::write_file(etc + "/b-kind.json", env_spec("bad.example/c/d", "d", "X=1"));
  test::write_file(etc + "/c-name.json", env_spec("bad.example/c", "-d", "X=1"));
  test::write_file(
      etc + "/d-dupkey.json",
      R"({"cdiVersion": "0.5.0", "kind": "bad.example/c", "devices": [{"name": "d", "containerEdits": {"env": ["X=1"], "env": ["Y=1"]}}]})");
  test::write_file(
      etc + "/e-dupkey.yaml",
      "cdiVersion: 0.5.0\nkind: bad.example/c\ndevices:\n- name: d\n  name: e\n  containerEdits: {env: [X=1]}\n");
  test::write_file(etc + "/f-broken.yaml", "cdiVersion: 0.5.0\nkind: [bad.example/c\n");
  test::write_file(etc + "/good.json", env_spec("bad.example/c", "fine", "OK=1"));
  auto edits = CdiRegistry({etc}).resolve({"bad.example/c=d"});
  ASSERT_FALSE(edits.ok());
  EXPECT_EQ(edits.status().code(), Code::not_found);
  EXPECT_EQ(edits.status().message(),
            "CDI device 'bad.example/c=d': unknown (known: bad.example/c=fine); spec files that failed to load: " +
                etc + "/a-kind.json: kind: 'bad.example' is not of the form vendor/class; " + etc +
                "/b-kind.json: kind: class 'c/d' holds a character other than letters, digits, '-', '_', '.'; " + etc +
                "/c-name.json: devices[0].name: device name '-d' must begin with a letter or digit; " + etc +
                "/d-dupkey.json: member 'env' appears twice in one object; " + etc +
                "/e-dupkey.yaml: line 5: key 'name' appears twice in one mapping; " + etc +
                "/f-broken.yaml: line 3: end of sequence flow not found");
}

TEST_F(CdiTest, AnInvalidFileInALaterDirLeavesTheEarlierDefinition) {
  // CDI ignores an invalid file, so the device from the earlier dir is used.
  std::string etc = dir("etc"), run = dir("run");
  test::write_file(etc + "/a.json", env_spec("vendor.example/c", "d", "FROM=etc"));
  test::write_file(run + "/a.json", env_spec("vendor.example/c", "d", "FROM=run", "0.1.0"));
  auto edits = CdiRegistry({etc, run}).resolve({"vendor.example/c=d"});
  ASSERT_TRUE(edits.ok());
  EXPECT_EQ(env_of(*edits), std::vector<std::string>{"FROM=etc"});
}

TEST_F(CdiTest, YamlAliasesCannotExpandWithoutEnd) {
  std::string etc = dir("etc");
  // A cycle (an alias to an enclosing node) and a "billion laughs" of nested aliases.
  test::write_file(etc + "/cycle.yaml",
                   "cdiVersion: 0.5.0\nkind: vendor.example/c\ndevices: &d\n"
                   "  - name: x\n    containerEdits: {env: [X=1], hooks: *d}\n");
  std::string laughs = "cdiVersion: 0.5.0\nkind: vendor.example/c\na0: &a0 [x, x, x, x, x, x, x, x, x, x]\n";
  for (int i = 1; i < 9; ++i) {
    std::string prev = "*a" + std::to_string(i - 1), list = prev;
    for (int k = 1; k < 10; ++k) list += ", " + prev;
    laughs += "a" + std::to_string(i) + ": &a" + std::to_string(i) + " [" + list + "]\n";
  }
  test::write_file(etc + "/laughs.yaml", laughs + "devices: []\n");
  CdiRegistry registry({etc});
  auto cycle = registry.resolve({"vendor.example/c=x"});
  ASSERT_FALSE(cycle.ok());
  EXPECT_NE(cycle.status().message().find("nested deeper than 64 levels"), std::string::npos)
      << cycle.status().message();
  auto laugh = registry.resolve({"vendor.example/c=y"});
  ASSERT_FALSE(laugh.ok());
  EXPECT_NE(laugh.status().message().find(etc + "/laughs.yaml: line "), std::string::npos) << laugh.status().message();
  EXPECT_NE(laugh.status().message().find("more than 262144 nodes once aliases are expanded"), std::string::npos);

  // Few nodes but a long anchored string used many times: each use is a copy, and they are
  // bounded too (16 MiB), not only the node count.
  std::string big = "cdiVersion: 0.5.0\nkind: vendor.example/b\ns: &s " + std::string(1 << 20, 'x') + "\nuses: [*s";
  for (int i = 0; i < 40; ++i) big += ", *s";
  test::write_file(etc + "/big.yaml", big + "]\ndevices: []\n");
  auto copies = registry.resolve({"vendor.example/b=z"});
  ASSERT_FALSE(copies.ok());
  EXPECT_NE(copies.status().message().find("more than 16 MiB of strings once aliases are expanded"), std::string::npos)
      << copies.status().message();
}

// ---- applying ----

struct HostNode {
  int64_t major, minor;
  uint32_t mode, uid, gid;
};

HostNode host_node(const char* path) {
  struct stat st {};
  EXPECT_EQ(stat(path, &st), 0) << path;
  return {static_cast<int64_t>(major(st.st_rdev)), static_cast<int64_t>(minor(st.st_rdev)), st.st_mode & 07777u,
          st.st_uid, st.st_gid};
}

// apply_cdi_edits on the typed spec `spec` holds, written back whether it applied or not (a failed
// apply must leave the typed spec as it was, which the JSON then shows).
Status apply_cdi_edits(json& spec, const CdiEdits& edits) {
  auto typed = oci::spec_from_json(spec);
  EXPECT_TRUE(typed.ok()) << typed.status().message();
  if (!typed.ok()) return typed.status();
  Status s = berth::apply_cdi_edits(*typed, edits);
  spec = oci::to_json(*typed);
  return s;
}

// The shape berth's container spec has (container/container_spec.cc), trimmed.
json sample_oci_spec() {
  return json::parse(R"({
    "ociVersion": "1.0.2",
    "process": {"user": {"uid": 0, "gid": 0}, "args": ["sh"], "env": ["PATH=/usr/bin", "VENDOR_NULL=0"], "cwd": "/"},
    "root": {"path": "/rootfs"},
    "mounts": [
      {"destination": "/proc", "type": "proc", "source": "proc"},
      {"destination": "/dev", "type": "tmpfs", "source": "tmpfs", "options": ["nosuid"]},
      {"destination": "/dev/shm", "type": "bind", "source": "/run/shm", "options": ["rbind"]},
      {"destination": "/opt/vendor", "type": "bind", "source": "/old", "options": ["rbind"]},
      {"destination": "/etc/hosts", "type": "bind", "source": "/pod/hosts", "options": ["rbind"]}
    ],
    "linux": {
      "resources": {"devices": [{"allow": false, "access": "rwm"}]},
      "devices": [{"path": "/dev/null", "type": "c", "major": 9, "minor": 9}]
    }
  })");
}

TEST_F(CdiTest, EditsApplyToAnOciSpec) {
  std::string etc = dir("etc");
  test::write_file(etc + "/null.json", kNullSpec);
  test::write_file(etc + "/yaml.yaml", kYamlSpec);
  auto edits =
      CdiRegistry({etc}).resolve({"vendor.example/null=null", "vendor.example/null=zero", "other.example/yaml=zero"});
  ASSERT_TRUE(edits.ok()) << edits.status().message();
  json spec = sample_oci_spec();
  Status s = apply_cdi_edits(spec, *edits);
  ASSERT_TRUE(s.ok()) << s.message();

  HostNode null = host_node("/dev/null"), zero = host_node("/dev/zero");
  json want = sample_oci_spec();
  want["process"]["env"] = {"PATH=/usr/bin", "VENDOR_NULL=1", "VENDOR_SPEC=a", "YAML_ZERO=on"};
  want["process"]["user"]["additionalGids"] = {44, 45};
  // Parents before children, the order otherwise kept; the old /opt/vendor replaced.
  want["mounts"] = json::parse(R"([
    {"destination": "/proc", "type": "proc", "source": "proc"},
    {"destination": "/dev", "type": "tmpfs", "source": "tmpfs", "options": ["nosuid"]},
    {"destination": "/dev/shm", "type": "bind", "source": "/run/shm", "options": ["rbind"]},
    {"destination": "/etc/hosts", "type": "bind", "source": "/pod/hosts", "options": ["rbind"]},
    {"destination": "/opt/vendor", "source": "/srv/vendor", "options": ["rbind", "ro"]},
    {"destination": "/run/yaml", "type": "tmpfs", "source": "tmpfs", "options": ["nosuid", "size=1m"]},
    {"destination": "/opt/vendor/lib/x", "type": "bind", "source": "/srv/vendor/lib", "options": ["rbind"]}
  ])");
  want["linux"]["devices"] = {{{"path", "/dev/null"},
                               {"type", "c"},
                               {"major", null.major},
                               {"minor", null.minor},
                               {"fileMode", null.mode},
                               {"uid", null.uid},
                               {"gid", null.gid}},
                              {{"path", "/dev/vendor-zero"},
                               {"type", "c"},
                               {"major", zero.major},
                               {"minor", zero.minor},
                               {"fileMode", 0600},
                               {"uid", 7},
                               {"gid", zero.gid}},
                              {{"path", "/dev/yaml-zero"},
                               {"type", "c"},
                               {"major", 1},
                               {"minor", 5},
                               {"fileMode", 0640},
                               {"uid", zero.uid},
                               {"gid", 5}}};
  want["linux"]["resources"]["devices"] = {
      {{"allow", false}, {"access", "rwm"}},
      {{"allow", true}, {"type", "c"}, {"major", null.major}, {"minor", null.minor}, {"access", "rwm"}},
      {{"allow", true}, {"type", "c"}, {"major", zero.major}, {"minor", zero.minor}, {"access", "rw"}},
      {{"allow", true}, {"type", "c"}, {"major", 1}, {"minor", 5}, {"access", "rwm"}}};
  want["hooks"] = {
      {"createContainer",
       {{{"path", "/usr/bin/vendor-hook"}, {"args", {"vendor-hook", "create"}}, {"env", {"HOOK=1"}}, {"timeout", 5}}}},
      {"poststart", {{{"path", "/usr/bin/yaml-hook"}}}}};
  EXPECT_EQ(spec, want) << "got:\n" << spec.dump(2) << "\nwant:\n" << want.dump(2);
}

TEST_F(CdiTest, DeviceNodesOfANonRootContainerBelongToItsUser) {
  CdiEdits edits{{{"test",
                   {.device_nodes = {{.path = "/dev/null"},
                                     {.path = "/dev/cdi-zero", .host_path = "/dev/zero", .permissions = "none"},
                                     {.path = "/dev/u", .host_path = "/dev/zero", .type = "u"}}}}}};
  json spec = {{"process", {{"user", {{"uid", 1000}, {"gid", 2000}}}}}};
  ASSERT_TRUE(apply_cdi_edits(spec, edits).ok());
  const json& devices = spec["linux"]["devices"];
  ASSERT_EQ(devices.size(), 3u);
  for (const json& d : devices) {
    EXPECT_EQ(d["uid"], 1000);
    EXPECT_EQ(d["gid"], 2000);
  }
  EXPECT_EQ(devices[2]["type"], "u");
  // "none": no cgroup rule; "u" is allowed as a character device.
  HostNode null = host_node("/dev/null"), zero = host_node("/dev/zero");
  EXPECT_EQ(spec["linux"]["resources"]["devices"],
            json({{{"allow", true}, {"type", "c"}, {"major", null.major}, {"minor", null.minor}, {"access", "rwm"}},
                  {{"allow", true}, {"type", "c"}, {"major", zero.major}, {"minor", zero.minor}, {"access", "rwm"}}}));
}

TEST_F(CdiTest, AFailedApplyLeavesTheSpecAsItWas) {
  const json original = sample_oci_spec();
  auto failing = [&](CdiContainerEdits e, const std::string& want) {
    json spec = original;
    Status s = apply_cdi_edits(spec, CdiEdits{{{"/etc/cdi/x.json: device v.example/c=d", {.env = {"NEW=1"}}},
                                               {"/etc/cdi/y.json", std::move(e)}}});
    EXPECT_FALSE(s.ok());
    EXPECT_EQ(s.message(), want);
    EXPECT_EQ(spec, original);
  };
  failing({.device_nodes = {{.path = "/dev/cdi-missing", .host_path = tmp_ / "missing"}}},
          "apply CDI edits of /etc/cdi/y.json: device node /dev/cdi-missing (host " + tmp_ / "missing" +
              "): stat: ENOENT (No such file or directory)");
  failing({.device_nodes = {{.path = "/dev/null", .type = "b"}}},
          "apply CDI edits of /etc/cdi/y.json: device node /dev/null (host /dev/null): type 'b' but the host node is "
          "of type 'c'");
  // Edits built by hand are checked where a bad value would go unnoticed in the spec.
  failing({.env = {"NOEQUALS"}}, "apply CDI edits of /etc/cdi/y.json: env 'NOEQUALS' is not NAME=value");
  failing(
      {.hooks = {{.hook_name = "later", .path = "/bin/true"}}},
      "apply CDI edits of /etc/cdi/y.json: hook name 'later' is not one of prestart, createRuntime, createContainer, "
      "startContainer, poststart, poststop");
  test::write_file(tmp_ / "plain", "x");
  failing({.device_nodes = {{.path = "/dev/x", .host_path = tmp_ / "plain"}}},
          "apply CDI edits of /etc/cdi/y.json: device node /dev/x (host " + tmp_ / "plain" +
              "): not a device node on the host");
}

TEST_F(CdiTest, RepeatedEditsDoNotPileUp) {
  // The same env name, device path, mount destination and GID twice: replaced, not duplicated.
  CdiContainerEdits e{
      .env = {"A=1", "A=2"},
      .device_nodes = {{.path = "/dev/null"}, {.path = "/dev/null"}},
      .mounts = {{.host_path = "/a", .container_path = "/m"}, {.host_path = "/b", .container_path = "/m"}},
      .additional_gids = {5, 5, 0}};
  json spec = json::object();
  ASSERT_TRUE(apply_cdi_edits(spec, CdiEdits{{{"o", e}}}).ok());
  EXPECT_EQ(spec["process"]["env"], json({"A=2"}));
  EXPECT_EQ(spec["linux"]["devices"].size(), 1u);
  EXPECT_EQ(spec["mounts"], json::parse(R"([{"destination": "/m", "source": "/b"}])"));
  EXPECT_EQ(spec["process"]["user"]["additionalGids"], json({5}));
}

}  // namespace
}  // namespace berth
