// The container/ rules: process args and env, user lookup inside an image rootfs, capabilities
// and bind mounts with propagation, each with its error cases.
#include <fcntl.h>
#include <poll.h>
#include <sys/mount.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>
#include <iostream>
#include <thread>

#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "berth/container_devices.h"
#include "berth/container_mounts.h"
#include "berth/container_process.h"
#include "berth/container_rootfs.h"
#include "berth/container_security.h"
#include "berth/prepared_mounts.h"
#include "berth/user_namespace.h"
#include "berth/test/temp_dir.h"

namespace berth {
namespace {

namespace fs = std::filesystem;
using Strings = std::vector<std::string>;

TEST(ProcessArgs, KubernetesCommandAndArgsRules) {
  ImageProcessDefaults img{.entrypoint = {"/entry"}, .cmd = {"default", "cmd"}};
  EXPECT_EQ(*resolve_process_args(img, {}, {}), (Strings{"/entry", "default", "cmd"}));
  EXPECT_EQ(*resolve_process_args(img, {}, {"a", "b"}), (Strings{"/entry", "a", "b"}));
  EXPECT_EQ(*resolve_process_args(img, {"/bin/sh"}, {}), (Strings{"/bin/sh"}));
  EXPECT_EQ(*resolve_process_args(img, {"/bin/sh", "-c"}, {"echo"}), (Strings{"/bin/sh", "-c", "echo"}));
  ImageProcessDefaults cmd_only{.cmd = {"/bin/sh"}};
  EXPECT_EQ(*resolve_process_args(cmd_only, {}, {"x"}), (Strings{"x"}));  // args replace Cmd
  auto none = resolve_process_args(ImageProcessDefaults{}, {}, {});
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.status().code(), Code::invalid_argument);
  EXPECT_NE(none.status().message().find("config.command"), std::string::npos);
}

TEST(ProcessEnv, ImageFirstConfigOverrides) {
  auto env = merge_process_env({"PATH=/bin", "HOME=/root"}, {{"HOME", "/home/x"}, {"A", "1=2"}});
  ASSERT_TRUE(env.ok());
  EXPECT_EQ(*env, (Strings{"PATH=/bin", "HOME=/home/x", "A=1=2"}));
  auto bad = merge_process_env({}, {{"A=B", "x"}});
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("config.envs: key 'A=B'"), std::string::npos);
  EXPECT_FALSE(merge_process_env({}, {{"", "x"}}).ok());
}

class UserLookup : public ::testing::Test {
 protected:
  void SetUp() override {
    fs::create_directories(root_ / "etc");
    test::write_file(root_ / "etc/passwd",
                     "root:x:0:0:root:/root:/bin/sh\n"
                     "app:x:1000:1001:app user:/home/app:/bin/sh\n"
                     "# a comment\n"
                     "nogroup:x:2000:2000::/:\n");
    test::write_file(root_ / "etc/group",
                     "root:x:0:\n"
                     "app:x:1001:\n"
                     "video:x:44:app,other\n"
                     "audio:x:29:other,app\n"
                     "staff:x:50:\n");
  }
  test::TempDir root_;
};

TEST_F(UserLookup, ByUsernameWithGroupMemberships) {
  auto u = resolve_user(root_.path(), {.run_as_username = "app", .supplemental_groups = {7, 44}});
  ASSERT_TRUE(u.ok()) << u.status().message();
  EXPECT_EQ(u->uid, 1000u);
  EXPECT_EQ(u->gid, 1001u);
  EXPECT_EQ(u->username, "app");
  EXPECT_EQ(u->additional_gids, (std::vector<uint32_t>{44, 29, 7}));
}

TEST_F(UserLookup, ByUidWithAndWithoutPasswdEntry) {
  auto known = resolve_user(root_.path(), {.run_as_user = 1000});
  ASSERT_TRUE(known.ok());
  EXPECT_EQ(known->gid, 1001u);
  auto unknown = resolve_user(root_.path(), {.run_as_user = 4242, .run_as_group = 77});
  ASSERT_TRUE(unknown.ok());
  EXPECT_EQ(unknown->uid, 4242u);
  EXPECT_EQ(unknown->gid, 77u);
  EXPECT_TRUE(unknown->username.empty());
  auto no_group = resolve_user(root_.path(), {.run_as_user = 4242});
  ASSERT_TRUE(no_group.ok());
  EXPECT_EQ(no_group->gid, 0u);
}

