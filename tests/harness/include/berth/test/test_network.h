// TestNetwork: a CNI conf dir holding a real bridge network (Debian's bridge + host-local +
// portmap plugins) made for one test daemon: its own bridge name, a /24 no host address uses, and
// host-local's store under a temp dir. On destruction it removes the bridge, portmap's rules for
// its network and every file it made, also when the test failed.
#pragma once

#include <string>
#include <vector>

#include "berth/test/temp_dir.h"

namespace berth::test {

class TestNetwork {
 public:
  TestNetwork();
  ~TestNetwork();
  TestNetwork(const TestNetwork&) = delete;
  TestNetwork& operator=(const TestNetwork&) = delete;

  const std::string& conf_dir() const { return conf_dir_; }
  const std::string& name() const { return name_; }      // the CNI network name
  const std::string& bridge() const { return bridge_; }  // the host bridge device
  const std::string& subnet() const { return subnet_; }  // "10.x.y.0/24"
  std::string subnet_prefix() const;                     // "10.x.y."
  // host-local's per-network store: one file per allocated address.
  std::string ipam_store() const { return ipam_dir_ + "/" + name_; }
  const std::string& ipam_dir() const { return ipam_dir_; }

  // The conflist text for this network; extra_plugins are appended to bridge and portmap.
  std::string conflist(const std::vector<std::string>& extra_plugins = {},
                       const std::string& cni_version = "1.0.0") const;
  // (Re)writes <conf_dir>/10-<name>.conflist.
  void write_conflist(const std::vector<std::string>& extra_plugins = {},
                      const std::string& cni_version = "1.0.0") const;

  std::vector<std::string> allocated_ips() const;                            // files in the host-local store
  std::vector<std::string> veths() const;                                    // interfaces enslaved to the bridge
  std::vector<std::string> nat_rules_naming(const std::string& text) const;  // iptables-save -t nat lines

 private:
  TempDir dir_;
  std::string conf_dir_, ipam_dir_, name_, bridge_, subnet_;
};

}  // namespace berth::test
