// The Stream* rpcs send what their List* twin would, in batches, so no single message grows with
// the node's size.
#pragma once

#include <grpcpp/grpcpp.h>

#include <vector>

#include "berth/status.h"

namespace berth {

inline constexpr size_t kStreamBatch = 100;

// `add(batch, item)` puts one item into a response message.
template <class Response, class Item, class Add>
Status stream_in_batches(grpc::ServerWriter<Response>* writer, const std::vector<Item>& items, Add add,
                         const char* rpc) {
  for (size_t i = 0; i < items.size(); i += kStreamBatch) {
    Response batch;
    for (size_t j = i; j < std::min(items.size(), i + kStreamBatch); ++j) add(batch, items[j]);
    if (!writer->Write(batch)) return Status(Code::unavailable, std::string(rpc) + ": the client went away");
  }
  return ok_status();
}

}  // namespace berth