TEST_F(UserLookup, ImageUserForms) {
  EXPECT_EQ(resolve_user(root_.path(), {.image_user = "app"})->uid, 1000u);
  auto named = resolve_user(root_.path(), {.image_user = "app:staff"});
  ASSERT_TRUE(named.ok());
  EXPECT_EQ(named->gid, 50u);
  auto numeric = resolve_user(root_.path(), {.image_user = "3000:3001"});
  ASSERT_TRUE(numeric.ok());
  EXPECT_EQ(numeric->uid, 3000u);
  EXPECT_EQ(numeric->gid, 3001u);
  auto root = resolve_user(root_.path(), {});
  ASSERT_TRUE(root.ok());
  EXPECT_EQ(root->uid, 0u);
  // run_as_user wins over the image's User.
  EXPECT_EQ(resolve_user(root_.path(), {.run_as_user = 5, .image_user = "app"})->uid, 5u);
}

TEST_F(UserLookup, Errors) {
  auto missing = resolve_user(root_.path(), {.run_as_username = "ghost"});
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), Code::invalid_argument);
  EXPECT_NE(missing.status().message().find("run_as_username: user 'ghost'"), std::string::npos);
  auto group_alone = resolve_user(root_.path(), {.run_as_group = 5});
  ASSERT_FALSE(group_alone.ok());
  EXPECT_NE(group_alone.status().message().find("run_as_group"), std::string::npos);
  auto bad_group = resolve_user(root_.path(), {.image_user = "app:nosuch"});
  ASSERT_FALSE(bad_group.ok());
  EXPECT_NE(bad_group.status().message().find("group 'nosuch'"), std::string::npos);
  EXPECT_FALSE(resolve_user(root_.path(), {.run_as_user = -1}).ok());
}

TEST(UserLookupEscape, SymlinkedPasswdStaysInsideTheRootfs) {
  test::TempDir root;
  fs::create_directories(root / "etc");
  fs::create_directories(root / "real");
  test::write_file(root / "real/passwd", "inside:x:321:321::/:\n");
  // An absolute link: resolved against the rootfs, never against the host's /real or /etc.
  fs::create_symlink("/real/passwd", root / "etc/passwd");
  auto u = resolve_user(root.path(), {.run_as_username = "inside"});
  ASSERT_TRUE(u.ok()) << u.status().message();
  EXPECT_EQ(u->uid, 321u);
  fs::remove(root / "etc/passwd");
  fs::create_symlink("../../../../../../etc/passwd", root / "etc/passwd");
  // The host's root user must not be found through the link.
  EXPECT_FALSE(resolve_user(root.path(), {.run_as_username = "root"}).ok());
}

TEST(Capabilities, DefaultsAddDropAndAll) {
  auto def = resolve_capabilities({});
  ASSERT_TRUE(def.ok());
  EXPECT_EQ(def->caps.size(), 14u);
  EXPECT_EQ(std::count(def->caps.begin(), def->caps.end(), "CAP_SYS_ADMIN"), 0);

  auto added = resolve_capabilities({.add = {"sys_admin", "CAP_NET_ADMIN"}, .drop = {"net_raw"}});
  ASSERT_TRUE(added.ok());
  EXPECT_EQ(added->caps.size(), 15u);
  EXPECT_EQ(std::count(added->caps.begin(), added->caps.end(), "CAP_SYS_ADMIN"), 1);
  EXPECT_EQ(std::count(added->caps.begin(), added->caps.end(), "CAP_NET_RAW"), 0);

  auto only = resolve_capabilities({.add = {"CHOWN"}, .drop = {"ALL"}});
  ASSERT_TRUE(only.ok());
  EXPECT_EQ(only->caps, (Strings{"CAP_CHOWN"}));

  auto all = resolve_capabilities({.add = {"ALL"}, .drop = {"NET_RAW"}});
  ASSERT_TRUE(all.ok());
  EXPECT_GT(all->caps.size(), 30u);
  EXPECT_EQ(std::count(all->caps.begin(), all->caps.end(), "CAP_NET_RAW"), 0);

  auto priv = resolve_capabilities({.drop = {"ALL"}, .privileged = true});
  ASSERT_TRUE(priv.ok());
  // Privileged gets exactly the capabilities this process may grant: its bounding set.
  std::string status = test::read_file("/proc/self/status");
  unsigned long long bnd = std::stoull(status.substr(status.find("CapBnd:") + 7), nullptr, 16);
  EXPECT_EQ(priv->caps.size(), static_cast<size_t>(__builtin_popcountll(bnd)));
  auto all_here = resolve_capabilities({.add = {"ALL"}});
  ASSERT_TRUE(all_here.ok());
  EXPECT_EQ(all_here->caps, priv->caps);
}

