// Fuzz target: what CNI plugins and files hand berth (network/): ADD results in the 0.1-1.0 forms
// (result_ips), a failed plugin's error JSON (cni_error_json), network config files
// (parse_network_config_file) and result cache entries read back from disk (ResultCache::find).
// The first byte picks the parser; the rest is the plugin's stdout or the file's bytes. Cache
// entries are written with a correct checksum when the byte asks for it, so the fuzzer reaches the
// entry's fields behind the checksum.
#include <arpa/inet.h>

#include <filesystem>

#include "../../network/cni_result.h"
#include "../../network/network_config.h"
#include "../../network/plugin_output.h"
#include "../../network/result_cache.h"
#include "berth/checksummed_json.h"
#include "fuzz_support.h"

using namespace berth;
using namespace berth::cni;

namespace {

void result(const std::string& text) {
  auto j = nlohmann::json::parse(text, nullptr, false);
  auto ips = result_ips(j);
  if (!ips.ok()) {
    FUZZ_CHECK(ips.status().code() == Code::invalid_argument);
    return;
  }
  bool seen_v6 = false;
  for (const auto& ip : *ips) {
    unsigned char buf[16];
    bool v4 = inet_pton(AF_INET, ip.c_str(), buf) == 1;
    bool v6 = inet_pton(AF_INET6, ip.c_str(), buf) == 1;
    FUZZ_CHECK(v4 || v6);
    FUZZ_CHECK(!(v4 && seen_v6));  // IPv4 first
    seen_v6 = seen_v6 || v6;
  }
}

void error_json(const std::string& text) {
  std::string err = cni_error_json(text);
  if (!err.empty()) {
    auto j = nlohmann::json::parse(err, nullptr, false);
    FUZZ_CHECK(j.is_object());
  }
  (void)plugin_output_text(text, text);
}

void config_file(const std::string& text, uint8_t which) {
  const char* names[] = {"/etc/cni/net.d/10-pod.conflist", "/etc/cni/net.d/10-pod.conf", "/etc/cni/net.d/10-pod.json"};
  auto list = parse_network_config_file(text, names[which % 3]);
  if (!list.ok()) {
    FUZZ_CHECK(list.status().code() == Code::invalid_argument);
    return;
  }
  FUZZ_CHECK(!list->name.empty() && list->name.find('/') == std::string::npos);
  auto types = list->plugin_types();
  FUZZ_CHECK(!types.empty());
  // What berth keeps (raw) is itself a valid list: DEL from the cache walks it again.
  auto again = network_config_from_json(list->raw, "");
  FUZZ_CHECK(again.ok() && again->name == list->name && again->plugin_types() == types);
  (void)compare_cni_versions(list->cni_version, "0.4.0");
}

void cache_entry(const std::string& text, bool with_checksum) {
  const std::string dir = fuzz::scratch_dir() + "/cache";
  std::filesystem::create_directories(dir + "/results");
  std::string file = text;
  if (with_checksum) {
    auto entry = nlohmann::json::parse(text, nullptr, false);
    if (entry.is_discarded()) return;
    nlohmann::json wrapped = {{"version", 1}, {"sha256", sha256_hex(entry.dump())}, {"entry", entry}};
    file = wrapped.dump();
  }
  fuzz::write_file(dir + "/results/pod-net-c1-eth0", file);
  ResultCache cache(dir);
  std::vector<std::string> corrupt;
  auto found = cache.find("c1", "eth0", &corrupt);
  FUZZ_CHECK(found.ok());
  if (*found) {
    FUZZ_CHECK((*found)->container_id == "c1" && (*found)->ifname == "eth0");
    (void)result_ips((*found)->result);
  }
  auto strict = cache.find("c1", "eth0");
  FUZZ_CHECK(strict.ok() == corrupt.empty());
  (void)cache.container_ids();
}

}  // namespace

BERTH_FUZZ_TARGET(cni_result) {
  fuzz::Reader in(data, size);
  uint8_t mode = in.byte();
  std::string text(in.rest());
  switch (mode % 5) {
    case 0: result(text); break;
    case 1: error_json(text); break;
    case 2: config_file(text, mode / 5); break;
    default: cache_entry(text, mode % 5 == 4);
  }
  return 0;
}
