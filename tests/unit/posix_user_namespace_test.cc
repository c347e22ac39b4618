// posix/ user namespaces: the mapping rules kubelet's requests are checked against, a pod's user
// and network namespaces made and pinned together (the netns owned by the userns), and id-mapped
// mounts. Needs root, as berthd does.
#include <gtest/gtest.h>
#include <fcntl.h>
#include <linux/nsfs.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>

#include "berth/file_text.h"
#include "berth/test/temp_dir.h"
#include "berth/user_namespace.h"

namespace berth {
namespace {

namespace fs = std::filesystem;

TEST(IdMappings, KubeletsMappingPassesAndEachBadOneIsNamed) {
  EXPECT_TRUE(validate_id_mappings({{0, 65536, 65536}}, "uids").ok());
  EXPECT_TRUE(validate_id_mappings({{0, 65536, 1}, {1, 200000, 65535}}, "uids").ok());
  EXPECT_TRUE(validate_id_mappings({{0, 0, 65536}}, "uids", true).ok());
  struct Bad {
    std::vector<IdMapping> ids;
    const char* says;
  };
  for (const Bad& b : std::vector<Bad>{
           {{}, "uids: no mapping given"},
           {{{0, 65536, 0}}, "uids[0]: length is 0"},
           {{{1, 65536, 10}}, "uids: container id 0 is not mapped"},
           {{{0, 0, 65536}}, "uids[0]: maps host id 0"},
           {{{0, 4294967000u, 65536}}, "run past 2^32"},
           {{{0, 65536, 100}, {50, 300000, 10}}, "uids[1]: container ids overlap those of uids[0]"},
           {{{0, 65536, 100}, {100, 65600, 10}}, "uids[1]: host ids overlap those of uids[0]"},
           {std::vector<IdMapping>(341, IdMapping{0, 65536, 1}), "341 mappings, more than the kernel's 340"},
       }) {
    Status s = validate_id_mappings(b.ids, "uids");
    EXPECT_EQ(s.code(), Code::invalid_argument);
    EXPECT_NE(s.message().find(b.says), std::string::npos) << s.message();
  }
  uint32_t host = 0;
  EXPECT_TRUE(map_to_host({{0, 65536, 1}, {1, 200000, 10}}, 5, &host));
  EXPECT_EQ(host, 200004u);
  EXPECT_FALSE(map_to_host({{0, 65536, 1}}, 1, &host));
}

// What a process that joined `userns_fd` reads in /proc/self/<file>.
std::string read_inside(int userns_fd, const char* file) {
  int p[2];
  EXPECT_EQ(::pipe(p), 0);
  pid_t pid = ::fork();
  if (pid == 0) {
    ::close(p[0]);
    if (::setns(userns_fd, CLONE_NEWUSER) != 0) ::_exit(1);
    std::string text = read_text_file(std::string("/proc/self/") + file);
    (void)!::write(p[1], text.data(), text.size());
    ::_exit(0);
  }
  ::close(p[1]);
  std::string out;
  char buf[512];
  for (ssize_t n; (n = ::read(p[0], buf, sizeof buf)) > 0;) out.append(buf, n);
  ::close(p[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  EXPECT_EQ(status, 0);
  return out;
}

TEST(PodNamespaces, AreMadeWithTheMappingsPinnedAndTheNetnsOwnedByTheUserns) {
  TempDir dir;
  std::string user = dir / "user", net = dir / "net";
  ASSERT_TRUE(
      create_pinned_user_and_net_ns({{0, 165536, 65536}}, {{0, 165536, 65536}, {65536, 400000, 1}}, user, net).ok());
  UniqueFd userns(::open(user.c_str(), O_RDONLY | O_CLOEXEC)), netns(::open(net.c_str(), O_RDONLY | O_CLOEXEC));
  ASSERT_TRUE(userns && netns);
  EXPECT_EQ(::ioctl(netns.get(), NS_GET_NSTYPE), CLONE_NEWNET);
  UniqueFd owner(::ioctl(netns.get(), NS_GET_USERNS));
  ASSERT_TRUE(owner);
  struct stat a {
  }, b{};
  ASSERT_EQ(::fstat(owner.get(), &a), 0);
  ASSERT_EQ(::fstat(userns.get(), &b), 0);
  EXPECT_EQ(a.st_ino, b.st_ino) << "the netns is not owned by the pod's user namespace";
  std::string uid_map = read_inside(userns.get(), "uid_map"), gid_map = read_inside(userns.get(), "gid_map");
  EXPECT_NE(uid_map.find("0     165536      65536"), std::string::npos) << uid_map;
  EXPECT_NE(gid_map.find("65536     400000          1"), std::string::npos) << gid_map;
  // Root outside is not root inside: setgroups stays allowed (berthd wrote the maps as root).
  EXPECT_EQ(read_inside(userns.get(), "setgroups"), "allow\n");

  // A second pin over an existing one is refused and leaves the first whole.
  EXPECT_FALSE(create_pinned_user_and_net_ns({{0, 165536, 65536}}, {{0, 165536, 65536}}, user, dir / "net2").ok());
  EXPECT_FALSE(fs::exists(dir / "net2"));
  for (const std::string& p : {user, net}) {
    EXPECT_TRUE(remove_namespace_pin(p).ok());
    EXPECT_FALSE(fs::exists(p));
    EXPECT_TRUE(remove_namespace_pin(p).ok()) << "a second removal is a no-op";
  }
  EXPECT_EQ(read_text_file("/proc/self/mountinfo").find(dir.path()), std::string::npos);
}

TEST(IdmappedMount, ShowsTheLayersFilesAsTheMappedIdsAndTheOverlayProbePasses) {
  TempDir dir;
  fs::create_directories(dir / "src");
  fs::create_directories(dir / "mapped");
  write_file(dir / "src/f", "x");
  ASSERT_EQ(::chown((dir / "src/f").c_str(), 0, 0), 0);
  ASSERT_EQ(::chown((dir / "src").c_str(), 7, 7), 0);
  auto userns = make_user_namespace({{0, 300000, 65536}}, {{0, 300000, 65536}});
  ASSERT_TRUE(userns.ok()) << userns.status().message();
  ASSERT_TRUE(attach_idmapped_mount(dir / "src", userns->get(), dir / "mapped", false).ok());
  struct stat st {};
  ASSERT_EQ(::stat((dir / "mapped/f").c_str(), &st), 0);
  EXPECT_EQ(st.st_uid, 300000u);
  EXPECT_EQ(st.st_gid, 300000u);
  ASSERT_EQ(::stat((dir / "mapped").c_str(), &st), 0);
  EXPECT_EQ(st.st_uid, 300007u);
  // A file made through the mount by host root is unmapped there: refused (EOVERFLOW).
  EXPECT_LT(::open((dir / "mapped/g").c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0644), 0);
  ASSERT_EQ(::umount2((dir / "mapped").c_str(), MNT_DETACH), 0);
  Status bad = attach_idmapped_mount(dir / "missing", userns->get(), dir / "mapped", false);
  EXPECT_NE(bad.message().find(dir / "missing"), std::string::npos) << bad.message();

  Status probe = probe_idmapped_overlay(dir / "probe");
  EXPECT_TRUE(probe.ok()) << probe.message();
  EXPECT_FALSE(fs::exists(dir / "probe"));
  EXPECT_EQ(read_text_file("/proc/self/mountinfo").find(dir.path()), std::string::npos);
}

}  // namespace
}  // namespace berth
