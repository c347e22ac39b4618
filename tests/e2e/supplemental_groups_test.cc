// SupplementalGroupsPolicy on a real berthd with runc, seen from inside the running container: the
// busybox test image's /etc/group puts user app (1000) in group video (44). Merge (the default)
// gives the container's process that group besides the pod's supplemental_groups; Strict gives it
// only its primary group and the pod's supplemental_groups. Checked in the init (its log), in an
// ExecSync'd process and in ContainerStatus.
#include <gtest/gtest.h>

#include <set>
#include <sstream>

#include "berth/test/cri_client.h"
#include "pod_fixture.h"

namespace berth::test {
namespace {

class SupplementalGroups : public PodFixture {
 protected:
  // A container of user 1000 with the pod's supplemental group 5000, printing `id -G` (with a
  // marker, as its log holds other lines) and sleeping.
  std::string run_with(const std::string& name, v1::SupplementalGroupsPolicy policy, bool set_policy) {
    auto c = shell_container(name, "echo \"groups: $(id -G)\"; exec sleep 1000");
    auto* sc = c.mutable_linux()->mutable_security_context();
    sc->mutable_run_as_user()->set_value(1000);
    sc->add_supplemental_groups(5000);
    if (set_policy) sc->set_supplemental_groups_policy(policy);
    return run(c);
  }
};

// The ids in `id -G` output, whatever their order.
std::set<int64_t> ids(const std::string& text) {
  std::set<int64_t> out;
  std::istringstream in(text);
  for (int64_t g; in >> g;) out.insert(g);
  return out;
}

std::set<int64_t> status_groups(const v1::ContainerStatus& st) {
  const auto& g = st.user().linux().supplemental_groups();
  return {g.begin(), g.end()};
}

TEST_F(SupplementalGroups, MergeAddsTheImagesGroupsStrictKeepsOnlyThePods) {
  auto& cri = ready();
  struct Case {
    const char* name;
    v1::SupplementalGroupsPolicy policy;
    bool set_policy;
    std::set<int64_t> groups;  // id -G: the primary group, then the others
  } cases[] = {
      {"unset", v1::Merge, false, {1000, 44, 5000}},
      {"merge", v1::Merge, true, {1000, 44, 5000}},
      {"strict", v1::Strict, true, {1000, 5000}},
  };
  for (const auto& k : cases) {
    SCOPED_TRACE(k.name);
    std::string id = run_with(k.name, k.policy, k.set_policy);
    const std::string path = logs_->path() + "/" + k.name + ".log";
    ASSERT_TRUE(wait_for_file_text(path, "groups: ")) << read_file(path);
    std::string log = read_file(path);
    size_t at = log.find("groups: ") + 8;
    EXPECT_EQ(ids(log.substr(at, log.find('\n', at) - at)), k.groups) << log;
    EXPECT_EQ(ids(exec_out(id, {"id", "-G"})), k.groups);
    std::set<int64_t> others = k.groups;
    others.erase(1000);
    EXPECT_EQ(status_groups(status(id)), others);
    ASSERT_OK(cri.stop_container(id, 0));
    ASSERT_OK(cri.remove_container(id));
  }
}

}  // namespace
}  // namespace berth::test