// A host that withholds capabilities from berthd (nested, hardened, this build machine without
// CAP_SYS_RESOURCE): ALL and privileged mean what berthd can grant, and naming one it cannot is
// refused before the runtime would fail the start.
TEST(Capabilities, BoundedByWhatBerthdCanGrant) {
  const uint64_t without_sys_resource = ~0ull & ~(1ull << 24) & ((1ull << 41) - 1);  // CAP_SYS_RESOURCE = 24
  for (bool privileged : {false, true}) {
    auto all = resolve_capabilities({.add = {"ALL"}, .privileged = privileged, .bounding = without_sys_resource});
    ASSERT_TRUE(all.ok()) << all.status().message();
    EXPECT_EQ(std::count(all->caps.begin(), all->caps.end(), "CAP_SYS_RESOURCE"), 0);
    EXPECT_EQ(std::count(all->caps.begin(), all->caps.end(), "CAP_SYS_ADMIN"), 1);
  }
  auto named = resolve_capabilities({.add = {"sys_resource"}, .bounding = without_sys_resource});
  ASSERT_FALSE(named.ok());
  EXPECT_EQ(
      named.status().message(),
      "linux.security_context.capabilities.add_capabilities: CAP_SYS_RESOURCE is not in berthd's bounding set, so no "
      "container on this host can hold it");
  // The defaults hold only what can be granted.
  auto defaults = resolve_capabilities({.bounding = ~0ull & ~(1ull << 29)});  // CAP_AUDIT_WRITE = 29
  ASSERT_TRUE(defaults.ok());
  EXPECT_EQ(defaults->caps.size(), 13u);
  EXPECT_TRUE(resolve_capabilities({.drop = {"sys_resource"}, .bounding = without_sys_resource}).ok());
}

TEST(Capabilities, AmbientMustBeInTheSet) {
  auto amb = resolve_capabilities({.add = {"NET_ADMIN"}, .ambient = {"net_admin"}});
  ASSERT_TRUE(amb.ok());
  EXPECT_EQ(amb->ambient, (Strings{"CAP_NET_ADMIN"}));
}

TEST(Capabilities, UnknownNamesAndBadAmbient) {
  auto bad = resolve_capabilities({.add = {"CAP_FLY"}});
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), Code::invalid_argument);
  EXPECT_NE(bad.status().message().find("add_capabilities: unknown capability 'CAP_FLY'"), std::string::npos);
  EXPECT_FALSE(resolve_capabilities({.drop = {"nonsense"}}).ok());
  auto amb = resolve_capabilities({.ambient = {"SYS_ADMIN"}});
  ASSERT_FALSE(amb.ok());
  EXPECT_NE(amb.status().message().find("not in the container's capability set"), std::string::npos);
}

TEST(Capabilities, DefaultPathLists) {
  EXPECT_EQ(std::count(default_masked_paths().begin(), default_masked_paths().end(), "/proc/kcore"), 1);
  EXPECT_EQ(std::count(default_readonly_paths().begin(), default_readonly_paths().end(), "/proc/sys"), 1);
}

const char* kMountinfo =
    "22 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw\n"
    "30 22 0:30 / /data rw,relatime - tmpfs tmpfs rw\n"
    "31 22 0:31 / /slave rw,relatime master:7 - tmpfs tmpfs rw\n"
    "32 22 0:32 / /with\\040space rw shared:9 - tmpfs tmpfs rw\n";

TEST(BindMounts, PropagationFromMountinfo) {
  EXPECT_EQ(mount_propagation_of("/var/x", kMountinfo), "shared");
  EXPECT_EQ(mount_propagation_of("/data/sub", kMountinfo), "private");
  EXPECT_EQ(mount_propagation_of("/data", kMountinfo), "private");
  EXPECT_EQ(mount_propagation_of("/database", kMountinfo), "shared");  // not under /data
  EXPECT_EQ(mount_propagation_of("/slave/a", kMountinfo), "slave");
  EXPECT_EQ(mount_propagation_of("/with space/a", kMountinfo), "shared");
  EXPECT_TRUE(is_private_mount_point("/data", kMountinfo));
  EXPECT_FALSE(is_private_mount_point("/data/sub", kMountinfo));  // held by /data, not a mount itself
  EXPECT_FALSE(is_private_mount_point("/slave", kMountinfo));
}

