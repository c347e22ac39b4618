// berth-pull: the helper berthd starts for each pull (and each layer thread of one) so that
// registry I/O and layer unpacking (libcurl, libarchive, TLS, decompressors) never run in berthd:
// it reads its hello and requests from the socket on fd 0 (pull_worker_protocol.h), confines
// itself, runs each request with the in-process PullSteps and answers it. It exits when berthd
// closes the connection, and is killed with berthd (PR_SET_PDEATHSIG, set at spawn).
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <spdlog/spdlog.h>

#include "berth/image_reference.h"
#include "berth/inherited_fds.h"
#include "blob_store.h"
#include "pull_confinement.h"
#include "pull_libraries.h"
#include "pull_steps.h"
#include "pull_worker_protocol.h"

namespace proto = berth::pull_protocol;
using berth::Status;

namespace {

constexpr int kConnection = 0;

// The next whole frame; nullopt at EOF (berthd is done with this helper) or on an error.
std::optional<std::string> read_frame(std::string& buffer) {
  for (;;) {
    auto f = proto::take_frame(buffer);
    if (!f.ok()) {
      spdlog::error("{}", f.status().message());
      return std::nullopt;
    }
    if (*f) return std::move(**f);
    char chunk[65536];
    ssize_t n = ::read(kConnection, chunk, sizeof chunk);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return std::nullopt;
    buffer.append(chunk, static_cast<size_t>(n));
  }
}

bool send_frame(const std::string& payload) {
  std::string bytes = proto::frame(payload);
  for (size_t off = 0; off < bytes.size();) {
    ssize_t n = ::send(kConnection, bytes.data() + off, bytes.size() - off, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    off += static_cast<size_t>(n);
  }
  return true;
}

}  // namespace

int main() {
  // 0 is the socket to berthd, 1 and 2 its log: anything else that reached this process (and
  // would reach what libarchive or curl might exec) goes at the first exec.
  berth::mark_descriptors_cloexec_from(3);
  ::signal(SIGPIPE, SIG_IGN);
  spdlog::set_pattern("%Y-%m-%dT%H:%M:%S.%e berth-pull[%P] %l: %v");
  std::string buffer;
  auto hello_frame = read_frame(buffer);
  if (!hello_frame) return 1;
  auto hello = proto::decode_hello(*hello_frame);
  if (!hello.ok()) {
    spdlog::error("{}", hello.status().message());
    return 1;
  }
  auto ref = berth::parse_image_reference(hello->reference);
  if (!ref.ok()) {
    spdlog::error("{}", ref.status().message());
    return 1;
  }
  // Loaded before the filter: the libraries' constructors and curl's global init run unconfined
  // by nothing they need, and no registry byte has been read yet.
  auto libs = berth::pull_libraries();
  if (Status s = libs.ok() ? berth::confine_pull_helper() : libs.status(); !s.ok()) {
    // Every request gets the reason, so the pull fails with it.
    while (auto req = read_frame(buffer))
      if (!send_frame(proto::encode_reply({.status = Status(s.code(), "berth-pull: " + s.message())}))) break;
    return 1;
  }
  std::atomic<uint64_t> received{0};
  hello->registry.on_bytes = [&received](size_t n) { received += n; };
  auto store = berth::BlobStore::attach(hello->store, "p" + std::to_string(::getpid()));
  auto steps = berth::in_process_pull_steps(hello->registry, *ref, hello->credentials, *store, {});
  while (auto payload = read_frame(buffer)) {
    proto::Reply reply;
    std::string body;
    bool has_body = false;
    auto req = proto::decode_request(*payload);
    if (!req.ok()) {
      reply.status = req.status();
    } else if (req->op == proto::Request::Op::manifest) {
      auto m = steps->get_manifest(req->ref);
      if (m.ok()) {
        reply.media_type = m->media_type;
        body = std::move(m->body);
        has_body = true;
      } else {
        reply.status = m.status();
      }
    } else if (req->op == proto::Request::Op::blob) {
      berth::Descriptor d{.digest = req->digest, .size = req->size};
      reply.status = steps->fetch_blob(d, req->what);
    } else {
      reply.status = steps->unpack(req->blob_path, req->dest, req->what);
    }
    reply.registry_bytes = received.exchange(0);
    if (!send_frame(proto::encode_reply(reply))) return 1;
    if (has_body && !send_frame(body)) return 1;
  }
  return 0;
}
