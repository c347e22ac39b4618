// Checkpoint archives (image/checkpoint_archive.h) in this process, on trees and tars made here: a
// round trip of a checkpoint's files; an overlayfs upper dir's diff (its whiteouts become
// deleted.files) applied to an empty upper dir gives the same files and whiteouts; and what an
// archive from anywhere may not do (absolute names, "..", links, devices, more bytes than allowed,
// deletions that climb) is refused naming the entry, with nothing written outside the destination.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "../../image/checkpoint_archive.h"
#include "berth/test/temp_dir.h"

namespace berth {
namespace {

namespace fs = std::filesystem;
using test::read_file;
using test::TempDir;
using test::write_file;

int sh_in(const std::string& dir, const std::string& cmd) {
  return std::system(("set -e; cd '" + dir + "'; " + cmd).c_str());
}

TEST(CheckpointArchive, PackAndUnpackGiveTheSameFilesOwnedByNobodyElse) {
  TempDir t;
  const std::string d = t.path();
  fs::create_directories(d + "/src/checkpoint");
  write_file(d + "/src/config.dump", "{\"id\":\"x\"}");
  ASSERT_EQ(sh_in(d, "head -c 300000 /dev/urandom > src/checkpoint/pages-1.img"), 0);
  ASSERT_TRUE(pack_checkpoint_archive(d + "/src", d + "/a.tar").ok());
  struct stat st {};
  ASSERT_EQ(::stat((d + "/a.tar").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  // Never over a file that is there.
  EXPECT_FALSE(pack_checkpoint_archive(d + "/src", d + "/a.tar").ok());
  fs::create_directories(d + "/dst");
  ASSERT_TRUE(unpack_checkpoint_archive(d + "/a.tar", d + "/dst", 1 << 30).ok());
  EXPECT_EQ(
      sh_in(d, "cmp src/config.dump dst/config.dump && cmp src/checkpoint/pages-1.img dst/checkpoint/pages-1.img"), 0);
  // More bytes than allowed: refused.
  fs::create_directories(d + "/small");
  auto s = unpack_checkpoint_archive(d + "/a.tar", d + "/small", 1000);
  EXPECT_EQ(s.code(), Code::invalid_argument) << s.message();
  EXPECT_NE(s.message().find("bytes"), std::string::npos) << s.message();
}

TEST(CheckpointArchive, AnUpperDirsDiffAppliedToAnEmptyOneGivesItBack) {
  TempDir t;
  const std::string d = t.path();
  fs::create_directories(d + "/upper/etc");
  fs::create_directories(d + "/upper/var/data");
  write_file(d + "/upper/etc/added", "new\n", 0640);
  write_file(d + "/upper/var/data/f", "data\n");
  ASSERT_EQ(::symlink("/etc/added", (d + "/upper/link").c_str()), 0);
  ASSERT_EQ(::mknod((d + "/upper/etc/motd").c_str(), S_IFCHR, makedev(0, 0)), 0);
  ASSERT_EQ(::mknod((d + "/upper/var/gone").c_str(), S_IFCHR, makedev(0, 0)), 0);
  auto diff = write_rootfs_diff(d + "/upper", d + "/rootfs-diff.tar");
  ASSERT_TRUE(diff.ok()) << diff.status().message();
  EXPECT_EQ(diff->deleted, (std::vector<std::string>{"/etc/motd", "/var/gone"}));
  // The tar holds no whiteout: deletions travel in deleted.files, as CRI-O writes them.
  EXPECT_EQ(sh_in(d, "! tar tvf rootfs-diff.tar | grep -q motd"), 0);
  write_file(d + "/deleted.files", "[\"/etc/motd\",\"/var/gone\"]");
  fs::create_directories(d + "/new");
  auto s = apply_rootfs_diff(d + "/rootfs-diff.tar", d + "/deleted.files", d + "/new");
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(read_file(d + "/new/etc/added"), "new\n");
  EXPECT_EQ(read_file(d + "/new/var/data/f"), "data\n");
  EXPECT_EQ(fs::read_symlink(d + "/new/link"), "/etc/added");
  for (const char* w : {"/new/etc/motd", "/new/var/gone"}) {
    struct stat st {};
    ASSERT_EQ(::lstat((d + w).c_str(), &st), 0) << w;
    EXPECT_TRUE(S_ISCHR(st.st_mode) && st.st_rdev == makedev(0, 0)) << w;
  }
  struct stat st {};
  ASSERT_EQ(::stat((d + "/new/etc/added").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0640u);
}

TEST(CheckpointArchive, WhatAnArchiveFromAnywhereMayNotDoIsRefused) {
  TempDir t;
  const std::string d = t.path();
  fs::create_directories(d + "/outside");
  fs::create_directories(d + "/src");
  write_file(d + "/src/file", "x");
  ASSERT_EQ(sh_in(d + "/src",
                  "tar -cf ../climbs.tar --transform='s,^file,../outside/escaped,' file; "
                  "tar -cPf ../absolute.tar --transform='s,^file,/outside-escaped,' file; "
                  "ln -s ../outside link; tar -cf ../symlink.tar link; rm link; "
                  "ln file hard; tar -cf ../hardlink.tar file hard; rm hard; "
                  "mknod dev c 1 3; tar -cf ../device.tar dev; rm dev; "
                  "mkfifo fifo; tar -cf ../fifo.tar fifo; rm fifo; "
                  "head -c 5000 /dev/urandom > ../garbage.tar"),
            0);
  for (const char* name : {"climbs", "absolute", "symlink", "hardlink", "device", "fifo", "garbage"}) {
    const std::string dest = d + "/dest-" + name;
    fs::create_directories(dest);
    auto s = unpack_checkpoint_archive(d + "/" + name + ".tar", dest, 1 << 20);
    EXPECT_EQ(s.code(), Code::invalid_argument) << name << ": " << s.message();
    EXPECT_NE(s.message().find("refused"), std::string::npos) << name << ": " << s.message();
  }
  EXPECT_TRUE(fs::is_empty(d + "/outside"));
  EXPECT_FALSE(fs::exists("/outside-escaped"));
  // Deletions that climb out of the upper dir, or name it, or are not paths.
  for (const char* json : {"[\"/../outside/x\"]", "[\"etc/motd\"]", "[\"/\"]", "[1]", "{}", "not json"}) {
    auto r = parse_deleted_files(json);
    EXPECT_FALSE(r.ok()) << json;
    EXPECT_NE(r.status().message().find("deleted.files"), std::string::npos) << r.status().message();
  }
  auto ok = parse_deleted_files("[\"/etc//motd\", \"/a/./b\"]");
  ASSERT_TRUE(ok.ok()) << ok.status().message();
  EXPECT_EQ(*ok, (std::vector<std::string>{"etc/motd", "a/b"}));
}

}  // namespace
}  // namespace berth