TEST(BindMounts, OptionsAndErrors) {
  test::TempDir host;
  auto ok = resolve_mounts({{.container_path = "/a", .host_path = host.path(), .readonly = true},
                            {.container_path = "/b", .host_path = host.path()}},
                           kMountinfo);
  ASSERT_TRUE(ok.ok()) << ok.status().message();
  EXPECT_EQ((*ok)[0].options, (Strings{"rbind", "rprivate", "ro"}));
  EXPECT_EQ((*ok)[1].options, (Strings{"rbind", "rprivate"}));
  EXPECT_EQ((*ok)[0].type, "bind");
  EXPECT_EQ((*ok)[0].source, host.path());

  auto missing = resolve_mounts({{.container_path = "/a", .host_path = host / "nope"}}, kMountinfo);
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), Code::invalid_argument);
  EXPECT_NE(missing.status().message().find("config.mounts[0].host_path: " + (host / "nope")), std::string::npos)
      << missing.status().message();
  auto relative = resolve_mounts({{.container_path = "rel", .host_path = host.path()}}, kMountinfo);
  ASSERT_FALSE(relative.ok());
  EXPECT_NE(relative.status().message().find("container_path"), std::string::npos);
  EXPECT_FALSE(
      resolve_mounts({{.container_path = "/a", .host_path = host.path(), .has_image = true}}, kMountinfo).ok());
}

// recursive_read_only is the runtime's rro option, or a copy berthd prepares, or refused; never a
// plain read-only mount.
TEST(BindMounts, RecursiveReadOnlyIsHonouredOrRefused) {
  test::TempDir host;
  const MountRequest rro{
      .container_path = "/a", .host_path = host.path(), .readonly = true, .recursive_read_only = true};
  auto refused = resolve_mounts({rro}, kMountinfo, {.recursive_read_only = RecursiveReadOnly::unsupported});
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().message(),
            "config.mounts[0].recursive_read_only: not supported on this host (needs Linux 5.12+ for mount_setattr)");
  auto option = resolve_mounts({rro}, kMountinfo, {.recursive_read_only = RecursiveReadOnly::runtime_option});
  ASSERT_TRUE(option.ok()) << option.status().message();
  EXPECT_EQ((*option)[0].options, (Strings{"rbind", "rro", "rprivate", "ro"}));
  EXPECT_EQ((*option)[0].source, host.path());
  EXPECT_TRUE((*option)[0].prepared_from.empty());
  auto prepared =
      resolve_mounts({{.container_path = "/b", .host_path = host.path()}, rro}, kMountinfo,
                     {.recursive_read_only = RecursiveReadOnly::host_prepared, .prepared_dir = "/bundle/mounts"});
  ASSERT_TRUE(prepared.ok()) << prepared.status().message();
  EXPECT_EQ((*prepared)[1].source, "/bundle/mounts/1");
  EXPECT_EQ((*prepared)[1].prepared_from, host.path());
  EXPECT_EQ((*prepared)[1].options, (Strings{"rbind", "rprivate", "ro"}));
  EXPECT_TRUE((*prepared)[0].prepared_from.empty());
  for (auto [req, why] :
       {std::pair{MountRequest{.container_path = "/a", .host_path = host.path(), .recursive_read_only = true},
                  "recursive_read_only: needs readonly"},
        std::pair{MountRequest{.container_path = "/a",
        .host_path = host.path(),
        .readonly = true,
        .propagation = MountPropagation::host_to_container,
        .recursive_read_only = true},
                  "recursive_read_only: needs private propagation"}}) {
    auto r = resolve_mounts({req}, kMountinfo, {.recursive_read_only = RecursiveReadOnly::host_prepared});
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.status().message().find(why), std::string::npos) << r.status().message();
  }
}

// An image volume's mount is the prepared volume (or its sub path), always read-only; without one
// prepared it is refused.
TEST(BindMounts, ImageVolumesAreReadOnlyBindsOfThePreparedVolume) {
  auto m = resolve_mounts(
      {{.container_path = "/vol", .has_image = true, .image_source = "/run/berth/image-volumes/p/abc/data"}},
      kMountinfo);
  ASSERT_TRUE(m.ok()) << m.status().message();
  EXPECT_EQ((*m)[0].source, "/run/berth/image-volumes/p/abc/data");
  EXPECT_EQ((*m)[0].options, (Strings{"rbind", "rprivate", "ro", "nosuid", "nodev"}));
  auto unprepared = resolve_mounts({{.container_path = "/vol", .has_image = true}}, kMountinfo);
  ASSERT_FALSE(unprepared.ok());
  EXPECT_NE(unprepared.status().message().find("config.mounts[0].image"), std::string::npos);
  EXPECT_FALSE(resolve_mounts({{.container_path = "vol", .has_image = true, .image_source = "/x"}}, kMountinfo).ok());
}

