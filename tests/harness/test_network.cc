// A per-daemon bridge network for tests; see test_network.h. Names and the subnet are random so
// daemons of one test (and leftovers of a crashed run) never share a bridge or an address range.
#include "berth/test/test_network.h"

#include <dirent.h>
#include <sys/random.h>

#include <filesystem>
#include <sstream>

#include "berth/test/helper_process.h"

namespace berth::test {

namespace {

uint32_t random_u32() {
  uint32_t v = 0;
  if (::getrandom(&v, sizeof v, 0) != sizeof v) v = static_cast<uint32_t>(::random());
  return v;
}

std::vector<std::string> lines_of(const std::string& s) {
  std::vector<std::string> out;
  std::istringstream in(s);
  for (std::string l; std::getline(in, l);)
    if (!l.empty()) out.push_back(l);
  return out;
}

}  // namespace

TestNetwork::TestNetwork() : dir_("berth-net") {
  conf_dir_ = dir_ / "net.d";
  ipam_dir_ = dir_ / "ipam";
  std::filesystem::create_directories(conf_dir_);
  std::filesystem::create_directories(ipam_dir_);
  char hex[9];
  std::snprintf(hex, sizeof hex, "%08x", random_u32());
  name_ = std::string("berth-test-") + hex;
  bridge_ = std::string("bt") + hex;
  // 10.[128-191].[0-255].0/24, skipping any /24 the host already has an address in.
  std::string host_addrs = shell("ip -o -4 addr show 2>/dev/null");
  for (int tries = 0; tries < 100; ++tries) {
    uint32_t r = random_u32();
    std::string prefix = "10." + std::to_string(128 + (r & 63)) + "." + std::to_string((r >> 8) & 255) + ".";
    if (host_addrs.find(" " + prefix) == std::string::npos) {
      subnet_ = prefix + "0/24";
      break;
    }
  }
  write_conflist();
}

TestNetwork::~TestNetwork() {
  // Rules portmap left for a pod a failed test never stopped (its comments name the network).
  for (const auto& rule : nat_rules_naming(name_)) {
    if (rule.rfind("-A ", 0) == 0) shell("iptables -w -t nat -D " + rule.substr(3) + " 2>/dev/null");
  }
  shell("ip link del " + bridge_ + " 2>/dev/null");
}

std::string TestNetwork::subnet_prefix() const { return subnet_.substr(0, subnet_.rfind('.') + 1); }

std::string TestNetwork::conflist(const std::vector<std::string>& extra_plugins, const std::string& cni_version) const {
  std::string plugins = R"({"type": "bridge", "bridge": ")" + bridge_ +
                        R"(", "isGateway": true, "ipMasq": false, "hairpinMode": true,
       "ipam": {"type": "host-local", "dataDir": ")" +
                        ipam_dir_ + R"(", "routes": [{"dst": "0.0.0.0/0"}],
                "ranges": [[{"subnet": ")" +
                        subnet_ + R"("}]]}},
      {"type": "portmap", "capabilities": {"portMappings": true}})";
  for (const auto& p : extra_plugins) plugins += ",\n      " + p;
  return R"({"cniVersion": ")" + cni_version + R"(", "name": ")" + name_ + R"(", "plugins": [
      )" +
         plugins + "]}\n";
}

void TestNetwork::write_conflist(const std::vector<std::string>& extra_plugins, const std::string& cni_version) const {
  std::string path = conf_dir_ + "/10-" + name_ + ".conflist";
  write_file(path + ".tmp", conflist(extra_plugins, cni_version));
  std::filesystem::rename(path + ".tmp", path);
}

std::vector<std::string> TestNetwork::allocated_ips() const {
  std::vector<std::string> out;
  DIR* d = ::opendir(ipam_store().c_str());
  if (!d) return out;
  while (dirent* e = ::readdir(d)) {
    std::string n = e->d_name;
    // host-local also keeps "last_reserved_ip.0" and a "lock" file beside one file per address.
    if (n[0] != '.' && n.find_first_not_of("0123456789.:abcdef") == std::string::npos &&
        n.find_first_of(".:") != std::string::npos)
      out.push_back(n);
  }
  ::closedir(d);
  return out;
}

std::vector<std::string> TestNetwork::veths() const {
  return lines_of(shell("ip -o link show master " + bridge_ + " 2>/dev/null"));
}

std::vector<std::string> TestNetwork::nat_rules_naming(const std::string& text) const {
  std::vector<std::string> out;
  for (const auto& l : lines_of(shell("iptables-save -t nat 2>/dev/null")))
    if (l.find(text) != std::string::npos) out.push_back(l);
  return out;
}

}  // namespace berth::test
