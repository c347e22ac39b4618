// One plugin's socket, as NRI uses it: the multiplexer's connection 1 carries berth's calls of the
// plugin's Plugin service (berth is the ttrpc client there), connection 2 the plugin's calls of
// berth's Runtime service (berth serves them). A reader thread takes frames off the socket and
// hands answers to the calls waiting for them; the plugin's own calls are served on a thread of
// their own, so a handler that calls back into berth never holds up the reader.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <thread>

#include "berth/mutex.h"
#include "berth/status.h"
#include "berth/ttrpc_wire.h"
#include "berth/unique_fd.h"

namespace berth::nri {

class PluginConnection {
 public:
  // A call of the Runtime service: its method and request bytes in, the response bytes out.
  using Serve = std::function<Result<std::string>(const std::string& method, const std::string& request)>;

  // Takes the connected socket; `what` names the plugin in errors until it has registered.
  // Nothing is read or served before start(): the owner first stores the connection where
  // serve() and the on_closed hook will look for it.
  PluginConnection(UniqueFd socket, std::string what, Serve serve);
  void start();
  ~PluginConnection();  // closes the socket and joins both threads
  PluginConnection(const PluginConnection&) = delete;
  PluginConnection& operator=(const PluginConnection&) = delete;

  // Calls method of nri.pkg.api.v1alpha1.Plugin with the request bytes; the answer's bytes, the
  // plugin's own error, or DEADLINE_EXCEEDED / UNAVAILABLE when it did not answer in time or the
  // connection is gone (is_fatal() tells those apart).
  Result<std::string> call(const std::string& method, const std::string& request, std::chrono::milliseconds timeout);

  // Ends the connection: calls waiting fail, the socket is shut down (the plugin reads EOF).
  void close(const std::string& why);
  bool closed() const;
  // Why the connection ended ("" while open).
  std::string close_reason() const;
  void rename(std::string what);
  // Called once, from the reader thread, when the connection ends, with why.
  void on_closed(std::function<void(const std::string& why)> f);

 private:
  struct Pending {
    bool done = false;
    Result<std::string> answer = Status(Code::unavailable, "");
  };
  void read_loop();
  void serve_loop();
  Status send(uint32_t conn, const std::string& frame);
  void fail_pending(const std::string& why) BERTH_REQUIRES(mu_);

  UniqueFd socket_;
  Serve serve_;
  mutable Mutex mu_;
  std::condition_variable cv_;
  std::string what_ BERTH_GUARDED_BY(mu_);
  std::string closed_why_ BERTH_GUARDED_BY(mu_);
  bool closed_ BERTH_GUARDED_BY(mu_) = false;
  uint32_t next_stream_ BERTH_GUARDED_BY(mu_) = 1;
  std::map<uint32_t, std::shared_ptr<Pending>> pending_ BERTH_GUARDED_BY(mu_);
  std::deque<ttrpc::Frame> requests_ BERTH_GUARDED_BY(mu_);  // connection 2's, in order
  std::function<void(const std::string&)> on_closed_ BERTH_GUARDED_BY(mu_);
  Mutex write_mu_;
  std::thread reader_, server_;
};

// A connection's failure that ends it: the plugin timed out, went away or broke the protocol.
// Anything else is the plugin's answer (an error it returned).
bool is_fatal(const Status& s);

}  // namespace berth::nri