// The host-side copy: every mount below the source is read-only in it, nothing of it propagates
// back, and release leaves nothing mounted.
TEST(PreparedMounts, RecursiveReadOnlyCopyAndRelease) {
  if (!kernel_has_mount_setattr()) GTEST_SKIP() << "this kernel has no mount_setattr";
  test::TempDir src, bundle;
  fs::create_directories(src / "sub");
  ASSERT_EQ(::mount("tmpfs", (src / "sub").c_str(), "tmpfs", 0, "size=64k"), 0);
  std::string target = bundle / "mounts/0";
  Status s = prepare_mounts({{.source = src.path(), .target = target, .read_only = true}}, {});
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_NE(::access((src / "sub").c_str(), W_OK), -1);
  test::write_file(src / "sub/seen", "x");  // the source stays writable and the copy shows it
  EXPECT_TRUE(fs::exists(target + "/sub/seen"));
  for (const std::string& p : {target + "/new", target + "/sub/new"}) {
    int fd = ::open(p.c_str(), O_CREAT | O_WRONLY, 0600);
    EXPECT_LT(fd, 0) << p;
    EXPECT_EQ(errno, EROFS) << p;
    if (fd >= 0) ::close(fd);
  }
  EXPECT_FALSE(
      prepare_mounts({{.source = src / "missing", .target = bundle / "mounts/1", .read_only = true}}, {}).ok());
  ASSERT_TRUE(release_prepared_mounts(bundle / "mounts").ok());
  EXPECT_FALSE(fs::exists(bundle / "mounts"));
  EXPECT_EQ(test::read_file("/proc/self/mountinfo").find(bundle.path()), std::string::npos);
  EXPECT_TRUE(release_prepared_mounts(bundle / "mounts").ok());  // idempotent
  ::umount2((src / "sub").c_str(), MNT_DETACH);
}

// Mount.uidMappings/gidMappings give a copy berthd id-maps (runc 1.1 cannot): both or neither,
// valid as a pod's, private; on an image volume, the pod's own.
TEST(BindMounts, IdMappedVolumesArePreparedCopies) {
  test::TempDir host;
  const std::vector<IdMapping> pod_ids{{0, 65536, 65536}};
  const MountPolicy policy{.prepared_dir = "/bundle/mounts", .idmapped_mounts = true};
  MountRequest req{.container_path = "/v", .host_path = host.path(), .uid_mappings = pod_ids, .gid_mappings = pod_ids};
  auto m = resolve_mounts({{.container_path = "/a", .host_path = host.path()}, req}, kMountinfo, policy);
  ASSERT_TRUE(m.ok()) << m.status().message();
  EXPECT_EQ((*m)[1].source, "/bundle/mounts/1");
  EXPECT_EQ((*m)[1].prepared_from, host.path());
  EXPECT_EQ((*m)[1].uid_mappings, pod_ids);
  EXPECT_EQ((*m)[1].gid_mappings, pod_ids);
  EXPECT_FALSE((*m)[1].prepared_read_only);
  EXPECT_TRUE((*m)[0].prepared_from.empty());

  auto refused = [&](MountRequest r, const MountPolicy& p, const std::string& why) {
    auto out = resolve_mounts({r}, kMountinfo, p);
    ASSERT_FALSE(out.ok()) << why;
    EXPECT_EQ(out.status().code(), Code::invalid_argument);
    EXPECT_NE(out.status().message().find(why), std::string::npos) << out.status().message();
  };
  MountRequest no_gids = req;
  no_gids.gid_mappings.clear();
  refused(no_gids, policy, "config.mounts[0].gidMappings: must be given with uidMappings");
  MountRequest host_root = req;
  host_root.uid_mappings = {{0, 0, 65536}};
  refused(host_root, policy, "config.mounts[0].uidMappings[0]: maps host id 0");
  MountRequest shared = req;
  shared.propagation = MountPropagation::bidirectional;
  refused(shared, policy, "config.mounts[0].propagation: an id-mapped mount needs private propagation");
  refused(req, {.prepared_dir = "/bundle/mounts"},
          "config.mounts[0].uidMappings: id-mapped mounts are not supported on this host");
  // An image volume of a pod with its own user namespace is already mapped through it: the request
  // may repeat the pod's mappings (kubelet does), nothing else.
  MountRequest image{.container_path = "/i",
                     .has_image = true,
                     .image_source = "/x",
                     .uid_mappings = pod_ids,
                     .gid_mappings = pod_ids};
  refused(image, policy, "config.mounts[0].uidMappings: the pod has no user namespace of its own");
  MountPolicy userns_pod = policy;
  userns_pod.pod_uid_mappings = userns_pod.pod_gid_mappings = pod_ids;
  auto mapped = resolve_mounts({image}, kMountinfo, userns_pod);
  ASSERT_TRUE(mapped.ok()) << mapped.status().message();
  EXPECT_EQ((*mapped)[0].source, "/x");
  EXPECT_TRUE((*mapped)[0].uid_mappings.empty()) << "mapped once, by the volume";
  MountRequest other = image;
  other.uid_mappings = {{0, 131072, 65536}};
  refused(other, userns_pod, "config.mounts[0].uidMappings: an image volume is mapped as its pod's user namespace is");
}

