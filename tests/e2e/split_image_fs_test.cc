// image_root, KEP-4191's split image filesystem made for real: the image store on a tmpfs of the
// test's own, the writable layers under root on another filesystem. Pulls land on the image
// filesystem alone, ImageFsInfo reports the two apart, and a container runs from layers on one
// with its writes on the other.
#include <sys/mount.h>
#include <sys/stat.h>

#include <filesystem>

#include "pod_fixture.h"

namespace berth::test {
namespace {

namespace fs = std::filesystem;

class SplitImageFs : public PodFixture {
 protected:
  // Mounted before the daemon starts and detached after the fixture's daemons and pods are gone
  // (members go after TearDown).
  struct Tmpfs {
    explicit Tmpfs(const std::string& dir) : dir(dir) {
      fs::create_directories(dir);
      mounted = ::mount("berth-imagefs-test", dir.c_str(), "tmpfs", MS_NOSUID | MS_NODEV, "size=512m,mode=0711") == 0;
    }
    ~Tmpfs() {
      if (mounted) ::umount2(dir.c_str(), MNT_DETACH);
      std::error_code ec;
      fs::remove(dir, ec);
    }
    std::string dir;
    bool mounted = false;
  };
  std::unique_ptr<TempDir> image_dir_ = std::make_unique<TempDir>("berth-imagefs");
  std::unique_ptr<Tmpfs> imagefs_;

  static dev_t device_of(const std::string& path) {
    struct stat st {};
    return ::stat(path.c_str(), &st) == 0 ? st.st_dev : 0;
  }
  v1::ImageFsInfoResponse fs_info() {
    grpc::ClientContext ctx;
    v1::ImageFsInfoResponse r;
    EXPECT_TRUE(cri_->images().ImageFsInfo(&ctx, v1::ImageFsInfoRequest(), &r).ok());
    return r;
  }
};

TEST_F(SplitImageFs, LayersOnImageRootWritableLayersUnderRoot) {
  imagefs_ = std::make_unique<Tmpfs>(*image_dir_ / "fs");
  ASSERT_TRUE(imagefs_->mounted) << "mount a tmpfs at " << imagefs_->dir;
  const std::string image_root = imagefs_->dir;
  ready("pod", {.config_toml = "image_root = \"" + image_root + "\"\ndisk_usage_refresh_seconds = 1\n"});
  ASSERT_FALSE(pod_.empty());

  // The store is on the image filesystem; nothing of it under root.
  EXPECT_TRUE(fs::exists(image_root + "/images/index.json"));
  EXPECT_FALSE(fs::exists(d_->root() + "/images"));
  ASSERT_NE(device_of(image_root + "/images"), device_of(d_->root()));

  // A container reads its image from one filesystem and writes to the other.
  std::string id = run(shell_container("writer", "head -c 8000000 /dev/zero > /written && sleep 1000"));
  v1::ExecSyncResponse out;
  bool written = false;
  for (int i = 0; i < 200 && !written; ++i) {
    ASSERT_OK(cri_->exec_sync(id, {"/bin/sh", "-c", "ls -l /written && cat /etc/passwd | head -1"}, &out));
    written = out.exit_code() == 0 && out.stdout().find("8000000") != std::string::npos;
    if (!written) std::this_thread::sleep_for(50ms);
  }
  ASSERT_TRUE(written) << out.stdout() << out.stderr();
  bool under_root = false, on_imagefs = false;
  for (const auto& e : fs::recursive_directory_iterator(d_->root() + "/containers"))
    under_root |= e.path().filename() == "written" && !e.is_symlink() && e.is_regular_file();
  for (const auto& e : fs::recursive_directory_iterator(image_root)) on_imagefs |= e.path().filename() == "written";
  EXPECT_TRUE(under_root) << "the container's write is in its upper dir under root";
  EXPECT_FALSE(on_imagefs);

  // ImageFsInfo: each filesystem with its own figures (measured in the background, every second here).
  v1::ImageFsInfoResponse info;
  auto deadline = std::chrono::steady_clock::now() + 20s;
  do {
    info = fs_info();
    if (info.container_filesystems_size() == 1 && info.container_filesystems(0).used_bytes().value() >= 8000000 &&
        info.image_filesystems_size() == 1 && info.image_filesystems(0).used_bytes().value() > 500000)
      break;
    std::this_thread::sleep_for(100ms);
  } while (std::chrono::steady_clock::now() < deadline);
  ASSERT_EQ(info.image_filesystems_size(), 1);
  ASSERT_EQ(info.container_filesystems_size(), 1);
  EXPECT_EQ(info.image_filesystems(0).fs_id().mountpoint(), image_root + "/images");
  EXPECT_EQ(info.container_filesystems(0).fs_id().mountpoint(), d_->root() + "/containers");
  EXPECT_GT(info.image_filesystems(0).used_bytes().value(), 500000u);
  EXPECT_LT(info.image_filesystems(0).used_bytes().value(), 8000000u) << "the container's write is not the image's";
  EXPECT_GE(info.container_filesystems(0).used_bytes().value(), 8000000u);
  EXPECT_GT(info.image_filesystems(0).inodes_used().value(), 5u);
  EXPECT_GT(info.container_filesystems(0).inodes_used().value(), 0u);
}

}  // namespace
}  // namespace berth::test
