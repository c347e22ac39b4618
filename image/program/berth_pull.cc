// berth-pull: the helper berthd runs pulls (and layer threads of pulls) in, so that registry I/O
// and layer unpacking (libcurl, libarchive, TLS, decompressors) never run in berthd: it reads its
// hello and requests from the socket on fd 0 (pull_worker_protocol.h), forks its fetcher,
// confines both (fetch_channel.h, pull_confinement.h), and answers each request: the registry's
// part through the fetcher, the store's and the unpacking itself. It serves one pull after another
// for as long as berthd keeps it (image/pull_helper_pool.h), exits when berthd closes the
// connection, and is killed with berthd (PR_SET_PDEATHSIG, set at spawn); the fetcher goes with it.
#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <spdlog/spdlog.h>

#include "berth/file_text.h"
#include "berth/inherited_fds.h"
#include "berth/unique_fd.h"
#include "blob_store.h"
#include "fetch_channel.h"
#include "frame_io.h"
#include "pull_confinement.h"
#include "pull_libraries.h"
#include "pull_steps.h"
#include "pull_worker_protocol.h"

namespace proto = berth::pull_protocol;
using berth::Status;

namespace {

constexpr int kConnection = 0;

std::optional<std::string> read_frame(std::string& buffer) { return proto::read_frame(kConnection, buffer); }
bool send_frame(const std::string& payload) { return proto::send_frame(kConnection, payload); }

// Every request gets `why`, so the pull fails with it.
int refuse(std::string& buffer, const Status& why) {
  while (auto req = read_frame(buffer))
    if (!send_frame(proto::encode_reply({.status = Status(why.code(), "berth-pull: " + why.message())}))) break;
  return 1;
}

// The fetcher's life, in the child: never sees berthd's socket, gives up root (the CA bundles it
// needs were read already), then serves the helper. It ends with the helper: at the helper's end
// of the socket, seen between requests and about once a second during a transfer (a parent-death
// signal would not do: the kernel clears it when the ids change, and the helper, which has no
// CAP_KILL, could not send it to another uid anyway).
[[noreturn]] void run_fetcher(int channel, const proto::Hello& hello, pid_t helper) {
  if (::prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || ::getppid() != helper) _exit(1);  // until the ids change
  int devnull = ::open("/dev/null", O_RDWR | O_CLOEXEC);
  if (devnull < 0 || ::dup2(devnull, kConnection) < 0) _exit(1);
  // libcurl alone, loaded before the confinement (see main).
  if (auto libs = berth::pull_libraries(berth::PullLibrary::curl); !libs.ok())
    _exit(berth::pull_fetch::refuse_requests(channel, libs.status()));
  if (Status s = berth::confine_fetcher(); !s.ok())
    _exit(berth::pull_fetch::refuse_requests(channel, Status(s.code(), "berth-pull fetcher: " + s.message())));
  _exit(berth::pull_fetch::serve_fetcher(channel, hello.registry));
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
  // Each process loads its library before its confinement: the libraries' constructors and
  // curl's global init run unconfined by nothing they need, and no registry byte has been read
  // yet. The fetcher maps libcurl alone, the unpacker libarchive alone.
  for (auto& [host, settings] : hello->registry.hosts)
    if (!settings.ca_file.empty())
      if (auto pem = berth::read_file_bytes(settings.ca_file); pem.ok()) settings.ca_pem = std::move(*pem);
  int pair[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) != 0)
    return refuse(buffer, berth::errno_status(errno, "socketpair for the fetcher"));
  berth::UniqueFd channel(pair[0]), theirs(pair[1]);
  const pid_t helper = ::getpid();
  const pid_t fetcher = ::fork();
  if (fetcher < 0) return refuse(buffer, berth::errno_status(errno, "fork the fetcher"));
  if (fetcher == 0) {
    channel.reset();
    run_fetcher(theirs.get(), *hello, helper);
  }
  theirs.reset();
  if (auto libs = berth::pull_libraries(berth::PullLibrary::archive); !libs.ok()) return refuse(buffer, libs.status());
  if (Status s = berth::confine_unpacker(); !s.ok()) return refuse(buffer, s);
  std::atomic<uint64_t> received{0};
  auto store = berth::BlobStore::attach(hello->store, "p" + std::to_string(helper));
  auto steps = berth::pull_fetch::fetched_pull_steps(channel.get(), *store, received);
  int rc = 0;
  while (auto payload = read_frame(buffer)) {
    proto::Reply reply;
    std::string body;
    bool has_body = false;
    auto req = proto::decode_request(*payload);
    if (!req.ok()) {
      reply.status = req.status();
    } else if (req->op == proto::Request::Op::begin) {
      reply.status = steps->begin(req->reference, req->credentials);
    } else if (req->op == proto::Request::Op::end) {
      reply.status = steps->end();
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
    } else if (req->op == proto::Request::Op::prefetch) {
      steps->prefetch({.digest = req->digest, .size = req->size});
    } else {
      reply.status = steps->unpack(req->blob_path, req->dest, req->what);
    }
    reply.registry_bytes = received.exchange(0);
    if (!send_frame(proto::encode_reply(reply)) || (has_body && !send_frame(body))) {
      rc = 1;
      break;
    }
  }
  channel.reset();  // the fetcher's end of file: it exits
  while (::waitpid(fetcher, nullptr, 0) < 0 && errno == EINTR) {
  }
  return rc;
}