// An id-mapped copy shows the source's files under the mapped ids (root's as the mapping's host
// id), writes through it land with the unmapped ids, and it is read-only too when asked.
TEST(PreparedMounts, IdMappedCopyAndRelease) {
  if (!kernel_has_mount_setattr()) GTEST_SKIP() << "this kernel has no mount_setattr";
  test::TempDir src, bundle;
  test::write_file(src / "file", "x");
  ASSERT_EQ(::chown((src / "file").c_str(), 0, 0), 0);
  const std::vector<IdMapping> ids{{0, 200000, 65536}};
  PreparedMount m{.source = src.path(), .target = bundle / "mounts/0", .uids = ids, .gids = ids};
  PreparedMount ro = m;
  ro.target = bundle / "mounts/1";
  ro.read_only = true;
  Status s = prepare_mounts({m, ro}, {});
  ASSERT_TRUE(s.ok()) << s.message();
  struct stat st {};
  ASSERT_EQ(::stat((bundle / "mounts/0/file").c_str(), &st), 0);
  EXPECT_EQ(st.st_uid, 200000u);
  EXPECT_EQ(st.st_gid, 200000u);
  // Root (unmapped by the copy's idmap) cannot create files there: its id has no on-disk form.
  int fd = ::open((bundle / "mounts/0/new").c_str(), O_CREAT | O_WRONLY | O_CLOEXEC, 0600);
  EXPECT_LT(fd, 0);
  EXPECT_EQ(errno, EOVERFLOW);
  if (fd >= 0) ::close(fd);
  // The read-only copy says so first.
  fd = ::open((bundle / "mounts/1/new").c_str(), O_CREAT | O_WRONLY | O_CLOEXEC, 0600);
  EXPECT_LT(fd, 0);
  EXPECT_EQ(errno, EROFS);
  if (fd >= 0) ::close(fd);
  struct stat dir {};
  ASSERT_EQ(::stat((bundle / "mounts").c_str(), &dir), 0);
  EXPECT_EQ(dir.st_mode & 07777, 0711u);  // the pod's root reaches the copies

  // Mappings equal to the pod's use the pod's pinned user namespace: a missing pin is the error.
  s = prepare_mounts({{.source = src.path(), .target = bundle / "mounts/2", .uids = ids, .gids = ids}},
                     {.pod_userns_path = bundle / "no-such-userns", .uids = ids, .gids = ids});
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("open the pod's user namespace " + (bundle / "no-such-userns")), std::string::npos)
      << s.message();
  ASSERT_TRUE(release_prepared_mounts(bundle / "mounts").ok());
  EXPECT_EQ(test::read_file("/proc/self/mountinfo").find(bundle.path()), std::string::npos);
  EXPECT_FALSE(fs::exists(bundle / "mounts"));
}

// Whether this kernel can id-map a tmpfs (6.3 and later can; Debian 12's 6.1 cannot, and berth
// then refuses an id-mapped volume with a tmpfs in it).
bool kernel_can_idmap_tmpfs() {
  test::TempDir dir, target;
  if (::mount("tmpfs", dir.path().c_str(), "tmpfs", 0, "size=64k") != 0) return false;
  bool can = false;
  if (auto ns = make_user_namespace({{0, 200000, 65536}}, {{0, 200000, 65536}}); ns.ok()) {
    can = attach_idmapped_mount(dir.path(), ns->get(), target.path(), false).ok();
    if (can) ::umount2(target.path().c_str(), MNT_DETACH);
  }
  ::umount2(dir.path().c_str(), MNT_DETACH);
  return can;
}

