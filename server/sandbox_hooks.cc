// The sandbox manager's hooks into CNI and the image store (see sandbox_hooks.h).
#include "sandbox_hooks.h"

namespace berth {

namespace v1 = runtime::v1;

PodNetworkRequest pod_network_request(const SandboxNetworkRequest& r) {
  PodNetworkRequest req{.sandbox_id = r.id, .pod_name = r.name, .pod_namespace = r.namespace_, .pod_uid = r.uid,
                        .netns_path = r.netns_path};
  for (const auto& p : r.config->port_mappings())
    req.port_mappings.push_back({p.protocol() == v1::UDP ? "udp" : p.protocol() == v1::SCTP ? "sctp" : "tcp",
                                 p.container_port(), p.host_port(), p.host_ip()});
  const auto& dns = r.config->dns_config();
  req.dns = {{dns.servers().begin(), dns.servers().end()}, {dns.searches().begin(), dns.searches().end()},
             {dns.options().begin(), dns.options().end()}};
  req.annotations = {r.config->annotations().begin(), r.config->annotations().end()};
  return req;
}

SandboxNetworkHooks cni_network_hooks(CniManager& cni) {
  SandboxNetworkHooks hooks;
  hooks.setup = [&cni](const SandboxNetworkRequest& r) -> Result<std::vector<std::string>> {
    auto st = cni.setup(pod_network_request(r));
    if (!st.ok()) return st.status();
    return st->ips;
  };
  hooks.teardown = [&cni](const std::string& id, const std::string& netns) { return cni.teardown(id, netns); };
  hooks.check = [&cni](const std::string& id, const std::string& netns) { return cni.check(id, netns); };
  hooks.recorded_ips = [&cni](const std::string& id) {
    auto st = cni.status(id);
    return st.ok() ? st->ips : std::vector<std::string>{};
  };
  return hooks;
}

std::function<Result<PauseImage>()> sandbox_image_source(ImageManager& images, std::string reference) {
  return [&images, ref = std::move(reference)]() -> Result<PauseImage> {
    auto img = images.find(ref);
    // A client may have pulled it first, unpinned; kubelet's image GC must still spare it.
    if (img && !img->pinned) {
      Status s = images.pin(img->id);
      if (s.code() == Code::not_found) img.reset();  // removed meanwhile: pulled (pinned) below
      else if (!s.ok()) return s;
    }
    if (!img) {
      auto pulled = images.pull(ref, {}, true);
      if (!pulled.ok()) return pulled.status();
    }
    // Found and held in one step; the sandbox owns the hold from here.
    auto held = images.acquire(ref);
    if (!held.ok()) return held.status();
    ImageRecord record = std::move(*held).keep();
    PauseImage p{record.id, images.snapshot_dirs(record), record.config.entrypoint};
    p.args.insert(p.args.end(), record.config.cmd.begin(), record.config.cmd.end());
    return p;
  };
}

}  // namespace berth
