// Image volumes (CRI Mount.image) released the ways kubelet releases them, on a real berthd with
// runc: by RemovePodSandbox alone (no RemoveContainer first, as kubelet's pod cleanup does), and
// after a berthd restart by the removal of their last user, with RemoveImage in between keeping
// the layers the running containers read. "Released" is checked on the host: no mount left under
// <state>/image-volumes, and the image's own snapshots deleted once nothing holds them.
#include <gtest/gtest.h>

#include <filesystem>
#include <set>

#include "berth/test/cri_client.h"
#include "pod_fixture.h"

namespace berth::test {
namespace {

namespace fs = std::filesystem;

class ImageVolumes : public PodFixture {
 protected:
  // Every test image: test/layered:v1 has four layers, the first of them busybox's.
  static void SetUpTestSuite() {
    registry_ = new RegistryProcess();
    push_test_images(registry_->url());
  }
  static std::string layered() { return registry_->host() + "/test/layered:v1"; }

  // A container reading layered's files at /vol, read-only.
  std::string run_with_volume(const std::string& name) {
    auto c = shell_container(name, "sleep 1000");
    auto* m = c.add_mounts();
    m->set_container_path("/vol");
    m->mutable_image()->set_image(layered());
    return run(c);
  }
  // The image store's snapshots (one per layer it keeps).
  std::set<std::string> snapshots() const {
    std::set<std::string> out;
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(d_->root() + "/images/snapshots", ec)) out.insert(e.path().filename());
    return out;
  }
  // Mounts of the daemon's image volumes, as the host's mount table lists them.
  int volume_mounts() const {
    std::string info = read_file("/proc/self/mountinfo");
    const std::string dir = " " + d_->state() + "/image-volumes/";
    int n = 0;
    for (size_t at = info.find(dir); at != std::string::npos; at = info.find(dir, at + 1)) ++n;
    return n;
  }
  bool image_listed(const std::string& ref) {
    v1::ImageStatusRequest req;
    req.mutable_image()->set_image(ref);
    v1::ImageStatusResponse resp;
    grpc::ClientContext ctx;
    EXPECT_TRUE(cri_->images().ImageStatus(&ctx, req, &resp).ok());
    return resp.has_image();
  }
};

// kubelet removes a pod with RemovePodSandbox alone: its containers go with it, and so must their
// image volumes, so that nothing stays mounted and the image can really be removed afterwards.
TEST_F(ImageVolumes, RemovePodSandboxAloneReleasesThemAndTheImage) {
  auto& cri = ready();
  const std::set<std::string> busybox_only = snapshots();
  ASSERT_OK(cri.pull_image(layered()));
  const std::set<std::string> with_layered = snapshots();
  ASSERT_EQ(with_layered.size(), busybox_only.size() + 3) << "layered shares its first layer with busybox";
  std::string a = run_with_volume("a");
  std::string b = run_with_volume("b");
  EXPECT_EQ(exec_out(a, {"cat", "/vol/zstd-file"}), "from a zstd layer\n");
  EXPECT_EQ(exec_out(b, {"cat", "/vol/zstd-file"}), "from a zstd layer\n");
  EXPECT_EQ(volume_mounts(), 1);

  ASSERT_OK(cri.remove_pod(pod_));
  EXPECT_TRUE(cri.list_containers().empty());
  EXPECT_EQ(volume_mounts(), 0);
  EXPECT_FALSE(fs::exists(d_->state() + "/image-volumes/" + pod_));
  // Nothing holds layered any more: its removal deletes its own layers, not busybox's.
  EXPECT_EQ(snapshots(), with_layered);
  ASSERT_OK(cri.remove_image(layered()));
  EXPECT_FALSE(image_listed(layered()));
  EXPECT_EQ(snapshots(), busybox_only);
}

// After a restart berthd knows the volumes' users from their containers' specs: RemoveImage then
// removes the image's record but keeps the layers both containers read, one container's removal
// keeps them for the other, and the last one's removal deletes them.
TEST_F(ImageVolumes, AfterARestartRemoveImageKeepsTheLayersUntilTheLastUserGoes) {
  auto& cri = ready();
  const std::set<std::string> busybox_only = snapshots();
  ASSERT_OK(cri.pull_image(layered()));
  const std::set<std::string> with_layered = snapshots();
  std::string a = run_with_volume("a");
  std::string b = run_with_volume("b");
  EXPECT_EQ(exec_out(a, {"cat", "/vol/zstd-file"}), "from a zstd layer\n");

  ASSERT_EQ(d_->stop(), 0);
  ASSERT_TRUE(d_->start()) << d_->log();
  cri_ = std::make_unique<CriClient>(*d_);
  ASSERT_OK(cri_->remove_image(layered()));
  EXPECT_FALSE(image_listed(layered()));
  EXPECT_EQ(snapshots(), with_layered);
  EXPECT_EQ(exec_out(a, {"cat", "/vol/zstd-file"}), "from a zstd layer\n");
  EXPECT_EQ(exec_out(b, {"cat", "/vol/zstd-file"}), "from a zstd layer\n");

  ASSERT_OK(cri_->stop_container(a, 0));
  ASSERT_OK(cri_->remove_container(a));
  EXPECT_EQ(snapshots(), with_layered);
  EXPECT_EQ(volume_mounts(), 1);
  EXPECT_EQ(exec_out(b, {"cat", "/vol/zstd-file"}), "from a zstd layer\n");

  ASSERT_OK(cri_->stop_container(b, 0));
  ASSERT_OK(cri_->remove_container(b));
  EXPECT_EQ(volume_mounts(), 0);
  EXPECT_EQ(snapshots(), busybox_only);
}

}  // namespace
}  // namespace berth::test