// A copy of a source on a shared mount is private: releasing it (a detach of the whole tree)
// leaves the host's mounts below the source mounted, and a mount the host adds later below the
// source does not show in the copy.
TEST(PreparedMounts, ACopyOfASharedMountIsPrivate) {
  if (!kernel_has_mount_setattr()) GTEST_SKIP() << "this kernel has no mount_setattr";
  test::TempDir src, bundle;
  ASSERT_EQ(::mount(src.path().c_str(), src.path().c_str(), nullptr, MS_BIND, nullptr), 0);
  ASSERT_EQ(::mount(nullptr, src.path().c_str(), nullptr, MS_SHARED, nullptr), 0);
  fs::create_directories(src / "sub");
  fs::create_directories(src / "later");
  ASSERT_EQ(::mount("tmpfs", (src / "sub").c_str(), "tmpfs", 0, "size=64k"), 0);
  test::write_file(src / "sub/kept", "k");
  const std::vector<IdMapping> ids{{0, 200000, 65536}};
  const bool idmap_tmpfs = kernel_can_idmap_tmpfs();
  for (bool idmapped : {true, false}) {
    SCOPED_TRACE(idmapped ? "id-mapped" : "read-only");
    if (idmapped && !idmap_tmpfs) {
      std::cout << "this kernel cannot id-map the tmpfs below the source: the id-mapped copy is not tried\n";
      continue;
    }
    PreparedMount m{.source = src.path(), .target = bundle / "mounts/0", .read_only = !idmapped};
    if (idmapped) m.uids = m.gids = ids;
    Status s = prepare_mounts({m}, {});
    ASSERT_TRUE(s.ok()) << s.message();
    EXPECT_TRUE(fs::exists(bundle / "mounts/0/sub/kept"));
    ASSERT_EQ(::mount("tmpfs", (src / "later").c_str(), "tmpfs", 0, "size=64k"), 0);
    test::write_file(src / "later/new", "n");
    EXPECT_FALSE(fs::exists(bundle / "mounts/0/later/new")) << "a host mount propagated into the copy";
    ASSERT_EQ(::umount2((src / "later").c_str(), MNT_DETACH), 0);
    ASSERT_TRUE(release_prepared_mounts(bundle / "mounts").ok());
    EXPECT_TRUE(fs::exists(src / "sub/kept")) << "releasing the copy unmounted the source's own mount";
  }
  ::umount2((src / "sub").c_str(), MNT_DETACH);
  ::umount2(src.path().c_str(), MNT_DETACH);
}

// A userns pod's rootfs: the layers' id-mapped copies hang below a private self-bind of
// <bundle>/idmap while the overlay is made, so a bundle dir on a shared mount (/run on systemd
// hosts) never shows them in its peers (other mount namespaces, a pod's rslave /run), and all of
// it is gone once the overlay holds the layers. A thread woken by every change of the mount table
// looks for a copy in the peer meanwhile.
TEST(ContainerRootfs, IdMappedLayersAreNotPropagated) {
  if (!kernel_has_mount_setattr()) GTEST_SKIP() << "this kernel has no mount_setattr";
  test::TempDir layers, run, peer;
  std::vector<std::string> lowers;
  for (int i = 0; i < 20; ++i) {
    fs::create_directories(layers / std::to_string(i));
    lowers.push_back(layers / std::to_string(i));
  }
  test::write_file(layers / "0/file", "x");
  ASSERT_EQ(::chown((layers / "0/file").c_str(), 0, 0), 0);
  ASSERT_EQ(::mount(run.path().c_str(), run.path().c_str(), nullptr, MS_BIND, nullptr), 0);
  ASSERT_EQ(::mount(nullptr, run.path().c_str(), nullptr, MS_SHARED, nullptr), 0);
  ASSERT_EQ(::mount(run.path().c_str(), peer.path().c_str(), nullptr, MS_BIND, nullptr), 0);  // a peer of run
  const std::vector<IdMapping> ids{{0, 200000, 65536}};
  auto userns = make_user_namespace(ids, ids);
  ASSERT_TRUE(userns.ok()) << userns.status().message();

  std::atomic<bool> done{false}, seen_in_peer{false};
  UniqueFd mounts(::open("/proc/self/mountinfo", O_RDONLY | O_CLOEXEC));
  ASSERT_TRUE(mounts);
  std::thread watcher([&] {
    const std::string in_peer = " " + std::string(peer / "idmap") + "/";
    while (!done) {
      pollfd p{mounts.get(), POLLPRI, 0};
      ::poll(&p, 1, 20);
      if (test::read_file("/proc/self/mountinfo").find(in_peer) != std::string::npos) seen_in_peer = true;
    }
  });
  RootfsIdmap idmap{userns->get(), run / "idmap", 200000, 200000};
  Status s = mount_container_rootfs(lowers, run / "upper", run / "work", run / "rootfs", &idmap);
  done = true;
  watcher.join();
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_FALSE(seen_in_peer) << "an id-mapped layer copy showed in a peer of the bundle's mount";
  struct stat st {};
  ASSERT_EQ(::stat((run / "rootfs/file").c_str(), &st), 0);
  EXPECT_EQ(st.st_uid, 200000u);  // seen through the layer's id-mapped copy
  ASSERT_TRUE(unmount_container_rootfs(run / "rootfs").ok());
  std::string mountinfo = test::read_file("/proc/self/mountinfo");
  EXPECT_EQ(mountinfo.find(run / "idmap"), std::string::npos) << mountinfo;
  EXPECT_FALSE(fs::exists(run / "idmap"));
  ::umount2(peer.path().c_str(), MNT_DETACH);
  ::umount2(run.path().c_str(), MNT_DETACH);
}

