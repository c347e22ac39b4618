// The entry points from the HTTP router into the four kinds of upgraded sessions: remote command
// (exec/attach) and port forward, each over SPDY or WebSocket.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "server_context.h"
#include "spdy_session.h"
#include "token_store.h"
#include "ws_session.h"

namespace berth::streaming {

// `version`: 1 (channel.k8s.io) to 5 (v5.channel.k8s.io; over SPDY the same as v4).
void serve_command_spdy(ServerContext& ctx, std::shared_ptr<SpdyConnection> conn, PendingRequest request, int version,
                        uint64_t registry_id);
void serve_command_ws(ServerContext& ctx, std::shared_ptr<WsConnection> conn, PendingRequest request,
                      uint64_t registry_id);
void serve_forward_spdy(ServerContext& ctx, std::shared_ptr<SpdyConnection> conn, PendingRequest request,
                        uint64_t registry_id);
void serve_forward_ws(ServerContext& ctx, std::shared_ptr<WsConnection> conn, PendingRequest request,
                      std::vector<int32_t> ports, uint64_t registry_id);

}  // namespace berth::streaming
