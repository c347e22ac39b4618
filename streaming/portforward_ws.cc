// Port forwarding over WebSocket (kubelet's v4.channel.k8s.io / v4.base64 / no subprotocol): one
// channel pair per requested port, data on channel 2i and errors on 2i+1; the first message of
// each channel carries its port as two little-endian bytes. The connection closes once every
// pair is done.
#include <memory>
#include <vector>

#include "portforward.h"
#include "sessions.h"

namespace berth::streaming {

namespace {

struct ForwardGroup {
  std::vector<std::shared_ptr<ForwardPair>> pairs;
  size_t remaining = 0;
};

}  // namespace

void serve_forward_ws(ServerContext& ctx, std::shared_ptr<WsConnection> conn, PendingRequest request,
                      std::vector<int32_t> ports, uint64_t registry_id) {
  auto group = std::make_shared<ForwardGroup>();
  group->remaining = ports.size();
  std::weak_ptr<WsConnection> weak_conn = conn;
  for (size_t i = 0; i < ports.size(); ++i) {
    auto data = conn->channel(uint8_t(2 * i), true);
    auto error = conn->channel(uint8_t(2 * i + 1), false);
    std::string port_bytes{char(ports[i] & 0xff), char((ports[i] >> 8) & 0xff)};
    data->send(port_bytes, nullptr);
    error->send(port_bytes, nullptr);
    std::weak_ptr<ForwardGroup> weak_group = group;
    group->pairs.push_back(std::make_shared<ForwardPair>(ctx, conn->executor(), request.sandbox_id, ports[i], data,
                                                         error, false, [weak_group, weak_conn] {
                                                           auto g = weak_group.lock();
                                                           if (g && --g->remaining == 0)
                                                             if (auto c = weak_conn.lock()) c->close();
                                                         }));
  }
  conn->start([&ctx, registry_id, group](bool) {
    ctx.registry.remove(registry_id);
    for (auto& p : group->pairs) p->stop();
  });
  for (auto& p : group->pairs) p->start();
}

}  // namespace berth::streaming
