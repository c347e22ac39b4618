// Where the node keeps cgroups, for tests that look at them from the host: cgroup v2 has one
// hierarchy at /sys/fs/cgroup, v1 one per controller below it (and hybrid hosts a v2 one at
// /sys/fs/cgroup/unified). Tests run on both; CI runs the suite on a v2 guest (tests/vm).
#pragma once

#include <string>
#include <vector>

namespace berth::test {

// True on a cgroup v2 host (unified hierarchy at /sys/fs/cgroup).
bool host_cgroup_v2();

// The root of every hierarchy: {"/sys/fs/cgroup"} on v2, each controller's (and unified's) on v1.
std::vector<std::string> host_cgroup_roots();

// The host dir of cgroup `path` ("/berth-test-pods/t<pid>/<id>"): in `v1_controller`'s hierarchy on v1.
std::string host_cgroup_dir(const std::string& path, const std::string& v1_controller);

// One of its files: `v1_file` ("memory.limit_in_bytes") on v1, `v2_file` ("memory.max") on v2.
std::string host_cgroup_file(const std::string& path, const std::string& v1_controller, const std::string& v1_file,
                             const std::string& v2_file);

}  // namespace berth::test