TEST(BindMounts, PropagationNeedsAMatchingHostMount) {
  test::TempDir dir;
  fs::create_directories(dir / "shared");
  fs::create_directories(dir / "private");
  ASSERT_EQ(::mount("tmpfs", (dir / "shared").c_str(), "tmpfs", 0, nullptr), 0);
  ASSERT_EQ(::mount(nullptr, (dir / "shared").c_str(), nullptr, MS_SHARED, nullptr), 0);
  ASSERT_EQ(::mount("tmpfs", (dir / "private").c_str(), "tmpfs", 0, nullptr), 0);
  ASSERT_EQ(::mount(nullptr, (dir / "private").c_str(), nullptr, MS_PRIVATE, nullptr), 0);
  std::string mountinfo = test::read_file("/proc/self/mountinfo");

  auto bi = resolve_mounts(
      {{.container_path = "/x", .host_path = dir / "shared", .propagation = MountPropagation::bidirectional}},
      mountinfo);
  ASSERT_TRUE(bi.ok()) << bi.status().message();
  EXPECT_EQ((*bi)[0].options, (Strings{"rbind", "rshared"}));
  auto h2c = resolve_mounts(
      {{.container_path = "/x", .host_path = dir / "shared", .propagation = MountPropagation::host_to_container}},
      mountinfo);
  ASSERT_TRUE(h2c.ok());
  EXPECT_EQ((*h2c)[0].options, (Strings{"rbind", "rslave"}));

  auto bad = resolve_mounts(
      {{.container_path = "/x", .host_path = dir / "private", .propagation = MountPropagation::bidirectional}},
      mountinfo);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), Code::failed_precondition);
  EXPECT_NE(bad.status().message().find("bidirectional needs " + (dir / "private")), std::string::npos);
  EXPECT_FALSE(
      resolve_mounts(
          {{.container_path = "/x", .host_path = dir / "private", .propagation = MountPropagation::host_to_container}},
          mountinfo)
          .ok());
}

}  // namespace
}  // namespace berth

namespace berth {
namespace {

TEST(Devices, NodeDirectoryAndErrors) {
  auto null = resolve_devices({{.container_path = "/dev/mynull", .host_path = "/dev/null", .permissions = "rw"}});
  ASSERT_TRUE(null.ok()) << null.status().message();
  ASSERT_EQ(null->size(), 1u);
  EXPECT_EQ((*null)[0].path, "/dev/mynull");
  EXPECT_EQ((*null)[0].type, 'c');
  EXPECT_EQ((*null)[0].major, 1);
  EXPECT_EQ((*null)[0].minor, 3);
  EXPECT_EQ((*null)[0].access, "rw");

  test::TempDir dir;
  ASSERT_EQ(::mknod((dir / "zero").c_str(), S_IFCHR | 0600, makedev(1, 5)), 0);
  fs::create_directories(dir / "sub");
  ASSERT_EQ(::mknod((dir / "sub/full").c_str(), S_IFCHR | 0666, makedev(1, 7)), 0);
  test::write_file(dir / "plain", "x");
  auto tree = resolve_devices({{.container_path = "/dev/set", .host_path = dir.path()}});
  ASSERT_TRUE(tree.ok()) << tree.status().message();
  ASSERT_EQ(tree->size(), 2u);
  for (const auto& d : *tree) {
    EXPECT_TRUE(d.path == "/dev/set/zero" || d.path == "/dev/set/sub/full") << d.path;
    EXPECT_EQ(d.access, "rwm");
  }

  auto missing = resolve_devices({{.container_path = "/dev/x", .host_path = "/dev/berth-no-such"}});
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("config.devices[0].host_path: /dev/berth-no-such"), std::string::npos);
  auto file = resolve_devices({{.container_path = "/dev/x", .host_path = dir / "plain"}});
  ASSERT_FALSE(file.ok());
  EXPECT_NE(file.status().message().find("not a device node"), std::string::npos);
  EXPECT_FALSE(resolve_devices({{.container_path = "/dev/x", .host_path = "/dev/null", .permissions = "rwx"}}).ok());
}

TEST(Devices, HostDevicesForPrivileged) {
  auto all = host_devices();
  ASSERT_TRUE(all.ok()) << all.status().message();
  bool has_null = false;
  for (const auto& d : *all) {
    has_null |= d.path == "/dev/null";
    EXPECT_NE(d.path.rfind("/dev/pts/", 0), 0u) << d.path;
  }
  EXPECT_TRUE(has_null);
}

}  // namespace
}  // namespace berth
