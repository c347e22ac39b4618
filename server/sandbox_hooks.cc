// The sandbox manager's hooks into CNI and the image store (see sandbox_hooks.h).
#include "sandbox_hooks.h"

namespace berth {

PodNetworkRequest pod_network_request(const SandboxNetworkRequest& r) {
  PodNetworkRequest req{.sandbox_id = r.id,
                        .pod_name = r.name,
                        .pod_namespace = r.namespace_,
                        .pod_uid = r.uid,
                        .netns_path = r.netns_path};
  req.netns_ready = r.netns_ready;
  // The portmap plugin's protocols are lower case; the checkpoint keeps CRI's names.
  for (const auto& p : r.port_mappings)
    req.port_mappings.push_back({p.protocol == "UDP"    ? "udp"
                                 : p.protocol == "SCTP" ? "sctp"
                                                        : "tcp",
                                 p.container_port, p.host_port, p.host_ip});
  req.dns = {r.dns.servers, r.dns.searches, r.dns.options};
  req.annotations = r.annotations;
  return req;
}

Result<std::vector<std::string>> CniSandboxNetwork::setup(const SandboxNetworkRequest& request) {
  auto st = cni_.setup(pod_network_request(request));
  if (!st.ok()) return st.status();
  return st->ips;
}

Status CniSandboxNetwork::teardown(const std::string& id, const std::string& netns_path) {
  return cni_.teardown(id, netns_path);
}

std::vector<std::string> CniSandboxNetwork::recorded_ips(const std::string& id) {
  auto st = cni_.status(id);
  return st.ok() ? st->ips : std::vector<std::string>{};
}

Status CniSandboxNetwork::check(const std::string& id, const std::string& netns_path) {
  return cni_.check(id, netns_path);
}

Result<std::optional<PauseImage>> SandboxImagePolicy::pause_image() {
  if (reference_.empty()) return std::optional<PauseImage>();
  auto img = images_.find(reference_);
  // A client may have pulled it first, unpinned; kubelet's image GC must still spare it.
  if (img && !img->pinned) {
    Status s = images_.pin(img->id);
    if (s.code() == Code::not_found)
      img.reset();  // removed meanwhile: pulled (pinned) below
    else if (!s.ok())
      return s;
  }
  if (!img) {
    auto pulled = images_.pull(reference_, {}, true);
    if (!pulled.ok()) return pulled.status();
  }
  // Found and held in one step; the sandbox owns the hold from here.
  auto held = images_.acquire(reference_);
  if (!held.ok()) return held.status();
  ImageRecord record = std::move(*held).keep();
  PauseImage p{record.id, images_.snapshot_dirs(record), record.config.entrypoint};
  p.args.insert(p.args.end(), record.config.cmd.begin(), record.config.cmd.end());
  return std::optional<PauseImage>(std::move(p));
}

}  // namespace berth
