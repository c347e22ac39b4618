// The HTTP side of the streaming server: one request per connection, routed by path
// (/exec/<token>, /attach/<token>, /portforward/<token>); the token is consumed, then the
// connection is upgraded to SPDY/3.1 or WebSocket with the negotiated protocol, or refused.
#pragma once

#include <boost/asio/ip/tcp.hpp>

#include "server_context.h"
#include "token_store.h"

namespace berth::streaming {

void serve_http(ServerContext& ctx, TokenStore& tokens, boost::asio::ip::tcp::socket socket);

}  // namespace berth::streaming
